// SPDX-License-Identifier: GPL-2.0
/*
 * Second part, truncation: ftruncate() and hole punching reach the pages
 * of a converted VMA whatever address maps them: beyond a new EOF an
 * access gets SIGBUS (BUS_ADRERR), present page or not; a punched hole
 * reads zeros; protections stay.  Then a bounded stress run of all of it
 * at once (remaps, faults, pageout, MADV_DONTNEED, fork, shrink and
 * grow), checked by a quiet pass and by Shmem and SwapFree coming back.
 * The runner fails the boot on a console splat ("Bad page cache", a
 * WARN, an Oops).
 */
#include "rfp.h"

#include <pthread.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define RW (PROT_READ | PROT_WRITE)

#define FPAGES 64	/* the memfd */
#define MPAGES 32	/* the VMA */
#define NEW_EOF 40	/* ftruncate() down to this many pages */
#define HOLE_FIRST 16	/* the punched hole: file pages [16, 48) */
#define HOLE_PAGES 32

/* Page i maps file page (19 i + 7) mod 64: distinct, all over the file. */
static size_t tr_pgoff(size_t i)
{
	return (i * 19 + 7) % FPAGES;
}

/*
 * All 8 protections; a page that ends up beyond the new EOF gets a
 * readable one, since which of SIGSEGV or SIGBUS a PROT_NONE page beyond
 * EOF should give is not specified.  Page 0 has PROT_READ.
 */
static int tr_prot(size_t i)
{
	int prot = rfp_prots[(i + 1) % 8];

	if (tr_pgoff(i) >= NEW_EOF && prot == PROT_NONE)
		prot = PROT_READ;
	return prot;
}

FIXTURE(tr) {
	struct rfp_area a;
};

FIXTURE_SETUP(tr)
{
	ASSERT_EQ(0, rfp_area_open(&self->a, MPAGES, FPAGES, FPAGES, RW));
	rfp_catch();
}

FIXTURE_TEARDOWN(tr)
{
	rfp_area_close(&self->a);
}

/*
 * Convert to the layout (which populates every page), then drop the
 * entries of the odd pages with MADV_DONTNEED: even pages present, odd
 * ones not, as pagemap shows.  false if SKIP()ped.
 */
static bool build(struct __test_metadata *_metadata, FIXTURE_DATA(tr) *self)
{
	uint64_t pm[MPAGES];

	RFP_FIRST_CHGPROT(return false, self->a.m, PS, tr_prot(0), tr_pgoff(0));
	for (size_t i = 1; i < MPAGES; i++) {
		ASSERT_EQ(0, rfp(self->a.m + i * PS, PS, tr_prot(i), tr_pgoff(i),
				 MAP_CHGPROT));
	}
	for (size_t i = 0; i < MPAGES; i++) {
		unsigned char v;

		ASSERT_EQ(1, pread(self->a.self_mem, &v, 1,
				   (off_t)(uintptr_t)(self->a.m + i * PS)));
		if (i & 1) {
			ASSERT_EQ(0, madvise(self->a.m + i * PS, PS, MADV_DONTNEED));
		}
	}
	ASSERT_EQ(0, rfp_pagemap(self->a.m, MPAGES, pm));
	for (size_t i = 0; i < MPAGES; i++) {
		ASSERT_EQ(!(i & 1), !!(pm[i] & RFP_PM_PRESENT)) TH_LOG("page %zu", i);
	}
	return true;
}

/*
 * ftruncate() below file pages mapped (present or not) at nonlinear
 * addresses: each access to them, read or write, is SIGBUS BUS_ADRERR at
 * the address; the pages below EOF are intact.  Grown back, the file
 * pages read zeros and keep their protections.
 */
TEST_F(tr, truncate)
{
	struct rfp_tally t = {};
	long beyond = 0, sigbus_ok = 0, wrong = 0;
	char what[160] = "";

	if (!build(_metadata, self))
		return;
	ASSERT_EQ(0, ftruncate(self->a.fd, NEW_EOF * PS));
	for (size_t i = 0; i < MPAGES; i++) {
		char *a = self->a.m + i * PS;
		size_t pgoff = tr_pgoff(i);
		unsigned char v;
		int code;

		if (pgoff < NEW_EOF) {
			rfp_check_page(&t, a, i, pgoff, tr_prot(i), &self->a.gen[pgoff],
				       false, self->a.fd, self->a.self_mem);
			continue;
		}
		beyond++;
		for (int k = 0; k < 2; k++) {
			bool write = k == 1;
			char *p = a + (write ? RFP_OFF_W : RFP_OFF_R);

			if (write && !rfp_allows(tr_prot(i), RFP_WRITE))
				continue;
			rfp_si_code = 0;
			code = write ? rfp_try_store(p, 0) : rfp_try_load(p, &v);
			if (code == -SIGBUS && rfp_si_code == BUS_ADRERR &&
			    rfp_fault_addr == p) {
				sigbus_ok++;
			} else if (!wrong++) {
				snprintf(what, sizeof(what),
					 "page %zu (pgoff %zu, %s): %s: code %d si_code %d at %p, not %p",
					 i, pgoff, i & 1 ? "not present" : "present",
					 write ? "write" : "read", code, rfp_si_code,
					 rfp_fault_addr, p);
			}
		}
	}
	TH_LOG("%ld pages beyond EOF: %ld SIGBUS BUS_ADRERR as expected", beyond, sigbus_ok);
	EXPECT_LT(8, beyond);
	EXPECT_EQ(0, wrong) TH_LOG("%s", what);
	RFP_EXPECT_CLEAN(&t, "below EOF");

	/* grown back: zeros beyond the old EOF, protections as they were */
	ASSERT_EQ(0, ftruncate(self->a.fd, FPAGES * PS));
	for (size_t pgoff = NEW_EOF; pgoff < FPAGES; pgoff++)
		self->a.gen[pgoff] = RFP_ZERO;
	memset(&t, 0, sizeof(t));
	for (size_t i = 0; i < MPAGES; i++)
		rfp_check_page(&t, self->a.m + i * PS, i, tr_pgoff(i), tr_prot(i),
			       &self->a.gen[tr_pgoff(i)], true, self->a.fd, self->a.self_mem);
	RFP_EXPECT_CLEAN(&t, "after growing back");
}

/*
 * fallocate(PUNCH_HOLE | KEEP_SIZE) over file pages mapped at nonlinear
 * addresses, present or not: they read zeros (through /proc/self/mem
 * where PROT_NONE), writes to read-only ones still get SEGV_ACCERR,
 * writable ones take writes to the file; the others keep their data.
 */
TEST_F(tr, punch_hole)
{
	struct rfp_tally t = {};
	long in_hole = 0;
	struct stat st;

	if (!build(_metadata, self))
		return;
	ASSERT_EQ(0, fallocate(self->a.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       HOLE_FIRST * PS, HOLE_PAGES * PS));
	ASSERT_EQ(0, fstat(self->a.fd, &st));
	EXPECT_EQ((off_t)(FPAGES * PS), st.st_size);
	for (size_t pgoff = HOLE_FIRST; pgoff < HOLE_FIRST + HOLE_PAGES; pgoff++)
		self->a.gen[pgoff] = RFP_ZERO;
	for (size_t i = 0; i < MPAGES; i++) {
		size_t pgoff = tr_pgoff(i);

		in_hole += self->a.gen[pgoff] == RFP_ZERO;
		rfp_check_page(&t, self->a.m + i * PS, i, pgoff, tr_prot(i),
			       &self->a.gen[pgoff], true, self->a.fd, self->a.self_mem);
	}
	EXPECT_LT(8, in_hole);
	RFP_EXPECT_CLEAN(&t, "after punching the hole");
	/* and once more, now that the hole's pages were written */
	memset(&t, 0, sizeof(t));
	for (size_t i = 0; i < MPAGES; i++)
		rfp_check_page(&t, self->a.m + i * PS, i, tr_pgoff(i), tr_prot(i),
			       &self->a.gen[tr_pgoff(i)], false, self->a.fd, self->a.self_mem);
	RFP_EXPECT_CLEAN(&t, "second pass");
}

/* --- stress --- */

#define S_FPAGES 2048		/* 8 MiB file */
#define S_MPAGES 1024		/* 4 MiB VMA */
#define S_TAIL 1792		/* the shrink and grow cut the file here */
#define S_SCRATCH (RFP_WORDS - 1)	/* the word writes to churn pages go to */
#define S_RUN_MS 8000
#define S_ACCESSORS 2
/*
 * Tolerances for the leak check, justified: Shmem is an exact page count,
 * but /proc/meminfo sums the global counters without the per-CPU vmstat
 * deltas (at most the stat threshold, under 125 pages, per CPU: < 1 MiB
 * with 2 CPUs).  SwapFree counts slots parked in the per-CPU swap slot
 * caches as used: up to 64 handed out ahead and 64 freed but not yet
 * returned per CPU, 1 MiB with 2 CPUs; 1 MiB more for swap-cache pages
 * whose slots could not be freed at once (locked at that moment), which
 * reclaim frees later.  The file is 8 MiB, the VMA 4 MiB, so leaking the
 * pages of the VMA, or their swap, is caught.
 */
#define SHMEM_TOL_KB 1024L
#define SWAP_TOL_KB 2048L

/* Stable pages: every 4th, fixed below S_TAIL; the others churn. */
static bool s_stable(size_t i)
{
	return i % 4 == 0;
}

static size_t s_stable_pgoff(size_t i)
{
	return (i / 4 * 11 + 3) % S_TAIL;
}

static int s_stable_prot(size_t i)
{
	return rfp_prots[(i / 4 + 1) % 8];
}

/* The layout of the quiet pass at the end. */
static size_t s_final_pgoff(size_t i)
{
	return (i * 13 + 5) % S_FPAGES;
}

static int s_final_prot(size_t i)
{
	return rfp_prots[(i * 3 + 1) % 8];
}

static char *s_map;
static int s_fd, s_stop;
static unsigned long s_seq;	/* odd while the tail is cut or being refilled */

static bool stopped(void)
{
	return __atomic_load_n(&s_stop, __ATOMIC_RELAXED);
}

static unsigned long seq(void)
{
	return __atomic_load_n(&s_seq, __ATOMIC_ACQUIRE);
}

struct acc {
	pthread_t th;
	uint64_t seed;
	unsigned long ops, denied, sigbus, racy;	/* what happened */
	unsigned long bad;				/* what must not */
	char first[200];
};

static void acc_bad(struct acc *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void acc_bad(struct acc *st, const char *fmt, ...)
{
	va_list ap;

	if (!st->bad++) {
		va_start(ap, fmt);
		vsnprintf(st->first, sizeof(st->first), fmt, ap);
		va_end(ap);
	}
}

/* A stable page: exactly as its pgoff and prot say, always. */
static void acc_stable(struct acc *st, size_t i, size_t w, bool write)
{
	char *p = s_map + i * PS + w * 8;
	size_t pgoff = s_stable_pgoff(i);
	uint64_t want = rfp_word(pgoff, w, 0), v = want;
	int prot = s_stable_prot(i);
	bool ok = rfp_allows(prot, write ? RFP_WRITE : RFP_READ);
	int code = write ? rfp_try_store64(p, want) : rfp_try_load64(p, &v);

	if (ok && code)
		acc_bad(st, "stable page %zu %s: code %d", i, write ? "write" : "read", code);
	else if (ok && v != want)
		acc_bad(st, "stable page %zu word %zu: %#llx, not %#llx", i, w,
			(unsigned long long)v, (unsigned long long)want);
	else if (!ok && !code)
		acc_bad(st, "stable page %zu prot %d: %s allowed", i, prot,
			write ? "write" : "read");
	else if (!ok && (code != SEGV_ACCERR || rfp_fault_addr != p))
		acc_bad(st, "stable page %zu: code %d at %p, not SEGV_ACCERR at %p", i,
			code, rfp_fault_addr, p);
	else if (!ok)
		st->denied++;
}

/*
 * A churn page: any pgoff and prot.  A fault must be SEGV_ACCERR at the
 * address, or SIGBUS BUS_ADRERR while the tail was cut; a word read must
 * be the word of some file page at its place, or, while the tail was cut
 * or refilled, anything (zeros, a torn word).
 */
static void acc_churn(struct acc *st, size_t i, size_t w, bool write, uint64_t r)
{
	char *p = s_map + i * PS + (write ? S_SCRATCH : w) * 8;
	unsigned long s1 = seq(), s2;
	uint64_t v = 0;
	int code = write ? rfp_try_store64(p, r) : rfp_try_load64(p, &v);
	bool window;

	s2 = seq();
	window = (s1 & 1) || s1 != s2;
	if (code == SEGV_ACCERR && rfp_fault_addr == p) {
		st->denied++;
	} else if (code == -SIGBUS && rfp_si_code == BUS_ADRERR &&
		   rfp_fault_addr == p && window) {
		st->sigbus++;
	} else if (code) {
		acc_bad(st, "churn page %zu %s: code %d si_code %d at %p (%p)%s", i,
			write ? "write" : "read", code, rfp_si_code, rfp_fault_addr, p,
			window ? "" : ", not while the tail was cut");
	} else if (!write && !((v >> 32) < S_FPAGES && v == rfp_word(v >> 32, w, 0))) {
		if (window)
			st->racy++;
		else
			acc_bad(st, "churn page %zu word %zu: %#llx", i, w,
				(unsigned long long)v);
	}
}

static void *accessor(void *arg)
{
	struct acc *st = arg;
	uint64_t x = st->seed;

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);
		size_t i = r % S_MPAGES, w = (r >> 16) % S_SCRATCH;
		bool write = (r >> 40) & 1;

		if (s_stable(i))
			acc_stable(st, i, w, write);
		else
			acc_churn(st, i, w, write, r);
		st->ops++;
	}
	return NULL;
}

struct worker {
	pthread_t th;
	unsigned long ops, errors, other;
	int first_errno;
	char first[160];
};

static void w_err(struct worker *st, const char *what, int err)
{
	if (!st->errors++) {
		st->first_errno = err;
		snprintf(st->first, sizeof(st->first), "%s: %s", what, strerror(err));
	}
}

/* Remaps churn pages to random pgoffs and prots; re-applies stable ones. */
static void *remapper(void *arg)
{
	struct worker *st = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);
		size_t i = r % S_MPAGES;
		unsigned long s1 = seq();
		size_t pgoff;
		int prot, flags = MAP_CHGPROT | ((r >> 60) & 1 ? MAP_NONBLOCK : 0);

		if (s_stable(i)) {
			if ((r >> 32) % 8)
				continue;
			pgoff = s_stable_pgoff(i);
			prot = s_stable_prot(i);
		} else {
			pgoff = (r >> 20) % S_FPAGES;
			prot = rfp_prots[(r >> 12) % 8];
		}
		if (rfp(s_map + i * PS, PS, prot, pgoff, flags)) {
			int err = errno;

			/* populating a page beyond a cut EOF may fail */
			if (pgoff >= S_TAIL && ((s1 & 1) || s1 != seq()))
				st->other++;
			else
				w_err(st, "remap_file_pages", err);
		}
		st->ops++;
	}
	return NULL;
}

/* MADV_PAGEOUT and MADV_DONTNEED of random ranges. */
static void *reclaimer(void *arg)
{
	struct worker *st = arg;
	uint64_t x = 0xd1b54a32d192ed03ULL;
	struct timespec pause = { 0, 10 * 1000000L };

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);
		size_t first = r % S_MPAGES, n = 64 + (r >> 16) % 512;
		int advice = (r >> 40) & 1 ? MADV_PAGEOUT : MADV_DONTNEED;

		if (first + n > S_MPAGES)
			n = S_MPAGES - first;
		if (madvise(s_map + first * PS, n * PS, advice))
			w_err(st, advice == MADV_PAGEOUT ? "MADV_PAGEOUT" : "MADV_DONTNEED",
			      errno);
		st->ops++;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * In a forked child: every readable stable page reads whole (but for the
 * scratch word) as its file page, every PROT_NONE one gives SEGV_ACCERR.
 * Exit status 0 or 1.
 */
static void __attribute__((noreturn)) fork_child(uint64_t r)
{
	for (int k = 0; k < 32; k++) {
		size_t i = (r + k * 97) % (S_MPAGES / 4) * 4, bad = 1;
		char *p = s_map + i * PS;
		int code;

		if (rfp_allows(s_stable_prot(i), RFP_READ)) {
			/* all words but the scratch one, which churn writes */
			code = rfp_try_check_words(p, s_stable_pgoff(i), 0,
						   S_SCRATCH, &bad);
			if (code || bad)
				_exit(1);
		} else {
			code = rfp_try(p + 8, RFP_READ);
			if (code != SEGV_ACCERR || rfp_fault_addr != p + 8)
				_exit(1);
		}
	}
	_exit(0);
}

static void *forker(void *arg)
{
	struct worker *st = arg;
	uint64_t x = 0x94d049bb133111ebULL;
	struct timespec pause = { 0, 200 * 1000000L };

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);
		int status;
		pid_t pid = fork();

		if (pid == 0)
			fork_child(r);
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			w_err(st, "fork/wait", errno);
		else if (status)
			w_err(st, "child found a stable page wrong", EIO);
		st->ops++;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* Cuts the file at S_TAIL and grows it back, refilling the tail. */
static void *truncator(void *arg)
{
	struct worker *st = arg;
	struct timespec cut = { 0, 5 * 1000000L }, pause = { 0, 150 * 1000000L };

	while (!stopped()) {
		__atomic_add_fetch(&s_seq, 1, __ATOMIC_ACQ_REL);
		if (ftruncate(s_fd, S_TAIL * PS))
			w_err(st, "ftruncate down", errno);
		nanosleep(&cut, NULL);
		if (ftruncate(s_fd, S_FPAGES * PS))
			w_err(st, "ftruncate up", errno);
		if (rfp_pattern_fd(s_fd, S_TAIL, S_FPAGES - S_TAIL, 0))
			w_err(st, "refill", errno);
		__atomic_add_fetch(&s_seq, 1, __ATOMIC_ACQ_REL);
		st->ops++;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void log_worker(struct __test_metadata *_metadata, const char *name,
		       struct worker *w)
{
	TH_LOG("%s: %lu done, %lu errors%s%s", name, w->ops, w->errors,
	       w->errors ? "; first: " : "", w->errors ? w->first : "");
	EXPECT_EQ(0, w->errors) TH_LOG("%s: %s", name, w->first);
	EXPECT_LT(0, w->ops) TH_LOG("%s never ran", name);
}

/* Only for TEST_F_TIMEOUT(): plain TEST() has no timeout of its own in 6.1. */
FIXTURE(st) {
	int unused;
};

FIXTURE_SETUP(st)
{
}

FIXTURE_TEARDOWN(st)
{
}

/*
 * Everything at once for S_RUN_MS, then a quiet pass over a fresh layout
 * and the leak check.
 */
TEST_F_TIMEOUT(st, stress, 120)
{
	struct timespec run = { S_RUN_MS / 1000, S_RUN_MS % 1000 * 1000000L };
	struct acc acc[S_ACCESSORS] = {};
	struct worker rem = {}, rec = {}, frk = {}, trn = {};
	unsigned long ops = 0, denied = 0, sigbus = 0, racy = 0;
	long shmem0, swap0, shmem1, swap1, swap_out;
	struct rfp_tally t = {};
	struct rfp_area a;

	shmem0 = rfp_meminfo_kb("Shmem");
	swap0 = rfp_meminfo_kb("SwapFree");
	ASSERT_LE(0, shmem0);
	ASSERT_LE(0, swap0);
	ASSERT_EQ(0, rfp_area_open(&a, S_MPAGES, S_FPAGES, S_FPAGES, RW));
	s_fd = a.fd;
	s_map = a.m;
	rfp_catch();
	RFP_FIRST_CHGPROT(return, s_map, PS, s_stable_prot(0), s_stable_pgoff(0));
	for (size_t i = 1; i < S_MPAGES; i++) {
		ASSERT_EQ(0, rfp(s_map + i * PS, PS,
				 s_stable(i) ? s_stable_prot(i) : RW,
				 s_stable(i) ? s_stable_pgoff(i) : i, MAP_CHGPROT));
	}

	for (int k = 0; k < S_ACCESSORS; k++) {
		acc[k].seed = 0x2545f4914f6cdd1dULL * (k + 1);
		ASSERT_EQ(0, pthread_create(&acc[k].th, NULL, accessor, &acc[k]));
	}
	ASSERT_EQ(0, pthread_create(&rem.th, NULL, remapper, &rem));
	ASSERT_EQ(0, pthread_create(&rec.th, NULL, reclaimer, &rec));
	ASSERT_EQ(0, pthread_create(&frk.th, NULL, forker, &frk));
	ASSERT_EQ(0, pthread_create(&trn.th, NULL, truncator, &trn));
	nanosleep(&run, NULL);
	__atomic_store_n(&s_stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(rem.th, NULL));
	ASSERT_EQ(0, pthread_join(rec.th, NULL));
	ASSERT_EQ(0, pthread_join(frk.th, NULL));
	ASSERT_EQ(0, pthread_join(trn.th, NULL));
	for (int k = 0; k < S_ACCESSORS; k++) {
		ASSERT_EQ(0, pthread_join(acc[k].th, NULL));
		ops += acc[k].ops;
		denied += acc[k].denied;
		sigbus += acc[k].sigbus;
		racy += acc[k].racy;
		EXPECT_EQ(0, acc[k].bad) TH_LOG("accessor %d: %lu wrong; first: %s", k,
						acc[k].bad, acc[k].first);
	}
	TH_LOG("accessors: %lu accesses, %lu SEGV_ACCERR, %lu SIGBUS and %lu odd words "
	       "while the tail was cut", ops, denied, sigbus, racy);
	TH_LOG("remapper: %lu remaps, %lu failed beyond a cut EOF", rem.ops, rem.other);
	log_worker(_metadata, "remapper", &rem);
	log_worker(_metadata, "reclaimer", &rec);
	log_worker(_metadata, "forker", &frk);
	log_worker(_metadata, "truncator", &trn);
	EXPECT_LT(0, ops);
	EXPECT_LT(0, denied);

	/* quiet: the whole file rewritten, every page remapped to a known place */
	ASSERT_EQ(0, rfp_pattern_fd(s_fd, 0, S_FPAGES, 0));
	for (size_t i = 0; i < S_MPAGES; i++) {
		ASSERT_EQ(0, rfp(s_map + i * PS, PS, s_final_prot(i), s_final_pgoff(i),
				 MAP_CHGPROT));
	}
	for (size_t i = 0; i < S_MPAGES; i++)
		rfp_check_page(&t, s_map + i * PS, i, s_final_pgoff(i), s_final_prot(i),
			       &a.gen[s_final_pgoff(i)], true, s_fd, a.self_mem);
	RFP_EXPECT_CLEAN(&t, "quiet pass");

	/* some of it to swap, then all of it gone */
	swap1 = rfp_meminfo_kb("SwapFree");
	EXPECT_EQ(0, madvise(s_map, S_MPAGES * PS, MADV_PAGEOUT));
	swap_out = swap1 - rfp_meminfo_kb("SwapFree");
	/* the mapping and the memfd gone (and /proc/self/mem closed) */
	EXPECT_EQ(0, rfp_area_close(&a));
	shmem1 = rfp_meminfo_kb("Shmem");
	swap1 = rfp_meminfo_kb("SwapFree");
	TH_LOG("Shmem %ld -> %ld kB, SwapFree %ld -> %ld kB (%ld kB paged out at the end)",
	       shmem0, shmem1, swap0, swap1, swap_out);
	EXPECT_LE((long)(S_MPAGES * PS / 1024 / 2), swap_out);
	EXPECT_GE(SHMEM_TOL_KB, labs(shmem1 - shmem0));
	EXPECT_GE(SWAP_TOL_KB, labs(swap1 - swap0));
}

TEST_HARNESS_MAIN
