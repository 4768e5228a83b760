/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Single mode's own header: the model both sides follow and what the
 * files of single mode share (fuzz/single.c says how the oracle works).
 *
 *   single.c   the sequence: which operation next, the run, its setup
 *   model.c    the generator, the record of operations, reports, the model
 *   sides.c    building the two sides and converting A
 *   compare.c  the observer: probes, sweeps, maps, the files
 *   remap.c    remap_file_pages(): prediction, calls, bad arguments
 *   process.c  kernel accesses (read/write, process_vm_*, /proc/self/mem,
 *              O_DIRECT), probes and fork
 *   madvise.c  madvise() (reclaim, populate), mlock(), clear_refs, poison
 *   files.c    pwrite, hole punch, truncate of the files
 *   vma.c      munmap, mremap, mprotect
 *   numa.c     mbind, move_pages
 */
#ifndef FUZZ_SINGLE_H
#define FUZZ_SINGLE_H

#include "fuzz.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef PROT_SEM
#define PROT_SEM 0x8
#endif
#define FZ_MPOL_DEFAULT 0
#define FZ_MPOL_PREFERRED 1
#define FZ_MPOL_BIND 2
#define FZ_MPOL_INTERLEAVE 3
#define FZ_MPOL_MF_MOVE (1 << 1)

#define NMAX 32
#define SMALL_N 24		/* tracked pages = the A VMA */
#define SMALL_FP 64		/* file pages */
#define FAR_N 16		/* the tracked window of the 8 TiB VMA */
#define FAR_LOW 32		/* far layout: file pages [0, 32) and the window's */
/* the first page index (from the VMA's start) the reverse index cannot name */
#define FAR_IDX ((1UL << 31) - 1)
#define FAR_PAGES (FAR_IDX + 1 + 16)	/* the far VMA and its files */
#define RING 24
#define SWEEP_EVERY 48
#define FILES_EVERY 96
#define CHILD_OPS 24
#define SRC_PAGES 3
#define RW (PROT_READ | PROT_WRITE)
#define RWX (RW | PROT_EXEC)

/*
 * Differences the documentation does not explain, but which leave both
 * sides the same (note_diff()).
 */
enum { NOTE_EOF_SIGBUS, NOTE_NR };

enum side { SA, SB };

struct fpage {
	unsigned long pgoff;	/* the file page it maps */
	int prot;		/* as A was given it (B has it normalised) */
	bool mapped;
	int locked;		/* 0, 1 mlock(), 2 mlock2(MLOCK_ONFAULT) */
};

struct fz {
	const struct fz_opts *o;
	struct fz_stats *st;
	uint64_t rng;		/* the sequence */
	uint64_t orng;		/* the current operation's generator */
	long opi, subi;		/* operation; in a forked child, its own count */
	int depth;		/* 1 in a forked child */
	bool uml, numa2, far_ok, clear_refs_ok;
	bool converted;		/* the A VMA had its first MAP_CHGPROT */
	int hw_left;

	int layout;		/* FZ_SMALL or FZ_FAR */
	int file_layout;	/* what the files were made for, -1: none */
	size_t n;		/* tracked pages */
	unsigned long lin0;	/* linear file page of tracked page 0 */
	unsigned long idx0;	/* its index from where the A VMA started */
	unsigned long fpages;	/* the files' size when whole, in pages */
	int vprot;		/* the A VMA's own protection */
	int fd[2];		/* F_A, F_B */
	char *map[2];		/* tracked page 0 of A, of B */
	char *res[2];		/* what to munmap: guard, pages, guard */
	size_t res_len[2];
	char *mvto;		/* a reserved hole for mremap(MREMAP_FIXED) */
	struct fpage pg[NMAX];
	size_t hot;		/* a page recently worked on: picked more often */
	unsigned long lim;	/* the first file offset MAP_CHGPROT refuses */
	unsigned long poisoned[16];
	int npoisoned;

	int mem;		/* /proc/self/mem, O_RDWR (a child opens its own) */
	int scratch;		/* the src pages, for read() into the mappings */
	int out[2];		/* what write() from A, from B wrote */
	int od[2], odr[2];	/* O_DIRECT files and buffered fds of them */
	unsigned char *src;	/* SRC_PAGES pattern pages, page aligned */
	unsigned char *buf[2];	/* 2 * SRC_PAGES pages each */

	char ring[RING][224];
	long nring;
	char *cur;
	bool failed;
	long notes[NOTE_NR];	/* note_diff() by kind */
};

/* --- the generator: each operation draws from its own --- */

static inline uint64_t R(struct fz *z)
{
	return rfp_rand(&z->orng);
}

static inline unsigned long rnd(struct fz *z, unsigned long n)
{
	return n ? R(z) % n : 0;
}

static inline bool chance(struct fz *z, int pct)
{
	return (int)rnd(z, 100) < pct;
}

/* --- the model (model.c) --- */

static inline char *at(struct fz *z, int side, size_t i)
{
	return z->map[side] + i * PS;
}

static inline unsigned long linear(struct fz *z, size_t i)
{
	return z->lin0 + i;
}

int norm(struct fz *z, int prot);
bool allows(struct fz *z, int prot, enum rfp_access a);
unsigned long interest(struct fz *z);
size_t pick_page(struct fz *z);
size_t pick_np(struct fz *z, size_t s);
size_t mapped_run(struct fz *z, size_t s, size_t max);
bool is_poisoned(struct fz *z, unsigned long pgoff);
void forget_poisoned(struct fz *z, unsigned long from, unsigned long to);
bool poison_entry(struct fz *z, size_t i);
unsigned long file_pages_now(struct fz *z);
bool x_safe(struct fz *z, size_t i);

/* the record of operations and reports */
void note(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void more(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *layout_name(int l);
void note_diff(struct fz *z, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool fail(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- the observer (compare.c) --- */

enum pkind { P_READ, P_WRITE8, P_WRITE64, P_EXEC, P_NKINDS };

void page_str(struct fz *z, size_t i, char *s, size_t len);
bool cmp_probe(struct fz *z, size_t i, enum pkind k);
bool check_some(struct fz *z, size_t s, size_t k, int probes);
bool check_all(struct fz *z, size_t s, size_t k);
bool sweep(struct fz *z);
bool files_same(struct fz *z);

/* --- the two sides (sides.c) --- */

void unmap_all(struct fz *z);
void close_files(struct fz *z);
bool map_b(struct fz *z, size_t i, unsigned long pgoff, int prot, bool populate);
int build(struct fz *z);

/* --- operations --- */

enum { R_CHGPROT, R_LEGACY, R_BAD };

bool remap_call(struct fz *z, size_t s, size_t np, int prot, unsigned long pgoff,
		int flags, bool legacy);
bool op_remap(struct fz *z, int kind);
bool op_probe(struct fz *z);
bool op_kernel(struct fz *z);
bool op_fork(struct fz *z);
bool op_madvise(struct fz *z);
bool op_mlock(struct fz *z);
bool op_clear_refs(struct fz *z);
bool op_hwpoison(struct fz *z);
bool op_file_write(struct fz *z);
bool op_punch(struct fz *z);
bool op_truncate(struct fz *z);
bool op_munmap(struct fz *z);
bool op_mremap(struct fz *z);
bool op_mprotect(struct fz *z);
bool op_mbind(struct fz *z);
bool op_move_pages(struct fz *z);

/* --- the sequence (single.c) --- */

bool one_op(struct fz *z);
bool run_ops(struct fz *z, long count);

#endif
