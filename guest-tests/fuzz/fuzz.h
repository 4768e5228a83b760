/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rfp_fuzz: an adversarial differential fuzzer of
 * remap_file_pages(MAP_CHGPROT), linked into the one rfp_fuzz binary with
 * rfp_fuzz.c (the harness tests and the command line) and rfp.c.
 *
 * single.c (and the files single.h lists): the oracle.  One seeded
 * sequence of operations is applied to (A) one VMA changed with
 * MAP_CHGPROT and (B) the same pages mapped one mmap(MAP_FIXED) each, over
 * two memfds with the same contents, and every observable is compared;
 * where Documentation/mm/remap_file_pages.rst says the two differ, A is
 * checked against what it says.
 *
 * threads.c: no oracle.  Threads and forked processes hammer one
 * nonlinear VMA; only invariants are checked.
 */
#ifndef FUZZ_H
#define FUZZ_H

/*
 * Not the test's own file: without the harness (it defines functions with
 * external linkage, see rfp.h).
 */
#define RFP_LIBRARY
#include "../rfp.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* what both modes call, for libc headers older than the guest's kernel */
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

enum fz_mode { FZ_SINGLE, FZ_THREADS };

/* Which A VMA single mode builds: a small one, one of 8 TiB, or both. */
enum fz_layout { FZ_SMALL, FZ_FAR, FZ_MIXED };

struct fz_opts {
	uint64_t seed;
	long ops;		/* operation budget (per thread in threads mode) */
	long seconds;		/* time budget when ops is 0 */
	enum fz_mode mode;
	enum fz_layout layout;
	int hwpoison;		/* MADV_HWPOISON calls allowed (each side) */
	bool verbose;		/* every operation */
	/*
	 * Operations drawn but not made, to minimise a mismatch: "N" or
	 * "N.M" (operation M of the child forked at N), comma-separated.
	 */
	const char *skip;
	/* NOTEs (undocumented differences that stop nothing) do not fail the run */
	bool lenient;
	/* threads mode: only these workers ("accessor,madviser,..."), to narrow down */
	const char *workers;
	const char *tag;	/* line prefix: "# " under the harness */
};

/* What a run did, so that a test can tell that it really exercised things. */
struct fz_stats {
	long ops;
	long remaps;		/* remap_file_pages() calls that worked */
	long refused;		/* ... that were refused as predicted */
	long probes;		/* access probes compared */
	long denied;		/* ... that faulted on both sides */
	long kernel;		/* kernel accesses compared */
	long forks;
	long hwpoisons;
	long sweeps;
	long far_refused;	/* refused by the 8 TiB rule */
	long violations;	/* threads mode: broken invariants */
	long mlock_none;	/* mlock() over PROT_NONE pages: A 0, B ENOMEM */
	long notes;		/* undocumented differences that did not stop the run */
};

/* Results of fz_single() and fz_threads(). */
enum {
	FZ_PASS = 0,		/* budget spent, nothing found */
	FZ_FOUND = 1,		/* a mismatch or broken invariant (printed) */
	FZ_ERROR = 2,		/* the fuzzer could not set up (printed) */
	FZ_NOROOM = 3,		/* the far layout does not fit here */
};

int fz_single(const struct fz_opts *o, struct fz_stats *st);
int fz_threads(const struct fz_opts *o, struct fz_stats *st);

/* --- util.c --- */

/* printf with the run's tag, then a newline; flushed. */
void fz_say(const struct fz_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Monotonic seconds. */
double fz_now(void);

/* EXPECT_LEVEL=uml: no NX, no MEMORY_FAILURE, one node, a small TASK_SIZE. */
bool fz_uml(void);
/* A second NUMA node (move_pages, mbind). */
bool fz_two_nodes(void);

/*
 * rfp_catch() plus a handler of our own in front of it: whole-page copies
 * under one sigsetjmp() without a sigprocmask() call per word, and a
 * fault outside any probe kills the process instead of jumping to a
 * stale buffer.  Call once per process (threads share it).
 */
void fz_catch(void);

/*
 * The probes: fz_try*() are rfp_try*() (the outcome as rfp_try() gives
 * it, then rfp_fault_addr and rfp_si_code); fz_copy() copies len bytes
 * (a multiple of 8, aligned) word by word with the same outcome.
 */
int fz_try(void *p, enum rfp_access a);
int fz_load64(const void *p, uint64_t *v);
int fz_store64(void *p, uint64_t v);
int fz_store8(void *p, unsigned char v);
int fz_copy(void *dst, const void *src, size_t len);
/* After a fz_copy() that faulted: where, and its raw si_code. */
void *fz_copy_addr(void);
int fz_copy_si_code(void);

/* A one-page PROT_READ MAP_SHARED mapping of a new memfd; MAP_FAILED */
char *fz_scratch_page(void);

/*
 * The first file page offset MAP_CHGPROT refuses (what a non-present
 * entry can hold), found on a scratch mapping by bisection, or 0.
 */
unsigned long fz_offset_limit(void);

/* "r-x" for a protection. */
const char *fz_prot_str(int prot);

#endif
