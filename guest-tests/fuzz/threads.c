// SPDX-License-Identifier: GPL-2.0
/*
 * Threads mode: no oracle.  Threads and forked processes hammer one
 * nonlinear VMA at once: remaps, accesses that fault and recover,
 * madvise(), mlock(), hole punching and truncation, fork and exit,
 * pieces of the VMA replaced by fresh mappings and shrunk with mremap(),
 * kernel accesses.  What is checked is what must hold whatever the
 * interleaving:
 *  - every word read is, byte by byte, zero or the byte of one file
 *    page's pattern word for that place (rfp_word(p, w, 0)): writers only
 *    ever store zeros or rewrite whole file pages with generation 0, so
 *    kernel copies, which may tear words, still leave valid bytes;
 *  - a fault is SIGSEGV (SEGV_ACCERR, SEGV_MAPERR) or SIGBUS
 *    (BUS_ADRERR, a page cut off by truncation) at the very address;
 *  - every call fails, if at all, only with an errno the churn explains;
 *  - then, quiet, a fresh layout is exact page by page (rfp_check_page).
 * A crash, a hang (the harness's timeout, qemu/run's) or a kernel splat
 * (qemu/run checks the console) is a finding too.
 */
#include "fuzz.h"

#include <pthread.h>
#include <stdarg.h>
#include <sys/uio.h>
#include <sys/wait.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define TN 32			/* pages of the VMA (a power of two: rfp_scatter_*) */
#define TFP 64			/* pages of the file */
#define NACC 3			/* accessor threads */
#define CHILD_OPS 400		/* what a forked process does before it exits */
#define RW (PROT_READ | PROT_WRITE)

struct tz {
	const struct fz_opts *o;
	int fd;
	char *m;
	int vprot;
	int stop;
	double start, end;
	char *report;		/* a shared page: the first violation's text */
	int reported;
	long violations;
	long ops[16];
};

static void violate(struct tz *t, const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&t->violations, 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&t->reported, 1, __ATOMIC_ACQ_REL))
		return;
	va_start(ap, fmt);
	vsnprintf(t->report, 4096, fmt, ap);
	va_end(ap);
}

static bool stopped(struct tz *t)
{
	return __atomic_load_n(&t->stop, __ATOMIC_RELAXED) ||
	       (t->o->seconds && !t->o->ops && fz_now() >= t->end);
}

/* Byte by byte zero or rfp_word(p, w, 0)'s byte, for one file page p. */
static bool word_ok(uint64_t v, size_t w)
{
	uint64_t p = v >> 32;

	if (!v || (p < TFP && v == rfp_word(p, w, 0)))
		return true;
	for (p = 0; p < TFP; p++) {
		uint64_t x = rfp_word(p, w, 0);
		bool ok = true;

		for (int b = 0; b < 64 && ok; b += 8) {
			uint64_t vb = (v >> b) & 0xff;

			ok = !vb || vb == ((x >> b) & 0xff);
		}
		if (ok)
			return true;
	}
	return false;
}

/* A probe's fault: the kinds the churn explains, at the address. */
static void fault_ok(struct tz *t, const char *who, int code, void *want,
		     void *got, int si)
{
	if ((code == SEGV_ACCERR || code == SEGV_MAPERR ||
	     (code == -SIGBUS && si == BUS_ADRERR)) && got == want)
		return;
	violate(t, "%s: %s si_code %d%s at %p, the access was at %p", who,
		code == -SIGBUS ? "SIGBUS" : "SIGSEGV", si,
		code == -SIGBUS ? "" : si == SEGV_PKUERR ? " (SEGV_PKUERR: a protection key)" : "",
		got, want);
}

static void check_words(struct tz *t, const char *who, const uint64_t *buf,
			size_t first_word, size_t nwords, const char *where)
{
	for (size_t k = 0; k < nwords; k++) {
		size_t w = (first_word + k) % RFP_WORDS;

		if (!word_ok(buf[k], w)) {
			violate(t, "%s: word %zu of %s reads %#llx: no file page's", who,
				w, where, (unsigned long long)buf[k]);
			return;
		}
	}
}

/* One access to the VMA; its result checked. */
static void access_one(struct tz *t, uint64_t *x)
{
	uint64_t r = rfp_rand(x), v = 0, page[RFP_WORDS];
	size_t i = r % TN, w = (r >> 8) % RFP_WORDS;
	char *p = t->m + i * PS + w * 8;
	int code;

	switch ((r >> 20) % 10) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		code = fz_load64(p, &v);
		if (code)
			fault_ok(t, "load", code, p, rfp_fault_addr, rfp_si_code);
		else if (!word_ok(v, w))
			violate(t, "load: page %zu word %zu reads %#llx: no file page's", i, w,
				(unsigned long long)v);
		break;
	case 6:
		code = fz_store64(p, 0);
		if (code)
			fault_ok(t, "store", code, p, rfp_fault_addr, rfp_si_code);
		break;
	case 7:
		code = fz_store8(p + ((r >> 40) & 7), 0);
		if (code)
			fault_ok(t, "store8", code, p + ((r >> 40) & 7), rfp_fault_addr,
				 rfp_si_code);
		break;
	default:
		p = t->m + i * PS;
		code = fz_copy(page, p, PS);
		if (code) {
			char *a = fz_copy_addr();

			/* a copy faults at some word of the page, the first it reaches */
			if (a >= p && a < p + PS && !((a - p) % 8))
				fault_ok(t, "copy", code, a, a, fz_copy_si_code());
			else
				violate(t, "copy of page %zu: fault at %p", i, (void *)a);
		} else {
			check_words(t, "copy", page, 0, RFP_WORDS, "a page");
		}
		break;
	}
}

struct worker {
	pthread_t th;
	struct tz *t;
	int id;
	uint64_t x;
};

static void *accessor(void *arg)
{
	struct worker *wk = arg;
	struct tz *t = wk->t;

	while (!stopped(t)) {
		access_one(t, &wk->x);
		t->ops[wk->id]++;
	}
	return NULL;
}

static int pick_prot(uint64_t r)
{
	return rfp_prots[r % 8];
}

/* One remap; returns false on an error nothing here explains. */
static void remap_one(struct tz *t, uint64_t *x, const char *who)
{
	uint64_t r = rfp_rand(x);
	size_t s = r % TN, k = 1 + (r >> 8) % 4;
	unsigned long pgoff = (r >> 16) % (TFP + 4);	/* a few past EOF */
	bool legacy = !((r >> 32) % 10);
	int prot = legacy ? 0 : pick_prot(r >> 36);
	int flags = (legacy ? 0 : MAP_CHGPROT) | ((r >> 40) & 1 ? MAP_NONBLOCK : 0);

	if (s + k > TN)
		k = TN - s;
	if (!((r >> 44) % 8))
		pgoff = s;			/* linear */
	if (rfp(t->m + s * PS, k * PS, prot, pgoff, flags) && errno != EINVAL)
		violate(t, "%s: remap_file_pages(page %zu, %zu pages, %s, %#lx, %#x): %s",
			who, s, k, fz_prot_str(prot), pgoff, flags, strerror(errno));
}

static void *remapper(void *arg)
{
	struct worker *wk = arg;
	struct tz *t = wk->t;

	for (long n = 0; t->o->ops ? n < t->o->ops : !stopped(t); n++) {
		remap_one(t, &wk->x, "remapper");
		t->ops[wk->id]++;
	}
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *madviser(void *arg)
{
	static const int advs[] = {
		MADV_DONTNEED, MADV_DONTNEED, MADV_PAGEOUT, MADV_COLD, MADV_WILLNEED,
		MADV_POPULATE_READ, MADV_POPULATE_WRITE,
	};
	struct worker *wk = arg;
	struct tz *t = wk->t;

	while (!stopped(t)) {
		uint64_t r = rfp_rand(&wk->x);
		size_t s = r % TN, k = 1 + (r >> 8) % 8;
		char *p = t->m + s * PS;
		int what = (r >> 16) % 10, ret;

		if (s + k > TN)
			k = TN - s;
		if (what < 7)
			ret = madvise(p, k * PS, advs[what]);
		else if (what == 7)
			ret = mlock(p, k * PS);
		else if (what == 8)
			ret = munlock(p, k * PS);
		else
			ret = syscall(SYS_mlock2, p, k * PS, MLOCK_ONFAULT);
		if (ret && errno != EINVAL && errno != ENOMEM && errno != EFAULT &&
		    errno != EAGAIN)
			violate(t, "madviser: call %d on pages %zu-%zu: %s", what, s,
				s + k - 1, strerror(errno));
		t->ops[wk->id]++;
	}
	return NULL;
}

static void *filer(void *arg)
{
	uint64_t page[RFP_WORDS];
	struct worker *wk = arg;
	struct tz *t = wk->t;

	while (!stopped(t)) {
		uint64_t r = rfp_rand(&wk->x);
		unsigned long p = r % TFP, k = 1 + (r >> 8) % 4;
		int ret = 0;

		switch ((r >> 16) % 8) {
		case 0: case 1:
			ret = fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(off_t)(p * PS), (off_t)(k * PS));
			break;
		case 2:
			/* cut the tail off for a moment, then grow back (zeros) */
			ret = ftruncate(t->fd, (off_t)(p * PS));
			sched_yield();
			ret |= ftruncate(t->fd, (off_t)(TFP * PS));
			break;
		case 3:
			ret = rfp_write_str("/proc/self/clear_refs", "4");
			ret = 0;	/* an optional knob */
			break;
		default:
			for (unsigned long j = p; j < p + k && j < TFP && !ret; j++) {
				rfp_pattern(page, j, 0);
				if (pwrite(t->fd, page, PS, (off_t)(j * PS)) != (ssize_t)PS)
					ret = -1;
			}
			break;
		}
		if (ret)
			violate(t, "filer: %s", strerror(errno));
		t->ops[wk->id]++;
	}
	/* whole again for the quiet pass */
	if (ftruncate(t->fd, (off_t)(TFP * PS)))
		violate(t, "filer: ftruncate: %s", strerror(errno));
	return NULL;
}

/*
 * Pieces of the VMA replaced in place by a fresh linear mapping (never a
 * hole another thread's mmap() could take), shrunk by mremap() and mapped
 * back at once, or mprotect()ed (EACCES while nonlinear).
 */
static void *vma_churner(void *arg)
{
	struct worker *wk = arg;
	struct tz *t = wk->t;

	while (!stopped(t)) {
		uint64_t r = rfp_rand(&wk->x);
		size_t s = r % TN, k = 1 + (r >> 8) % 4, j;
		char *p = t->m + s * PS;
		void *got;
		int prot;

		if (s + k > TN)
			k = TN - s;
		switch ((r >> 16) % 4) {
		case 0:
		case 1:
			if (mmap(p, k * PS, t->vprot, MAP_SHARED | MAP_FIXED, t->fd,
				 (off_t)(s * PS)) != p)
				violate(t, "churner: mmap over pages %zu-%zu: %s", s, s + k - 1,
					strerror(errno));
			break;
		case 2:
			if (k < 2)
				break;
			j = 1 + (r >> 24) % (k - 1);
			got = mremap(p, k * PS, j * PS, 0);
			if (got == MAP_FAILED && errno != EFAULT)
				violate(t, "churner: mremap shrink: %s", strerror(errno));
			got = mmap(p + j * PS, (k - j) * PS, t->vprot,
				   MAP_SHARED | MAP_FIXED_NOREPLACE, t->fd, (off_t)((s + j) * PS));
			if (got != p + j * PS && errno != EEXIST)
				violate(t, "churner: mmap back: %s", strerror(errno));
			if (got == MAP_FAILED && errno == EEXIST &&
			    mmap(p + j * PS, (k - j) * PS, t->vprot, MAP_SHARED | MAP_FIXED,
				 t->fd, (off_t)((s + j) * PS)) == MAP_FAILED)
				violate(t, "churner: mmap back: %s", strerror(errno));
			break;
		default:
			/*
			 * Never PROT_EXEC alone: x86 makes it execute-only
			 * with a protection key, whose reads fault with
			 * SEGV_PKUERR the stock way too, and MAP_CHGPROT
			 * refuses keyed VMAs (rfp_reject tests both).
			 */
			prot = pick_prot(r >> 32);
			if (prot == PROT_EXEC)
				prot |= PROT_READ;
			if (mprotect(p, k * PS, prot) && errno != EACCES)
				violate(t, "churner: mprotect: %s", strerror(errno));
			break;
		}
		t->ops[wk->id]++;
	}
	return NULL;
}

/*
 * A forked process: accesses and remaps of its own copy of the VMA, on
 * the shared file, then exit.  Only the forking thread lives on in it.
 */
static void *forker(void *arg)
{
	struct worker *wk = arg;
	struct tz *t = wk->t;

	while (!stopped(t)) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			violate(t, "fork: %s", strerror(errno));
			break;
		}
		if (!pid) {
			for (int n = 0; n < CHILD_OPS; n++) {
				if (n % 8 == 0)
					remap_one(t, &wk->x, "child");
				else
					access_one(t, &wk->x);
				if (n % 64 == 0)
					madvise(t->m, TN * PS, MADV_DONTNEED);
			}
			_exit(__atomic_load_n(&t->violations, __ATOMIC_RELAXED) ? 1 : 0);
		}
		rfp_rand(&wk->x);
		if (waitpid(pid, &status, 0) != pid)
			violate(t, "waitpid: %s", strerror(errno));
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			violate(t, "a forked process ended with status %#x", status);
		t->ops[wk->id]++;
	}
	return NULL;
}

/* Kernel accesses: what is read must be valid, what is written is zeros. */
static void *kernel_io(void *arg)
{
	static const uint64_t zeros[2 * RFP_WORDS];
	uint64_t buf[2 * RFP_WORDS];
	struct worker *wk = arg;
	struct tz *t = wk->t;
	int mem = open("/proc/self/mem", O_RDWR), zfd = memfd_create("zeros", 0);
	int out = memfd_create("out", 0);

	if (mem < 0 || zfd < 0 || out < 0 || ftruncate(zfd, 2 * PS)) {
		violate(t, "kernel_io: setup: %s", strerror(errno));
		return NULL;
	}
	while (!stopped(t)) {
		uint64_t r = rfp_rand(&wk->x);
		size_t i = r % TN, w = (r >> 8) % RFP_WORDS;
		size_t len = 8 * (1 + (r >> 20) % RFP_WORDS);
		char *p = t->m + i * PS + w * 8;
		ssize_t n;

		if (p + len > t->m + TN * PS)
			len = t->m + TN * PS - p;
		switch ((r >> 32) % 6) {
		case 0:
			n = rfp_vm_rw(p, buf, len, false);
			if (n > 0)
				check_words(t, "process_vm_readv", buf, w, n / 8, "a page");
			break;
		case 1:
			n = pread(mem, buf, len, (off_t)(uintptr_t)p);
			if (n > 0)
				check_words(t, "/proc/self/mem", buf, w, n / 8, "a page");
			break;
		case 2:
			n = pwrite(out, p, len, 0);
			if (n > 0 && pread(out, buf, n, 0) == n)
				check_words(t, "write()", buf, w, n / 8, "a page");
			break;
		case 3:
			n = rfp_vm_rw(p, (void *)zeros, len, true);
			break;
		case 4:
			n = pwrite(mem, zeros, len, (off_t)(uintptr_t)p);
			break;
		default:
			n = pread(zfd, p, len, 0);
			break;
		}
		if (n < 0 && errno != EFAULT && errno != EIO)
			violate(t, "kernel access %d: %s", (int)((r >> 32) % 6), strerror(errno));
		t->ops[wk->id]++;
	}
	close(mem);
	close(zfd);
	close(out);
	return NULL;
}

enum { W_REMAP, W_MADV, W_FILE, W_VMA, W_FORK, W_KERNEL, W_ACC, W_NR = W_ACC + NACC };

int fz_threads(const struct fz_opts *o, struct fz_stats *st)
{
	static void *(*const fn[W_NR])(void *) = {
		[W_REMAP] = remapper, [W_MADV] = madviser, [W_FILE] = filer,
		[W_VMA] = vma_churner, [W_FORK] = forker, [W_KERNEL] = kernel_io,
		[W_ACC ... W_NR - 1] = accessor,
	};
	static const char *const wname[W_NR] = {
		"remapper", "madviser", "filer", "vma", "forker", "kernel",
		[W_ACC ... W_NR - 1] = "accessor",
	};
	struct worker wk[W_NR];
	struct rfp_tally tally = {};
	unsigned int gen[TFP] = {};
	struct tz t = { .o = o };
	int self_mem, ret = FZ_PASS;
	long total = 0;

	fz_catch();
	t.start = fz_now();
	t.end = t.start + o->seconds;
	t.vprot = (o->seed & 3) == 3 ? PROT_NONE : RW;
	t.report = mmap(NULL, 4096, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	t.fd = rfp_memfd(TFP);
	self_mem = open("/proc/self/mem", O_RDWR);
	if (t.report == MAP_FAILED || t.fd < 0 || self_mem < 0) {
		fz_say(o, "threads: setup: %s", strerror(errno));
		return FZ_ERROR;
	}
	t.m = rfp_map_shared(t.fd, TN, t.vprot, 0);
	if (t.m == MAP_FAILED ||
	    rfp(t.m, PS, PROT_READ, TFP - 1, MAP_CHGPROT)) {
		fz_say(o, "threads: setup: %s", strerror(errno));
		return FZ_ERROR;
	}
	fz_say(o, "threads: seed %#llx, %d accessors and %d other workers on a %d-page VMA (%s), %s",
	       (unsigned long long)o->seed, NACC, W_ACC, TN, fz_prot_str(t.vprot),
	       o->ops ? "remap budget" : "time budget");
	for (int i = 0; i < W_NR; i++) {
		wk[i] = (struct worker){ .t = &t, .id = i,
					 .x = (o->seed + 1) * 0x9e3779b97f4a7c15ULL * (i + 1) | 1 };
		wk[i].th = 0;
		/* --workers: only those named (the remapper always: it keeps the budget) */
		if (o->workers && i != W_REMAP && !strstr(o->workers, wname[i]))
			continue;
		if (pthread_create(&wk[i].th, NULL, fn[i], &wk[i])) {
			__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
			fz_say(o, "threads: pthread_create: %s", strerror(errno));
			for (int j = 0; j < i; j++)
				if (wk[j].th)
					pthread_join(wk[j].th, NULL);
			return FZ_ERROR;
		}
	}
	/* progress while the budget lasts */
	for (double next = fz_now() + 30; !stopped(&t); usleep(100000)) {
		if (fz_now() < next)
			continue;
		next = fz_now() + 30;
		fz_say(o, "threads: %ld remaps, %ld forks, %ld accesses, %ld violations",
		       t.ops[W_REMAP], t.ops[W_FORK], t.ops[W_ACC], t.violations);
	}
	for (int i = 0; i < W_NR; i++)
		if (wk[i].th)
			pthread_join(wk[i].th, NULL);
	for (int i = 0; i < W_NR; i++) {
		total += t.ops[i];
		if (o->verbose)
			fz_say(o, "threads: %s %d: %ld ops", wname[i], i, t.ops[i]);
	}
	st->ops = total;
	st->remaps = t.ops[W_REMAP];
	st->forks = t.ops[W_FORK];
	st->violations = t.violations;
	if (t.violations) {
		fz_say(o, "VIOLATION: seed %#llx: %ld broken invariants; the first: %s",
		       (unsigned long long)o->seed, t.violations, t.report);
		ret = FZ_FOUND;
	}

	/* quiet: a fresh layout over fresh contents must be exact */
	rfp_catch();	/* rfp_check_page() probes with rfp.c's own handler */
	if (munmap(t.m, TN * PS) || rfp_pattern_fd(t.fd, 0, TFP, 0) ||
	    mmap(t.m, TN * PS, t.vprot, MAP_SHARED | MAP_FIXED, t.fd, 0) != t.m) {
		fz_say(o, "threads: quiet pass setup: %s", strerror(errno));
		return FZ_ERROR;
	}
	for (size_t i = 0; i < TN; i++)
		if (rfp(t.m + i * PS, PS, rfp_scatter_prot(i), rfp_scatter_pgoff(i, TN),
			MAP_CHGPROT | (i & 1 ? MAP_NONBLOCK : 0)))
			rfp_note(&tally, io_errors, "quiet: remap of page %zu: %s", i,
				 strerror(errno));
	for (size_t i = 0; i < TN; i++)
		rfp_check_page(&tally, t.m + i * PS, i, rfp_scatter_pgoff(i, TN),
			       rfp_scatter_prot(i), &gen[rfp_scatter_pgoff(i, TN)], true,
			       t.fd, self_mem);
	if (rfp_tally_problems(&tally)) {
		fz_say(o, "VIOLATION: seed %#llx: after the storm a fresh layout is wrong: "
		       "%lu problems, the first: %s", (unsigned long long)o->seed,
		       rfp_tally_problems(&tally), tally.first);
		ret = FZ_FOUND;
	}
	fz_say(o, "threads: %ld ops (%ld remaps, %ld forks) in %.0f s, %ld violations, "
	       "quiet pass %s", total, st->remaps, st->forks, fz_now() - t.start, t.violations,
	       rfp_tally_problems(&tally) ? "wrong" : "exact");
	fz_catch();
	munmap(t.m, TN * PS);
	munmap(t.report, 4096);
	close(t.fd);
	close(self_mem);
	return ret;
}
