/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the remap_file_pages(MAP_CHGPROT) guest tests.
 *
 * Expectations come from the runner, not from the kernel under test:
 * EXPECT_MANYPROTS=on|off says whether MAP_CHGPROT must work at this level.
 */
#ifndef RFP_H
#define RFP_H

#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x200000	/* the series' uapi value; checked below */
#endif

#define PS ((size_t)sysconf(_SC_PAGESIZE))

static inline long rfp(void *start, size_t size, int prot, unsigned long pgoff,
		       int flags)
{
	return syscall(SYS_remap_file_pages, start, size, prot, pgoff, flags);
}

/* Whether the runner says MAP_CHGPROT must be available here. */
static inline bool manyprots_expected(void)
{
	const char *e = getenv("EXPECT_MANYPROTS");

	return e && !strcmp(e, "on");
}

/*
 * Probe one access and report how it ended: 0 = allowed, otherwise the
 * SIGSEGV si_code (SEGV_ACCERR, SEGV_MAPERR) or -SIGBUS.  The faulting
 * address is left in rfp_fault_addr.  Per thread, so threads may probe at
 * once; call rfp_catch() once per process.
 */
static __thread sigjmp_buf rfp_jmp;
static __thread volatile int rfp_code;
static __thread void *volatile rfp_fault_addr;
/* The raw si_code of the last fault, also of a SIGBUS (BUS_ADRERR). */
static __thread volatile int rfp_si_code;

static void rfp_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	rfp_code = sig == SIGBUS ? -SIGBUS : si->si_code;
	rfp_si_code = si->si_code;
	rfp_fault_addr = si->si_addr;
	siglongjmp(rfp_jmp, 1);
}

static inline void rfp_catch(void)
{
	struct sigaction sa = { .sa_sigaction = rfp_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

enum rfp_access { RFP_READ, RFP_WRITE, RFP_EXEC };

/* The page must hold a 'ret' (0xc3) at its start for RFP_EXEC. */
static inline int rfp_try(void *p, enum rfp_access a)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
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

/* A memfd of npages, page i filled with the byte (i & 0xff) ^ 0x5a. */
static inline int rfp_memfd(size_t npages)
{
	int fd = memfd_create("rfp", MFD_ALLOW_SEALING);
	size_t i;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, npages * PS))
		return -1;
	for (i = 0; i < npages; i++) {
		char buf[4096];

		memset(buf, (int)((i & 0xff) ^ 0x5a), sizeof(buf));
		if (pwrite(fd, buf, PS, i * PS) != (ssize_t)PS)
			return -1;
	}
	return fd;
}

static inline unsigned char rfp_fill(size_t pgoff)
{
	return (unsigned char)((pgoff & 0xff) ^ 0x5a);
}

/* rfp_try(p, RFP_READ) that also hands back the byte read. */
static inline int rfp_try_load(const void *p, unsigned char *v)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	*v = *(const volatile unsigned char *)p;
	return 0;
}

/* rfp_try(p, RFP_WRITE) that stores v, so a probe can keep the data as is. */
static inline int rfp_try_store(void *p, unsigned char v)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	*(volatile unsigned char *)p = v;
	return 0;
}

/*
 * Does a page remapped with prot allow access a?  The spec's x86_64
 * normalisation: write and exec imply read, read does not imply exec.
 */
static inline bool rfp_allows(int prot, enum rfp_access a)
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

/*
 * For kselftest_harness tests: the test's first MAP_CHGPROT call, which
 * must have prot != 0.  With EXPECT_MANYPROTS=on it must succeed.  With off
 * or absent the spec says it fails with EINVAL (prot 0 would not do: a
 * kernel without the feature ignores the flag), so check that, then
 * SKIP(out, ...); out is what SKIP() runs, e.g. return.
 */
#define RFP_FIRST_CHGPROT(out, start, size, prot, pgoff) do {		\
	const char *__lvl = getenv("EXPECT_MANYPROTS");			\
	long __ret;							\
	int __err;							\
									\
	ASSERT_NE(0, (prot));						\
	errno = 0;							\
	__ret = rfp((start), (size), (prot), (pgoff), MAP_CHGPROT);	\
	__err = errno;							\
	if (manyprots_expected()) {					\
		ASSERT_EQ(0, __ret)					\
			TH_LOG("MAP_CHGPROT: %s", strerror(__err));	\
	} else if (__lvl && (!strcmp(__lvl, "off") ||			\
			     !strcmp(__lvl, "absent"))) {		\
		ASSERT_EQ(-1, __ret);					\
		ASSERT_EQ(EINVAL, __err);				\
		SKIP(out, "EXPECT_MANYPROTS=%s: MAP_CHGPROT refused "	\
		     "with EINVAL, as specified", __lvl);		\
	} else {							\
		SKIP(out, "EXPECT_MANYPROTS=%s: nothing to expect",	\
		     __lvl ? __lvl : "(unset)");			\
	}								\
} while (0)

/*
 * In-page offsets for probes: not the page start, so a fault's si_addr is
 * checked exactly.  rfp_fill_fd() and rfp_fill_mem() put a 'ret' at
 * RFP_OFF_X so that exec can be probed there.
 */
#define RFP_OFF_R 0x123
#define RFP_OFF_W 0x456
#define RFP_OFF_X 0x789

static inline void rfp_fill_page(unsigned char *page, size_t pgoff)
{
	memset(page, rfp_fill(pgoff), PS);
	page[RFP_OFF_X] = 0xc3;
}

/* Page i of fd (npages long afterwards) holds rfp_fill(i) and a 'ret'. */
static inline int rfp_fill_fd(int fd, size_t npages)
{
	unsigned char buf[4096];
	size_t i;

	if (PS != sizeof(buf) || ftruncate(fd, npages * PS))
		return -1;
	for (i = 0; i < npages; i++) {
		rfp_fill_page(buf, i);
		if (pwrite(fd, buf, PS, i * PS) != (ssize_t)PS)
			return -1;
	}
	return 0;
}

/* The same through a writable mapping, for memory without a file to write. */
static inline void rfp_fill_mem(void *start, size_t npages)
{
	size_t i;

	for (i = 0; i < npages; i++)
		rfp_fill_page((unsigned char *)start + i * PS, i);
}

/* EXPECT_MANYPROTS as the runner gave it, "(unset)" if it did not. */
static inline const char *rfp_expect_mode(void)
{
	const char *e = getenv("EXPECT_MANYPROTS");

	return e ? e : "(unset)";
}

/*
 * rfp_allows() for the level the runner says we are at (EXPECT_LEVEL).
 * UML has no NX: its pte_exec() is true for every user page and its host
 * mappings are executable whenever readable, so there exec follows read.
 */
static inline bool rfp_allows_here(int prot, enum rfp_access a)
{
	const char *lvl = getenv("EXPECT_LEVEL");

	if (a == RFP_EXEC && lvl && !strcmp(lvl, "uml"))
		a = RFP_READ;
	return rfp_allows(prot, a);
}

/*
 * The /proc/self/maps line that contains addr: its bounds and its
 * permissions ("rw-s").  0 if found, -1 if addr is in no VMA.
 */
static inline int rfp_vma_of(const void *addr, unsigned long *start,
			     unsigned long *end, char perms[5])
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

/* How many /proc/self/maps lines overlap [start, start + len). */
static inline int rfp_vmas_in(const void *start, size_t len)
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
 * Does the smaps "VmFlags:" line of the VMA containing addr have the
 * two-letter flag ("nl", "mp", "um")?  1 or 0; -1 if there is no such VMA.
 */
static inline int rfp_vmflag(const void *addr, const char *flag)
{
	unsigned long s, e, a = (unsigned long)addr;
	char line[1024], p[5], *tok, *save;
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3) {
			in = s <= a && a < e;
			continue;
		}
		if (!in || strncmp(line, "VmFlags:", 8))
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

/*
 * Helpers for the reclaim, migration and truncation tests (rfp_swap.c,
 * rfp_migrate.c, rfp_truncate.c): self-identifying page contents, probes
 * of whole pages, and what /proc says about a range.
 */
#include <fcntl.h>
#include <sys/mount.h>

/* rfp_catch(): its handler also keeps the si_code of a SIGBUS. */
static inline void rfp_catch_si(void)
{
	rfp_catch();
}

#define RFP_WORDS (4096 / sizeof(uint64_t))
/* The contents generation of a page that must read zeros (a hole, past EOF). */
#define RFP_ZERO (~0u)

/*
 * Word w of file page pgoff, generation gen: the pgoff in the high half, a
 * hash of (pgoff, w, gen) in the low half, never 0, so any word read tells
 * which file page it came from and whether it sits at its place.  The byte
 * at RFP_OFF_X is a 'ret', for exec probes.
 */
static inline uint64_t rfp_word(size_t pgoff, size_t w, unsigned int gen)
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

/* Byte off of file page pgoff, generation gen. */
static inline unsigned char rfp_byte(size_t pgoff, size_t off, unsigned int gen)
{
	return (unsigned char)(rfp_word(pgoff, off / 8, gen) >> (off % 8 * 8));
}

static inline void rfp_pattern(void *page, size_t pgoff, unsigned int gen)
{
	uint64_t *p = page;

	for (size_t w = 0; w < RFP_WORDS; w++)
		p[w] = rfp_word(pgoff, w, gen);
}

/* How many words of the page differ from file page pgoff, generation gen. */
static inline size_t rfp_pattern_bad(const void *page, size_t pgoff,
				     unsigned int gen)
{
	const uint64_t *p = page;
	size_t bad = 0;

	for (size_t w = 0; w < RFP_WORDS; w++)
		bad += p[w] != rfp_word(pgoff, w, gen);
	return bad;
}

/* Write file pages [first, first + n) of fd, generation gen; 0 or -1. */
static inline int rfp_pattern_fd(int fd, size_t first, size_t n, unsigned int gen)
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

/* How many words of file page pgoff of fd differ; -1 if it cannot be read. */
static inline long rfp_pattern_bad_fd(int fd, size_t pgoff, unsigned int gen)
{
	uint64_t buf[RFP_WORDS];

	if (pread(fd, buf, PS, pgoff * PS) != (ssize_t)PS)
		return -1;
	return (long)rfp_pattern_bad(buf, pgoff, gen);
}

/*
 * Read the whole page at p (from its first byte on) and count in *bad the
 * words that differ from file page pgoff, generation gen.  Returns 0 if
 * the reads were allowed, else as rfp_try().
 */
static inline int rfp_try_check(const void *p, size_t pgoff, unsigned int gen,
				size_t *bad)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	*bad = rfp_pattern_bad((const void *)p, pgoff, gen);
	return 0;
}

/* Write the whole page at p with file page pgoff, generation gen. */
static inline int rfp_try_fill(void *p, size_t pgoff, unsigned int gen)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	for (size_t w = 0; w < RFP_WORDS; w++)
		((volatile uint64_t *)p)[w] = rfp_word(pgoff, w, gen);
	return 0;
}

/* One aligned 64-bit load or store, as rfp_try_load() and rfp_try_store(). */
static inline int rfp_try_load64(const void *p, uint64_t *v)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	*v = *(const volatile uint64_t *)p;
	return 0;
}

static inline int rfp_try_store64(void *p, uint64_t v)
{
	rfp_code = 0;
	rfp_fault_addr = NULL;
	if (sigsetjmp(rfp_jmp, 1))
		return rfp_code;
	*(volatile uint64_t *)p = v;
	return 0;
}

/*
 * The number after "key<sep>" on a line of file (/proc/vmstat and cgroup
 * files: sep ' '; /proc/meminfo: ':'), -1 if absent.
 */
static inline long rfp_keyed(const char *file, const char *key, char sep)
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

/* A /proc/meminfo field in kB ("SwapFree"), -1 if absent. */
static inline long rfp_meminfo_kb(const char *key)
{
	return rfp_keyed("/proc/meminfo", key, ':');
}

/*
 * The eight protections a page of the reclaim, migration and truncation
 * layouts can have.
 */
static const int rfp_prots[8] = {
	PROT_NONE, PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE, PROT_EXEC,
	PROT_READ | PROT_EXEC, PROT_WRITE | PROT_EXEC,
	PROT_READ | PROT_WRITE | PROT_EXEC,
};

/*
 * Make the page at a present as prot allows: read it where prot allows a
 * read, else through /proc/self/mem (self_mem, FOLL_FORCE).  0 or -1.
 */
static inline int rfp_touch(char *a, int prot, int self_mem)
{
	unsigned char v;

	if (rfp_allows(prot, RFP_READ))
		return rfp_try_load(a, &v) ? -1 : 0;
	return pread(self_mem, &v, 1, (off_t)(uintptr_t)a) == 1 ? 0 : -1;
}

/* How many of npages from start mincore() calls resident; -1 on error. */
static inline long rfp_resident(const void *start, size_t npages)
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

#define RFP_PM_PRESENT	(1ULL << 63)
#define RFP_PM_SWAP	(1ULL << 62)
#define RFP_PM_PFN(e)	((e) & ((1ULL << 55) - 1))
#define RFP_PM_SWAPTYPE(e) ((unsigned int)((e) & 0x1f))

/* The /proc/self/pagemap entries of npages from start; 0 or -1. */
static inline int rfp_pagemap(const void *start, size_t npages, uint64_t *out)
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

/* How many of npages from start pagemap shows present; -1 on error. */
static inline long rfp_present(const void *start, size_t npages)
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

/*
 * What rfp_check_page() found over a layout.  Each field counts pages.
 */
struct rfp_tally {
	unsigned long pages;		/* pages checked */
	unsigned long bad_data;		/* contents not those of its file page */
	unsigned long allowed_faulted;	/* an access its prot allows faulted */
	unsigned long denied_passed;	/* an access its prot denies did not */
	unsigned long wrong_fault;	/* not SEGV_ACCERR, or not at the address */
	unsigned long bad_file;		/* a write through it missed the file */
	unsigned long io_errors;	/* /proc/self/mem or pread failed */
	char first[256];		/* the first problem seen */
};

static inline unsigned long rfp_tally_problems(const struct rfp_tally *t)
{
	return t->bad_data + t->allowed_faulted + t->denied_passed +
	       t->wrong_fault + t->bad_file + t->io_errors;
}

#define rfp_note(t, counter, fmt, ...) do {				\
	if (!rfp_tally_problems(t))					\
		snprintf((t)->first, sizeof((t)->first), fmt, ##__VA_ARGS__); \
	(t)->counter++;							\
} while (0)

/* A denied access ended with code at fault address addr, as it should? */
static inline void rfp_denied(struct rfp_tally *t, int code, const void *addr,
			      size_t idx, const char *what)
{
	if (!code)
		rfp_note(t, denied_passed, "page %zu: %s allowed", idx, what);
	else if (code != SEGV_ACCERR || rfp_fault_addr != addr)
		rfp_note(t, wrong_fault, "page %zu: %s: code %d at %p, not %p",
			 idx, what, code, rfp_fault_addr, addr);
}

/*
 * Check page idx at a of a layout: it must map file page pgoff, whose
 * contents are generation *gen (RFP_ZERO: zeros), with protection prot.
 *  - read the whole page through a where prot allows it, else probe a
 *    read (SEGV_ACCERR at the address) and compare the contents read
 *    through /proc/self/mem (self_mem, an fd of it; FOLL_FORCE);
 *  - probe exec at RFP_OFF_X (run only where the contents have the 'ret');
 *  - where prot denies writes, probe a write of the byte already there;
 *    where it allows them: if rewrite, write the page as the next
 *    generation, bump *gen and check that the file (fd) has it; else
 *    store the byte already there.
 */
static inline void rfp_check_page(struct rfp_tally *t, char *a, size_t idx,
				  size_t pgoff, int prot, unsigned int *gen,
				  bool rewrite, int fd, int self_mem)
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

/* EXPECT that a tally is clean, with its first problem as the message. */
#define RFP_EXPECT_CLEAN(t, what) do {					\
	EXPECT_EQ(0, rfp_tally_problems(t))				\
		TH_LOG("%s: %lu pages: %lu bad data, %lu allowed faulted, "	\
		       "%lu denied passed, %lu wrong faults, %lu bad file, "	\
		       "%lu io errors; first: %s", (what), (t)->pages,	\
		       (t)->bad_data, (t)->allowed_faulted,		\
		       (t)->denied_passed, (t)->wrong_fault, (t)->bad_file, \
		       (t)->io_errors, (t)->first);			\
} while (0)

/*
 * The usual fixture of the review tests: a memfd of file_pages pages, the
 * first filled_pages of them holding rfp_fill_page() contents and the rest
 * holes, and a MAP_SHARED mapping of its first npages with prot.
 */
struct rfp_area {
	int fd;
	char *m;
	size_t n;
};

static inline int rfp_area_open(struct rfp_area *a, size_t npages,
				size_t file_pages, size_t filled_pages, int prot)
{
	a->m = MAP_FAILED;
	a->n = npages;
	a->fd = memfd_create("rfp-area", 0);
	if (a->fd < 0 || rfp_fill_fd(a->fd, filled_pages) ||
	    ftruncate(a->fd, file_pages * PS))
		return -1;
	a->m = mmap(NULL, npages * PS, prot, MAP_SHARED, a->fd, 0);
	return a->m == MAP_FAILED ? -1 : 0;
}

static inline void rfp_area_close(struct rfp_area *a)
{
	if (a->m != MAP_FAILED)
		munmap(a->m, a->n * PS);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->m = MAP_FAILED;
}

/* Whether file page pgoff of fd has memory (shmem SEEK_DATA). */
static inline bool rfp_file_has_page(int fd, size_t pgoff)
{
	return lseek(fd, (off_t)(pgoff * PS), SEEK_DATA) == (off_t)(pgoff * PS);
}

/*
 * Whether the page mapped at addr is mlocked (KPF_MLOCKED of
 * /proc/kpageflags; root): 1, 0, -1 if not present or unreadable, or -2
 * if its page frame lies beyond /proc/kpageflags (UML sets max_pfn to its
 * page count, not to its last page frame, so its highest frames are not
 * listed).  Exact, unlike the Mlocked counter of /proc/meminfo, which lags
 * by the per-CPU vmstat thresholds and the munlock batches.
 */
static inline int rfp_mlocked(const void *addr)
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

/*
 * How many of npages from start are present and mlocked, or -2 if
 * /proc/kpageflags cannot tell for one of them (see rfp_mlocked()).
 */
static inline long rfp_mlocked_pages(const void *start, size_t npages)
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

/*
 * For kselftest_harness tests: expect want of npages from start to be
 * mlocked.  Where /proc/kpageflags cannot tell page by page (UML), check
 * what can be told: that the VMA at start is VM_LOCKED exactly when pages
 * should be; the QEMU guest checks the pages themselves.
 */
#define RFP_EXPECT_MLOCKED(want, start, npages) do {			\
	long __n = rfp_mlocked_pages((start), (npages));		\
									\
	if (__n == -2) {						\
		TH_LOG("/proc/kpageflags does not list these page "	\
		       "frames: VM_LOCKED checked instead");		\
		EXPECT_EQ((want) != 0, rfp_vmflag((start), "lo"));	\
	} else {							\
		EXPECT_EQ((want), __n);					\
	}								\
} while (0)

/* For kselftest_harness tests that page shmem out: SKIP without swap. */
#define RFP_NEED_SWAP() do {						\
	if (rfp_meminfo_kb("SwapTotal") <= 0)				\
		SKIP(return, "no swap in this machine");		\
} while (0)

/*
 * MADV_PAGEOUT until none of n pages from p is present (3 tries): how
 * many are left, -1 on error.  Shmem pages need swap to leave.
 */
static inline long rfp_pageout(char *p, size_t n)
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

/* Read n pages from p: how many do not show file page first + i (rfp_fill()). */
static inline long rfp_bad_pages(char *p, size_t n, size_t first)
{
	long bad = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char v = 0;

		if (rfp_try_load(p + i * PS + RFP_OFF_R, &v) || v != rfp_fill(first + i))
			bad++;
	}
	return bad;
}

/* A number from a one-value file (debugfs counters, sysctls); -1 if none. */
static inline long rfp_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/*
 * rmap walks of whole nonlinear VMAs so far (debugfs, mounted here if it
 * is not): -2 if this kernel has no debugfs, -1 if it has no counter.
 */
static inline long rfp_rmap_walks(void)
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

static inline int rfp_write_str(const char *path, const char *v)
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

#endif
