// SPDX-License-Identifier: GPL-2.0
/*
 * The library of the remap_file_pages(MAP_CHGPROT) guest tests: what
 * rfp.h declares.  Compiled once and linked into every test binary.
 */
#define RFP_LIBRARY
#include "rfp.h"

#include <sys/mount.h>
#include <sys/uio.h>

long rfp(void *start, size_t size, int prot, unsigned long pgoff, int flags)
{
	return syscall(SYS_remap_file_pages, start, size, prot, pgoff, flags);
}

const char *rfp_expect_mode(void)
{
	const char *e = getenv("EXPECT_MANYPROTS");

	return e ? e : "(unset)";
}

bool manyprots_expected(void)
{
	return !strcmp(rfp_expect_mode(), "on");
}

/* --- probes --- */

static __thread sigjmp_buf rfp_jmp;
static __thread volatile int rfp_code;
__thread void *volatile rfp_fault_addr;
__thread volatile int rfp_si_code;

static void rfp_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	rfp_code = sig == SIGBUS ? -SIGBUS : si->si_code;
	rfp_si_code = si->si_code;
	rfp_fault_addr = si->si_addr;
	siglongjmp(rfp_jmp, 1);
}

void rfp_catch(void)
{
	struct sigaction sa = { .sa_sigaction = rfp_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * Each probe arms its own sigsetjmp(): the handler's siglongjmp() must
 * land in a frame that is still live, the probing function's.
 */
#define RFP_PROBE_BEGIN() do {						\
	rfp_code = 0;							\
	rfp_fault_addr = NULL;						\
	if (sigsetjmp(rfp_jmp, 1))					\
		return rfp_code;					\
} while (0)

int rfp_try(void *p, enum rfp_access a)
{
	RFP_PROBE_BEGIN();
	switch (a) {
	case RFP_READ:
		(void)*(volatile char *)p;
		break;
	case RFP_WRITE:
		*(volatile char *)p = *(volatile char *)&rfp_code; /* no read of p */
		break;
	case RFP_EXEC:
		((void (*)(void))p)();
		break;
	}
	return 0;
}

int rfp_try_load(const void *p, unsigned char *v)
{
	RFP_PROBE_BEGIN();
	*v = *(const volatile unsigned char *)p;
	return 0;
}

int rfp_try_store(void *p, unsigned char v)
{
	RFP_PROBE_BEGIN();
	*(volatile unsigned char *)p = v;
	return 0;
}

int rfp_try_load64(const void *p, uint64_t *v)
{
	RFP_PROBE_BEGIN();
	*v = *(const volatile uint64_t *)p;
	return 0;
}

int rfp_try_store64(void *p, uint64_t v)
{
	RFP_PROBE_BEGIN();
	*(volatile uint64_t *)p = v;
	return 0;
}

bool rfp_allows(int prot, enum rfp_access a)
{
	switch (a) {
	case RFP_READ:
		return prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
	case RFP_WRITE:
		return prot & PROT_WRITE;
	case RFP_EXEC:
		return prot & PROT_EXEC;
	}
	return false;
}

bool rfp_allows_here(int prot, enum rfp_access a)
{
	const char *lvl = getenv("EXPECT_LEVEL");

	if (a == RFP_EXEC && lvl && !strcmp(lvl, "uml"))
		a = RFP_READ;
	return rfp_allows(prot, a);
}

size_t rfp_level_pages(size_t n)
{
	const char *lvl = getenv("EXPECT_LEVEL");

	return lvl && !strcmp(lvl, "uml") ? n / 4 : n;
}

const int rfp_prots[8] = {
	PROT_NONE, PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE, PROT_EXEC,
	PROT_READ | PROT_EXEC, PROT_WRITE | PROT_EXEC,
	PROT_READ | PROT_WRITE | PROT_EXEC,
};

/* --- page contents --- */

uint64_t rfp_word(size_t pgoff, size_t w, unsigned int gen)
{
	uint64_t x;

	if (gen == RFP_ZERO)
		return 0;
	x = (uint64_t)pgoff * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)(w + 1) * 0xbf58476d1ce4e5b9ULL ^
	    (uint64_t)(gen + 1) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	x *= 0xd6e8feb86659fd93ULL;
	x ^= x >> 32;
	x = (uint32_t)x | 1;
	if (w == RFP_OFF_X / 8)
		x = (x & ~(0xffULL << (RFP_OFF_X % 8 * 8))) |
		    0xc3ULL << (RFP_OFF_X % 8 * 8);
	return (uint64_t)pgoff << 32 | x;
}

unsigned char rfp_byte(size_t pgoff, size_t off, unsigned int gen)
{
	return (unsigned char)(rfp_word(pgoff, off / 8, gen) >> (off % 8 * 8));
}

uint64_t rfp_id(size_t pgoff, unsigned int gen)
{
	return rfp_word(pgoff, RFP_OFF_ID / 8, gen);
}

void rfp_pattern(void *page, size_t pgoff, unsigned int gen)
{
	uint64_t *p = page;

	for (size_t w = 0; w < RFP_WORDS; w++)
		p[w] = rfp_word(pgoff, w, gen);
}

void rfp_pattern_mem(void *start, size_t first, size_t npages, unsigned int gen)
{
	for (size_t i = 0; i < npages; i++)
		rfp_pattern((char *)start + i * PS, first + i, gen);
}

int rfp_pattern_fd(int fd, size_t first, size_t n, unsigned int gen)
{
	uint64_t buf[RFP_WORDS];

	if (PS != sizeof(buf))
		return -1;
	for (size_t i = first; i < first + n; i++) {
		rfp_pattern(buf, i, gen);
		if (pwrite(fd, buf, PS, i * PS) != (ssize_t)PS)
			return -1;
	}
	return 0;
}

int rfp_pattern_file(int fd, size_t npages)
{
	if (ftruncate(fd, npages * PS))
		return -1;
	return rfp_pattern_fd(fd, 0, npages, 0);
}

int rfp_memfd(size_t npages)
{
	int fd = memfd_create("rfp", MFD_ALLOW_SEALING);

	if (fd >= 0 && rfp_pattern_file(fd, npages)) {
		close(fd);
		return -1;
	}
	return fd;
}

size_t rfp_pattern_bad(const void *page, size_t pgoff, unsigned int gen)
{
	const uint64_t *p = page;
	size_t bad = 0;

	for (size_t w = 0; w < RFP_WORDS; w++)
		bad += p[w] != rfp_word(pgoff, w, gen);
	return bad;
}

long rfp_pattern_bad_fd(int fd, size_t pgoff, unsigned int gen)
{
	uint64_t buf[RFP_WORDS];

	if (pread(fd, buf, PS, pgoff * PS) != (ssize_t)PS)
		return -1;
	return (long)rfp_pattern_bad(buf, pgoff, gen);
}

int rfp_try_check_words(const void *p, size_t pgoff, unsigned int gen,
			size_t nwords, size_t *bad)
{
	RFP_PROBE_BEGIN();
	*bad = 0;
	for (size_t w = 0; w < nwords; w++)
		*bad += ((const volatile uint64_t *)p)[w] != rfp_word(pgoff, w, gen);
	return 0;
}

int rfp_try_check(const void *p, size_t pgoff, unsigned int gen, size_t *bad)
{
	return rfp_try_check_words(p, pgoff, gen, RFP_WORDS, bad);
}

int rfp_try_fill(void *p, size_t pgoff, unsigned int gen)
{
	RFP_PROBE_BEGIN();
	for (size_t w = 0; w < RFP_WORDS; w++)
		((volatile uint64_t *)p)[w] = rfp_word(pgoff, w, gen);
	return 0;
}

int rfp_try_id(const void *page, uint64_t *v)
{
	return rfp_try_load64((const char *)page + RFP_OFF_ID, v);
}

long rfp_bad_pages(char *p, size_t n, size_t first)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;

		if (rfp_try_id(p + i * PS, &v) || v != rfp_id(first + i, 0))
			bad++;
	}
	return bad;
}

size_t rfp_scatter_pgoff(size_t i, size_t n)
{
	return (i * 1031 + 17) & (n - 1);
}

int rfp_scatter_prot(size_t i)
{
	return rfp_prots[(i * 5 + i / 8 + 1) % 8];
}

/* --- the usual fixture --- */

void rfp_area_init(struct rfp_area *a)
{
	a->fd = a->self_mem = -1;
	a->m = MAP_FAILED;
	a->n = a->file_pages = 0;
	a->gen = NULL;
}

int rfp_area_open(struct rfp_area *a, size_t npages, size_t file_pages,
		  size_t filled_pages, int prot)
{
	rfp_area_init(a);
	a->file_pages = file_pages;
	a->gen = calloc(file_pages ? file_pages : 1, sizeof(*a->gen));
	a->self_mem = open("/proc/self/mem", O_RDWR);
	a->fd = rfp_memfd(filled_pages);
	if (!a->gen || a->self_mem < 0 || a->fd < 0 ||
	    ftruncate(a->fd, file_pages * PS))
		return -1;
	return npages ? rfp_area_map(a, npages, prot, 0) : 0;
}

int rfp_area_map(struct rfp_area *a, size_t npages, int prot, size_t align)
{
	a->m = rfp_map_shared(a->fd, npages, prot, align);
	a->n = a->m == MAP_FAILED ? 0 : npages;
	return a->m == MAP_FAILED ? -1 : 0;
}

int rfp_area_close(struct rfp_area *a)
{
	int ret = 0;

	if (a->m != MAP_FAILED && a->m && munmap(a->m, a->n * PS))
		ret = -1;
	if (a->fd >= 0 && close(a->fd))
		ret = -1;
	if (a->self_mem >= 0)
		close(a->self_mem);
	free(a->gen);
	rfp_area_init(a);
	return ret;
}

char *rfp_map_shared(int fd, size_t npages, int prot, size_t align)
{
	size_t len = npages * PS;
	char *r, *a;

	if (!align)
		return mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	/* reserve len + align, keep the aligned len inside, map over it */
	r = mmap(NULL, len + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return r;
	a = (char *)(((uintptr_t)r + align - 1) & ~(align - 1));
	if (a > r)
		munmap(r, a - r);
	munmap(a + len, r + len + align - (a + len));
	return mmap(a, len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
}

int rfp_touch(char *a, int prot, int self_mem)
{
	unsigned char v;

	if (rfp_allows(prot, RFP_READ))
		return rfp_try_load(a, &v) ? -1 : 0;
	return pread(self_mem, &v, 1, (off_t)(uintptr_t)a) == 1 ? 0 : -1;
}

ssize_t rfp_mem_read(const void *addr, void *buf, size_t n)
{
	int fd = open("/proc/self/mem", O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = pread(fd, buf, n, (off_t)(uintptr_t)addr);
	close(fd);
	return r;
}

ssize_t rfp_vm_rw(void *remote, void *local, size_t len, bool write)
{
	struct iovec l = { local, len }, r = { remote, len };

	return write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0) :
		       process_vm_readv(getpid(), &l, 1, &r, 1, 0);
}

/* --- checking a layout page by page --- */

unsigned long rfp_tally_problems(const struct rfp_tally *t)
{
	return t->bad_data + t->allowed_faulted + t->denied_passed +
	       t->wrong_fault + t->bad_file + t->io_errors;
}

void rfp_denied(struct rfp_tally *t, int code, const void *addr, size_t idx,
		const char *what)
{
	if (!code)
		rfp_note(t, denied_passed, "page %zu: %s allowed", idx, what);
	else if (code != SEGV_ACCERR || rfp_fault_addr != addr)
		rfp_note(t, wrong_fault, "page %zu: %s: code %d at %p, not %p",
			 idx, what, code, rfp_fault_addr, addr);
}

void rfp_check_page(struct rfp_tally *t, char *a, size_t idx, size_t pgoff,
		    int prot, unsigned int *gen, bool rewrite, int fd,
		    int self_mem)
{
	uint64_t buf[RFP_WORDS];
	size_t bad = 0;
	int code;

	t->pages++;
	if (rfp_allows(prot, RFP_READ)) {
		code = rfp_try_check(a, pgoff, *gen, &bad);
		if (code)
			rfp_note(t, allowed_faulted, "page %zu (pgoff %zu prot %d): read: code %d",
				 idx, pgoff, prot, code);
		else if (bad)
			rfp_note(t, bad_data, "page %zu (pgoff %zu prot %d): %zu words wrong, word 0 %#llx",
				 idx, pgoff, prot, bad,
				 (unsigned long long)*(volatile uint64_t *)a);
	} else {
		rfp_denied(t, rfp_try(a + RFP_OFF_R, RFP_READ), a + RFP_OFF_R,
			   idx, "read");
		if (pread(self_mem, buf, PS, (off_t)(uintptr_t)a) != (ssize_t)PS)
			rfp_note(t, io_errors, "page %zu: /proc/self/mem: %s",
				 idx, strerror(errno));
		else if ((bad = rfp_pattern_bad(buf, pgoff, *gen)))
			rfp_note(t, bad_data, "page %zu (pgoff %zu prot %d): %zu words wrong (/proc/self/mem), word 0 %#llx",
				 idx, pgoff, prot, bad, (unsigned long long)buf[0]);
	}

	if (!rfp_allows_here(prot, RFP_EXEC))
		rfp_denied(t, rfp_try(a + RFP_OFF_X, RFP_EXEC), a + RFP_OFF_X,
			   idx, "exec");
	else if (*gen != RFP_ZERO && (code = rfp_try(a + RFP_OFF_X, RFP_EXEC)))
		rfp_note(t, allowed_faulted, "page %zu (pgoff %zu prot %d): exec: code %d",
			 idx, pgoff, prot, code);

	if (!rfp_allows(prot, RFP_WRITE)) {
		rfp_denied(t, rfp_try_store(a + RFP_OFF_W,
					    rfp_byte(pgoff, RFP_OFF_W, *gen)),
			   a + RFP_OFF_W, idx, "write");
	} else if (!rewrite) {
		code = rfp_try_store(a + RFP_OFF_W, rfp_byte(pgoff, RFP_OFF_W, *gen));
		if (code)
			rfp_note(t, allowed_faulted, "page %zu (pgoff %zu prot %d): write: code %d",
				 idx, pgoff, prot, code);
	} else {
		unsigned int next = *gen == RFP_ZERO ? 0 : *gen + 1;
		long fbad;

		code = rfp_try_fill(a, pgoff, next);
		if (code) {
			rfp_note(t, allowed_faulted, "page %zu (pgoff %zu prot %d): write: code %d",
				 idx, pgoff, prot, code);
			return;
		}
		*gen = next;
		fbad = rfp_pattern_bad_fd(fd, pgoff, next);
		if (fbad < 0)
			rfp_note(t, io_errors, "file page %zu: pread: %s",
				 pgoff, strerror(errno));
		else if (fbad)
			rfp_note(t, bad_file, "page %zu: write missed file page %zu (%ld words)",
				 idx, pgoff, fbad);
	}
}

/* --- what /proc and /sys say --- */

int rfp_vma_of(const void *addr, unsigned long *start, unsigned long *end,
	       char perms[5])
{
	unsigned long s, e, a = (unsigned long)addr;
	char line[512], p[5];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3 && s <= a && a < e) {
			if (start)
				*start = s;
			if (end)
				*end = e;
			if (perms)
				memcpy(perms, p, 5);
			ret = 0;
		}
	fclose(f);
	return ret;
}

int rfp_vmas_in(const void *start, size_t len)
{
	unsigned long s, e, a = (unsigned long)start;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < a + len && e > a)
			n++;
	fclose(f);
	return n;
}

/*
 * The lines of the /proc/self/smaps entry of the VMA containing addr, one
 * by one: call with *in false and f open; false when they are done.
 */
static bool smaps_next(FILE *f, unsigned long addr, bool *in, char *line,
		       size_t len)
{
	unsigned long s, e;
	char p[5];

	while (fgets(line, len, f)) {
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3) {
			if (*in)
				return false;	/* the next VMA */
			*in = s <= addr && addr < e;
			continue;
		}
		if (*in)
			return true;
	}
	return false;
}

int rfp_vmflag(const void *addr, const char *flag)
{
	char line[1024], *tok, *save;
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && smaps_next(f, (unsigned long)addr, &in, line, sizeof(line))) {
		if (strncmp(line, "VmFlags:", 8))
			continue;
		ret = 0;
		for (tok = strtok_r(line + 8, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, flag))
				ret = 1;
	}
	fclose(f);
	return ret;
}

long rfp_smaps_kb(const void *addr, const char *key)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t kl = strlen(key);
	char line[1024];
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (kb < 0 && smaps_next(f, (unsigned long)addr, &in, line, sizeof(line)))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			kb = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return kb;
}

long rfp_keyed(const char *file, const char *key, char sep)
{
	char line[256];
	size_t len = strlen(key);
	long v = -1;
	FILE *f = fopen(file, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == sep)
			v = atol(line + len + 1);
	if (f)
		fclose(f);
	return v;
}

long rfp_meminfo_kb(const char *key)
{
	return rfp_keyed("/proc/meminfo", key, ':');
}

long rfp_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

bool rfp_has_word(const char *file, const char *word)
{
	char buf[512] = "", *tok, *save;
	int fd = open(file, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return false;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

unsigned long rfp_offset_limit(char *m)
{
	unsigned long lo = 0, hi = 1UL << 50;

	if (rfp(m, PS, PROT_READ, hi, MAP_CHGPROT | MAP_NONBLOCK) == 0)
		return 0;
	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (rfp(m, PS, PROT_READ, mid, MAP_CHGPROT | MAP_NONBLOCK) == 0)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

int rfp_read_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	if (fgets(buf, len, f)) {
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
	}
	fclose(f);
	return ret;
}

int rfp_write_str(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(v, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

bool rfp_choice(char *s)
{
	char *l = strchr(s, '['), *r = l ? strchr(l, ']') : NULL;

	if (!r)
		return false;
	memmove(s, l + 1, r - l - 1);
	s[r - l - 1] = 0;
	return true;
}

long rfp_resident(const void *start, size_t npages)
{
	unsigned char *vec = malloc(npages);
	long n = 0;

	if (!vec)
		return -1;
	if (mincore((void *)start, npages * PS, vec)) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

int rfp_pagemap(const void *start, size_t npages, uint64_t *out)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t want = npages * sizeof(*out);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = pread(fd, out, want, (off_t)((uintptr_t)start / PS * sizeof(*out)));
	close(fd);
	return r == (ssize_t)want ? 0 : -1;
}

long rfp_present(const void *start, size_t npages)
{
	uint64_t *pm = malloc(npages * sizeof(*pm));
	long n = 0;

	if (!pm || rfp_pagemap(start, npages, pm)) {
		free(pm);
		return -1;
	}
	for (size_t i = 0; i < npages; i++)
		n += !!(pm[i] & RFP_PM_PRESENT);
	free(pm);
	return n;
}

bool rfp_file_has_page(int fd, size_t pgoff)
{
	return lseek(fd, (off_t)(pgoff * PS), SEEK_DATA) == (off_t)(pgoff * PS);
}

int rfp_mlocked(const void *addr)
{
	uint64_t pm, flags;
	int fd, ret = -1;
	ssize_t n;

	if (rfp_pagemap(addr, 1, &pm) || !(pm & RFP_PM_PRESENT) || !RFP_PM_PFN(pm))
		return -1;
	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0)
		return -1;
	n = pread(fd, &flags, sizeof(flags), (off_t)(RFP_PM_PFN(pm) * sizeof(flags)));
	if (n == sizeof(flags))
		ret = !!(flags & (1ULL << 33));
	else if (n == 0)
		ret = -2;
	close(fd);
	return ret;
}

long rfp_mlocked_pages(const void *start, size_t npages)
{
	long n = 0;

	for (size_t i = 0; i < npages; i++) {
		int m = rfp_mlocked((const char *)start + i * PS);

		if (m == -2)
			return -2;
		n += m == 1;
	}
	return n;
}

long rfp_pageout(char *p, size_t n)
{
	long left = -1;

	for (int i = 0; i < 3; i++) {
		if (madvise(p, n * PS, MADV_PAGEOUT))
			return -1;
		left = rfp_present(p, n);
		if (left == 0)
			break;
	}
	return left;
}

long rfp_rmap_walks(void)
{
	char line[128];
	bool have = false;
	FILE *f = fopen("/proc/filesystems", "r");

	while (f && fgets(line, sizeof(line), f))
		have |= strstr(line, "\tdebugfs") != NULL;
	if (f)
		fclose(f);
	if (!have)
		return -2;
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return rfp_read_long("/sys/kernel/debug/manyprots/rmap_vma_walks");
}

uint64_t rfp_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}
