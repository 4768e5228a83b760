/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library of the remap_file_pages(MAP_CHGPROT) guest tests, laid out
 * like selftests/mm's vm_util.h: declarations, and the macros that use
 * the harness's ASSERT/EXPECT (they need the test's _metadata); the code
 * is in rfp.c, linked into every test binary.
 *
 * Expectations come from the runner, not from the kernel under test:
 * EXPECT_MANYPROTS=on|off|absent says whether MAP_CHGPROT must work at
 * this level, EXPECT_LEVEL (qemu, uml) where the tests run.
 *
 * Page contents, one scheme for every test: word w of file page pgoff in
 * its generation gen is rfp_word(pgoff, w, gen), which names the file page
 * in its high half, so any word read tells where it came from.  Probes of
 * single accesses use the in-page offsets RFP_OFF_R, RFP_OFF_W and
 * RFP_OFF_X; the byte at RFP_OFF_X is a 'ret', for exec probes.
 */
#ifndef RFP_H
#define RFP_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * The harness header defines functions with external linkage
 * (__run_test(), __wait_for_test()): only a test's own file may include
 * it, so rfp.c defines RFP_LIBRARY and goes without.
 */
#ifndef RFP_LIBRARY
#include "kselftest_harness.h"
/*
 * A test's verdict so far: _metadata->passed in 6.1's harness, exit_code
 * (__test_passed()) since 6.9's, which also brought
 * FIXTURE_TEARDOWN_PARENT.  RFP_PASS() starts a forked child's verdict
 * afresh.
 */
#ifdef FIXTURE_TEARDOWN_PARENT
#define RFP_PASSED(m)	__test_passed(m)
#define RFP_PASS(m)	((m)->exit_code = KSFT_PASS)
#else
#define RFP_PASSED(m)	((m)->passed)
#define RFP_PASS(m)	((m)->passed = 1)
#endif
#endif

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x200000	/* the series' uapi value */
#endif

#define PS ((size_t)sysconf(_SC_PAGESIZE))

long rfp(void *start, size_t size, int prot, unsigned long pgoff, int flags);

/* Whether the runner says MAP_CHGPROT must be available here. */
bool manyprots_expected(void);
/* EXPECT_MANYPROTS as the runner gave it, "(unset)" if it did not. */
const char *rfp_expect_mode(void);

/* --- probes --- */

/*
 * A probe of one access reports how it ended: 0 = allowed, otherwise the
 * SIGSEGV si_code (SEGV_ACCERR, SEGV_MAPERR) or -SIGBUS.  The faulting
 * address is left in rfp_fault_addr and the raw si_code (also of a
 * SIGBUS: BUS_ADRERR) in rfp_si_code.  Per thread, so threads may probe
 * at once; call rfp_catch() once per process.
 */
extern __thread void *volatile rfp_fault_addr;
extern __thread volatile int rfp_si_code;

void rfp_catch(void);

enum rfp_access { RFP_READ, RFP_WRITE, RFP_EXEC };

/* A write stores a 0 byte; the page must hold a 'ret' at p for RFP_EXEC. */
int rfp_try(void *p, enum rfp_access a);
/* As rfp_try(p, RFP_READ), handing back the byte read. */
int rfp_try_load(const void *p, unsigned char *v);
/* As rfp_try(p, RFP_WRITE), storing v, so a probe can keep the data as is. */
int rfp_try_store(void *p, unsigned char v);
/* One aligned 64-bit load or store. */
int rfp_try_load64(const void *p, uint64_t *v);
int rfp_try_store64(void *p, uint64_t v);

/*
 * Does a page remapped with prot allow access a?  The spec's x86_64
 * normalisation: write and exec imply read, read does not imply exec.
 */
bool rfp_allows(int prot, enum rfp_access a);
/*
 * rfp_allows() for the level the runner says we are at (EXPECT_LEVEL).
 * UML has no NX: its pte_exec() is true for every user page and its host
 * mappings are executable whenever readable, so there exec follows read.
 */
bool rfp_allows_here(int prot, enum rfp_access a);
/*
 * n pages for a layout of the long reclaim and migration tests, n / 4 in
 * UML (EXPECT_LEVEL=uml), where every fault, every signal and every swap
 * I/O of the guest goes through the host: a quarter still has every
 * protection, scattered pgoffs and more than one page table, and the
 * generic mm code under it is the QEMU level's, which runs all n.
 */
size_t rfp_level_pages(size_t n);

/* The eight protections a page can have. */
extern const int rfp_prots[8];

/* --- page contents --- */

/*
 * In-page offsets for probes: not the page start, so a fault's si_addr is
 * checked exactly.  RFP_OFF_ID is the word that holds RFP_OFF_R.
 */
#define RFP_OFF_R 0x123
#define RFP_OFF_W 0x456
#define RFP_OFF_X 0x789
#define RFP_OFF_ID (RFP_OFF_R & ~7)

#define RFP_WORDS (4096 / sizeof(uint64_t))
/* The contents generation of a page that must read zeros (a hole, past EOF). */
#define RFP_ZERO (~0u)

/*
 * Word w of file page pgoff, generation gen: the pgoff in the high half, a
 * hash of (pgoff, w, gen) in the low half, never 0, so any word read tells
 * which file page it came from and whether it sits at its place; the byte
 * at RFP_OFF_X is a 'ret'.  0 for RFP_ZERO.
 */
uint64_t rfp_word(size_t pgoff, size_t w, unsigned int gen);
/* Byte off of file page pgoff, generation gen. */
unsigned char rfp_byte(size_t pgoff, size_t off, unsigned int gen);
/* The word a one-load identity probe (rfp_try_id()) reads. */
uint64_t rfp_id(size_t pgoff, unsigned int gen);

/* Fill a page buffer as file page pgoff, generation gen. */
void rfp_pattern(void *page, size_t pgoff, unsigned int gen);
/* The same through a writable mapping: page i as file page first + i. */
void rfp_pattern_mem(void *start, size_t first, size_t npages, unsigned int gen);
/* Write file pages [first, first + n) of fd, generation gen; 0 or -1. */
int rfp_pattern_fd(int fd, size_t first, size_t n, unsigned int gen);
/* Make fd npages long, all of them generation 0; 0 or -1. */
int rfp_pattern_file(int fd, size_t npages);
/* A memfd of npages, generation 0 (sealing allowed); -1 on error. */
int rfp_memfd(size_t npages);

/* How many words of the page differ from file page pgoff, generation gen. */
size_t rfp_pattern_bad(const void *page, size_t pgoff, unsigned int gen);
/* How many words of file page pgoff of fd differ; -1 if it cannot be read. */
long rfp_pattern_bad_fd(int fd, size_t pgoff, unsigned int gen);

/*
 * Read the whole page at p (from its first byte on) and count in *bad the
 * words that differ from file page pgoff, generation gen.  Returns 0 if
 * the reads were allowed, else as rfp_try().  rfp_try_check_words() reads
 * only the first nwords words.
 */
int rfp_try_check(const void *p, size_t pgoff, unsigned int gen, size_t *bad);
int rfp_try_check_words(const void *p, size_t pgoff, unsigned int gen,
			size_t nwords, size_t *bad);
/* Write the whole page at p as file page pgoff, generation gen. */
int rfp_try_fill(void *p, size_t pgoff, unsigned int gen);
/*
 * One load of the word at RFP_OFF_ID of the page at page, to compare
 * with rfp_id(): which file page it shows.  Returns as rfp_try().
 */
int rfp_try_id(const void *page, uint64_t *v);
/* Of n pages from p, how many do not read as file page first + i, gen 0. */
long rfp_bad_pages(char *p, size_t n, size_t first);

/*
 * A scattered layout of n pages (n a power of two): page i maps file page
 * (i * 1031 + 17) mod n, a permutation without fixed points (1030 i = -17
 * has no solution mod 2^k), so every page is at a nonlinear address and
 * no file page is mapped twice (MADV_PAGEOUT skips pages mapped more than
 * once); protections cycle through all 8 in a pattern that differs
 * between neighbours, page 0 has PROT_READ (for RFP_FIRST_CHGPROT).
 */
size_t rfp_scatter_pgoff(size_t i, size_t n);
int rfp_scatter_prot(size_t i);

/* --- the usual fixture --- */

/*
 * A memfd of file_pages pages, the first filled_pages of them holding
 * generation 0 and the rest holes; a MAP_SHARED mapping m of its first n
 * pages; /proc/self/mem (self_mem, O_RDWR: a forked child must open its
 * own) and the contents generation of each file page (gen), for
 * rfp_check_page().
 */
struct rfp_area {
	int fd;
	int self_mem;
	char *m;
	size_t n;
	size_t file_pages;
	unsigned int *gen;
};

/* An area with nothing open, for rfp_area_close(). */
void rfp_area_init(struct rfp_area *a);
/* Open an area; npages 0 maps nothing (rfp_area_map() later).  0 or -1. */
int rfp_area_open(struct rfp_area *a, size_t npages, size_t file_pages,
		  size_t filled_pages, int prot);
/* Map the first npages of the area's file at an align-aligned address. */
int rfp_area_map(struct rfp_area *a, size_t npages, int prot, size_t align);
/* Unmap and close what is open, back to rfp_area_init(); 0, or -1 if munmap or close failed. */
int rfp_area_close(struct rfp_area *a);

/*
 * A MAP_SHARED mapping of the first npages of fd at an address aligned
 * to align (a power of two; 0: anywhere); MAP_FAILED on error.
 */
char *rfp_map_shared(int fd, size_t npages, int prot, size_t align);

/*
 * Make the page at a present as prot allows: read it where prot allows a
 * read, else through /proc/self/mem (self_mem, FOLL_FORCE).  0 or -1.
 */
int rfp_touch(char *a, int prot, int self_mem);
/* pread() of /proc/self/mem, opened for the call (a forked child's own). */
ssize_t rfp_mem_read(const void *addr, void *buf, size_t n);
/* process_vm_readv() or, if write, _writev() of len bytes at remote, on ourselves. */
ssize_t rfp_vm_rw(void *remote, void *local, size_t len, bool write);

/* --- checking a layout page by page --- */

/* What rfp_check_page() found over a layout.  Each field counts pages. */
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

unsigned long rfp_tally_problems(const struct rfp_tally *t);

/* Count a problem in t, keeping the message of the first. */
#define rfp_note(t, counter, fmt, ...) do {				\
	if (!rfp_tally_problems(t))					\
		snprintf((t)->first, sizeof((t)->first), fmt, ##__VA_ARGS__); \
	(t)->counter++;							\
} while (0)

/* A denied access ended with code at fault address addr, as it should? */
void rfp_denied(struct rfp_tally *t, int code, const void *addr, size_t idx,
		const char *what);

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
void rfp_check_page(struct rfp_tally *t, char *a, size_t idx, size_t pgoff,
		    int prot, unsigned int *gen, bool rewrite, int fd,
		    int self_mem);

/* --- what /proc and /sys say --- */

/*
 * The /proc/self/maps line that contains addr: its bounds and its
 * permissions ("rw-s").  0 if found, -1 if addr is in no VMA.
 */
int rfp_vma_of(const void *addr, unsigned long *start, unsigned long *end,
	       char perms[5]);
/* How many /proc/self/maps lines overlap [start, start + len). */
int rfp_vmas_in(const void *start, size_t len);
/*
 * Does the smaps "VmFlags:" line of the VMA containing addr have the
 * two-letter flag ("nl", "mp", "um")?  1 or 0; -1 if there is no such VMA.
 */
int rfp_vmflag(const void *addr, const char *flag);
/* kB of an smaps field ("ShmemPmdMapped") of the VMA containing addr, or -1. */
long rfp_smaps_kb(const void *addr, const char *key);

/*
 * The number after "key<sep>" on a line of file (/proc/vmstat and cgroup
 * files: sep ' '; /proc/meminfo: ':'), -1 if absent.
 */
long rfp_keyed(const char *file, const char *key, char sep);
/* A /proc/meminfo field ("SwapFree", "HugePages_Free"), -1 if absent. */
long rfp_meminfo_kb(const char *key);
/* A number from a one-value file (debugfs counters, sysctls); -1 if none. */
long rfp_read_long(const char *path);
/* Whether a word of a short file ("cgroup.controllers") is word. */
bool rfp_has_word(const char *file, const char *word);
/*
 * The first offset a one-page MAP_CHGPROT call at m (a page of a shared
 * mapping) refuses, by bisection; 0 if it refuses none below 2^50.
 */
unsigned long rfp_offset_limit(char *m);
/* The first line of a file, without its newline, into buf; 0 or -1. */
int rfp_read_str(const char *path, char *buf, size_t len);
/* Write v to a file (sysctls, sysfs, cgroup files); 0 or -1. */
int rfp_write_str(const char *path, const char *v);
/* "always [advise] never" -> "advise" in place; false if no brackets. */
bool rfp_choice(char *s);

/* How many of npages from start mincore() calls resident; -1 on error. */
long rfp_resident(const void *start, size_t npages);

#define RFP_PM_PRESENT	(1ULL << 63)
#define RFP_PM_SWAP	(1ULL << 62)
#define RFP_PM_PFN(e)	((e) & ((1ULL << 55) - 1))
#define RFP_PM_SWAPTYPE(e) ((unsigned int)((e) & 0x1f))

/* The /proc/self/pagemap entries of npages from start; 0 or -1. */
int rfp_pagemap(const void *start, size_t npages, uint64_t *out);
/* How many of npages from start pagemap shows present; -1 on error. */
long rfp_present(const void *start, size_t npages);
/* Whether file page pgoff of fd has memory (shmem SEEK_DATA). */
bool rfp_file_has_page(int fd, size_t pgoff);

/*
 * Whether the page mapped at addr is mlocked (KPF_MLOCKED of
 * /proc/kpageflags; root): 1, 0, -1 if not present or unreadable, or -2
 * if its page frame lies beyond /proc/kpageflags (UML sets max_pfn to its
 * page count, not to its last page frame, so its highest frames are not
 * listed).  Exact, unlike the Mlocked counter of /proc/meminfo, which lags
 * by the per-CPU vmstat thresholds and the munlock batches.
 */
int rfp_mlocked(const void *addr);
/*
 * How many of npages from start are present and mlocked, or -2 if
 * /proc/kpageflags cannot tell for one of them (see rfp_mlocked()).
 */
long rfp_mlocked_pages(const void *start, size_t npages);

/*
 * MADV_PAGEOUT until none of n pages from p is present (3 tries): how
 * many are left, -1 on error.  Shmem pages need swap to leave.
 */
long rfp_pageout(char *p, size_t n);
/*
 * rmap walks of whole nonlinear VMAs so far (debugfs, mounted here if it
 * is not): -2 if this kernel has no debugfs, -1 if it has no counter.
 */
long rfp_rmap_walks(void);

/* The next number of a xorshift64 sequence (*x must not be 0). */
uint64_t rfp_rand(uint64_t *x);

/* --- for kselftest_harness tests --- */

/*
 * The test's first MAP_CHGPROT call, which must have prot != 0.  With
 * EXPECT_MANYPROTS=on it must succeed.  With off or absent the spec says
 * it fails with EINVAL (prot 0 would not do: a kernel without the feature
 * ignores the flag), so check that, then SKIP(out, ...); out is what
 * SKIP() runs, e.g. return.
 */
#define RFP_FIRST_CHGPROT(out, start, size, prot, pgoff) do {		\
	const char *__lvl = rfp_expect_mode();				\
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
	} else if (!strcmp(__lvl, "off") || !strcmp(__lvl, "absent")) {	\
		ASSERT_EQ(-1, __ret);					\
		ASSERT_EQ(EINVAL, __err);				\
		SKIP(out, "EXPECT_MANYPROTS=%s: MAP_CHGPROT refused "	\
		     "with EINVAL, as specified", __lvl);		\
	} else {							\
		SKIP(out, "EXPECT_MANYPROTS=%s: nothing to expect", __lvl); \
	}								\
} while (0)

/* SKIP(out, ...) unless the runner says MAP_CHGPROT must work here. */
#define RFP_NEED_MANYPROTS(out) do {					\
	if (!manyprots_expected())					\
		SKIP(out, "needs MAP_CHGPROT (EXPECT_MANYPROTS=%s)",	\
		     rfp_expect_mode());				\
} while (0)

/* For tests that page shmem out: SKIP without swap. */
#define RFP_NEED_SWAP() do {						\
	if (rfp_meminfo_kb("SwapTotal") <= 0)				\
		SKIP(return, "no swap in this machine");		\
} while (0)

/* For tests that move pages between NUMA nodes: SKIP with one node. */
#define RFP_NEED_TWO_NODES() do {					\
	if (access("/sys/devices/system/node/node1", F_OK))		\
		SKIP(return, "one NUMA node");				\
} while (0)

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
 * Expect want of npages from start to be mlocked.  Where /proc/kpageflags
 * cannot tell page by page (UML), check what can be told: that the VMA at
 * start is VM_LOCKED exactly when pages should be; the QEMU guest checks
 * the pages themselves.
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

#endif
