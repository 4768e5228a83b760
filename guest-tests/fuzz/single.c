// SPDX-License-Identifier: GPL-2.0
/*
 * Single mode: the oracle.  One seeded sequence of operations goes to
 *   A: one MAP_SHARED VMA over memfd F_A, changed with MAP_CHGPROT;
 *   B: the same pages mapped one mmap(MAP_FIXED) each over memfd F_B,
 * which holds what F_A holds.  After each operation its results on both
 * sides are compared (returns, errnos, data, which accesses fault, with
 * which signal, si_code and address), and now and then every page and
 * both files whole.  Where Documentation/mm/remap_file_pages.rst says that
 * A differs (calls refused on A, errors that must change nothing, the
 * MADV_POPULATE_* errno, mlock() over PROT_NONE pages) A is checked
 * against what it says.  B gets each page's protection as the
 * documentation normalises it, so that the kernel's GUP sees the same
 * protection on both sides.
 *
 * Each operation draws its own generator from the sequence, so its
 * choices never depend on what the kernel answered to an earlier one: a
 * seed and an operation count replay a run exactly.
 */
#include "single.h"

/* --- the sequence --- */

enum op {
	OP_REMAP, OP_LEGACY, OP_BAD, OP_PROBE, OP_KERNEL, OP_MADV, OP_CLEAR_REFS, OP_FWRITE,
	OP_PUNCH, OP_TRUNC, OP_MLOCK, OP_MUNMAP, OP_MREMAP, OP_MPROTECT, OP_MBIND, OP_MOVE,
	OP_FORK, OP_HWPOISON, OP_REBUILD, OP_NR
};

static const int op_weight[OP_NR] = {
	[OP_REMAP] = 250, [OP_LEGACY] = 40, [OP_BAD] = 60, [OP_PROBE] = 150,
	[OP_KERNEL] = 100, [OP_MADV] = 90, [OP_CLEAR_REFS] = 30, [OP_FWRITE] = 25,
	[OP_PUNCH] = 20, [OP_TRUNC] = 20, [OP_MLOCK] = 25, [OP_MUNMAP] = 8,
	[OP_MREMAP] = 10, [OP_MPROTECT] = 10, [OP_MBIND] = 8, [OP_MOVE] = 20,
	[OP_FORK] = 12, [OP_HWPOISON] = 20, [OP_REBUILD] = 12,
};

static bool op_available(struct fz *z, enum op op)
{
	/* before the conversion: what leaves the VMA one linear VMA */
	if (!z->converted)
		return op == OP_PROBE || op == OP_KERNEL || op == OP_MADV ||
		       op == OP_CLEAR_REFS || op == OP_FWRITE || op == OP_PUNCH;
	switch (op) {
	case OP_CLEAR_REFS:
		return z->clear_refs_ok;
	case OP_MLOCK:
	case OP_MUNMAP:
	case OP_MREMAP:
		return z->layout == FZ_SMALL;
	case OP_MBIND:
	case OP_MOVE:
		return z->numa2;
	case OP_FORK:
		return !z->depth;
	case OP_HWPOISON:
		return !z->depth && z->hw_left > 0;
	case OP_REBUILD:
		return !z->depth;
	default:
		return true;
	}
}

/* Is this operation one --skip names? */
static bool skipped(struct fz *z)
{
	char want[48];
	const char *p = z->o->skip;
	size_t len;

	if (!p)
		return false;
	if (z->depth)
		len = snprintf(want, sizeof(want), "%ld.%ld", z->opi, z->subi);
	else
		len = snprintf(want, sizeof(want), "%ld", z->opi);
	for (; *p; p += strcspn(p, ","), p += !!*p)
		if (strcspn(p, ",") == len && !strncmp(p, want, len))
			return true;
	return false;
}

bool one_op(struct fz *z)
{
	int total = 0, r;
	size_t unmapped = 0;
	enum op op;

	z->orng = rfp_rand(&z->rng) | 1;
	if (z->converted && skipped(z)) {
		z->cur = NULL;
		return true;
	}
	for (op = 0; op < OP_NR; op++)
		total += op_available(z, op) ? op_weight[op] : 0;
	r = rnd(z, total);
	for (op = 0; op < OP_NR; op++) {
		if (!op_available(z, op))
			continue;
		if (r < op_weight[op])
			break;
		r -= op_weight[op];
	}
	for (size_t i = 0; i < z->n; i++)
		unmapped += !z->pg[i].mapped;
	if (!z->depth && unmapped > z->n / 3)
		op = OP_REBUILD;
	z->cur = NULL;
	switch (op) {
	case OP_REMAP:
		return op_remap(z, R_CHGPROT);
	case OP_LEGACY:
		return op_remap(z, R_LEGACY);
	case OP_BAD:
		return op_remap(z, R_BAD);
	case OP_PROBE:
		return op_probe(z);
	case OP_KERNEL:
		return op_kernel(z);
	case OP_MADV:
		return op_madvise(z);
	case OP_CLEAR_REFS:
		return op_clear_refs(z);
	case OP_FWRITE:
		return op_file_write(z);
	case OP_PUNCH:
		return op_punch(z);
	case OP_TRUNC:
		return op_truncate(z);
	case OP_MLOCK:
		return op_mlock(z);
	case OP_MUNMAP:
		return op_munmap(z);
	case OP_MREMAP:
		return op_mremap(z);
	case OP_MPROTECT:
		return op_mprotect(z);
	case OP_MBIND:
		return op_mbind(z);
	case OP_MOVE:
		return op_move_pages(z);
	case OP_FORK:
		return op_fork(z);
	case OP_HWPOISON:
		return op_hwpoison(z);
	default:
		r = build(z);
		if (r == FZ_NOROOM) {
			z->far_ok = false;
			r = build(z);
		}
		return r == FZ_PASS || (!z->failed && fail(z, "rebuild failed"));
	}
}

/* --verbose: every record the operation made */
static void show_op(struct fz *z, long from)
{
	if (!z->o->verbose)
		return;
	if (z->nring - from > RING)
		from = z->nring - RING;
	for (long k = from; k < z->nring; k++)
		fz_say(z->o, "%s", z->ring[k % RING]);
}

/* count operations (or until the budget ends, count < 0); false on a mismatch */
bool run_ops(struct fz *z, long count)
{
	double end = fz_now() + z->o->seconds, next = fz_now() + 30;

	for (long k = 0; count < 0 ? fz_now() < end : k < count; k++) {
		long from;
		bool ok;

		if (z->depth)
			z->subi = k;
		else
			z->opi++;
		from = z->nring;
		ok = one_op(z);
		show_op(z, from);
		if (!ok)
			return false;
		z->st->ops++;
		if (z->depth)
			continue;
		if (z->opi % SWEEP_EVERY == 0) {
			note(z, "sweep: every page, every access, whole contents");
			if (!sweep(z))
				return false;
		}
		if (z->opi % FILES_EVERY == 0) {
			note(z, "compare the files");
			if (!files_same(z))
				return false;
		}
		if (fz_now() >= next) {
			next = fz_now() + 30;
			fz_say(z->o, "single: op %ld: %ld remaps, %ld refused as documented, "
			       "%ld probes, %ld forks, %ld poisoned", z->opi, z->st->remaps,
			       z->st->refused, z->st->probes, z->st->forks, z->st->hwpoisons);
		}
	}
	return true;
}

/* Scratch files for kernel accesses: pattern data, write() targets, O_DIRECT. */
static bool setup_io(struct fz *z)
{
	static const char *const dirs[] = { "/var/tmp", "/root", "/" };

	z->src = mmap(NULL, SRC_PAGES * PS, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	z->buf[SA] = mmap(NULL, 4 * SRC_PAGES * PS, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z->src == MAP_FAILED || z->buf[SA] == MAP_FAILED)
		return false;
	z->buf[SB] = z->buf[SA] + 2 * SRC_PAGES * PS;
	rfp_pattern_mem(z->src, 0x5000, SRC_PAGES, 3);
	z->scratch = memfd_create("rfp_fuzz_src", 0);
	z->out[SA] = memfd_create("rfp_fuzz_out", 0);
	z->out[SB] = memfd_create("rfp_fuzz_out", 0);
	z->mem = open("/proc/self/mem", O_RDWR);
	if (z->scratch < 0 || z->out[SA] < 0 || z->out[SB] < 0 || z->mem < 0 ||
	    pwrite(z->scratch, z->src, SRC_PAGES * PS, 0) != (ssize_t)(SRC_PAGES * PS))
		return false;
	z->od[SA] = z->od[SB] = z->odr[SA] = z->odr[SB] = -1;
	for (size_t d = 0; d < ARRAY_SIZE(dirs) && z->od[SB] < 0; d++) {
		for (int s = SA; s <= SB; s++) {
			char path[64];
			int fd;

			snprintf(path, sizeof(path), "%s/rfp_fuzz.XXXXXX", dirs[d]);
			fd = mkstemp(path);
			if (fd < 0)
				break;
			z->odr[s] = fd;
			z->od[s] = open(path, O_RDWR | O_DIRECT);
			unlink(path);
			if (z->od[s] < 0 || ftruncate(fd, 4 * PS))
				break;
		}
		if (z->od[SB] < 0) {
			for (int s = SA; s <= SB; s++) {
				if (z->od[s] >= 0)
					close(z->od[s]);
				if (z->odr[s] >= 0)
					close(z->odr[s]);
				z->od[s] = z->odr[s] = -1;
			}
		}
	}
	z->mvto = mmap(NULL, NMAX * PS, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return z->mvto != MAP_FAILED;
}

int fz_single(const struct fz_opts *o, struct fz_stats *st)
{
	struct fz *z = calloc(1, sizeof(*z));
	double start = fz_now();
	int ret = FZ_PASS;

	if (!z)
		return FZ_ERROR;
	z->o = o;
	z->st = st;
	z->rng = o->seed ? o->seed : 1;
	z->fd[SA] = z->fd[SB] = -1;
	z->file_layout = -1;
	z->uml = fz_uml();
	z->numa2 = !z->uml && fz_two_nodes();
	z->far_ok = !z->uml;
	z->clear_refs_ok = true;
	z->hw_left = z->uml || geteuid() ? 0 : o->hwpoison;
	fz_catch();
	z->lim = fz_offset_limit();
	if (z->lim < (1UL << 32) || (z->lim & (z->lim - 1))) {
		fz_say(o, "single: the MAP_CHGPROT offset limit found is %#lx: "
		       "not a power of two of at least 2^32", z->lim);
		free(z);
		return FZ_FOUND;
	}
	if (!setup_io(z)) {
		fz_say(o, "single: setup: %s", strerror(errno));
		free(z);
		return FZ_ERROR;
	}
	z->opi = 0;
	z->orng = rfp_rand(&z->rng) | 1;
	ret = build(z);
	if (ret == FZ_NOROOM && o->layout == FZ_MIXED) {
		z->far_ok = false;
		ret = build(z);
	}
	show_op(z, 0);
	fz_say(o, "single: seed %#llx, %s layout, offset limit %#lx, hwpoison %d, "
	       "%s, O_DIRECT %s, %s", (unsigned long long)o->seed, layout_name(o->layout),
	       z->lim, z->hw_left, z->numa2 ? "two nodes" : "one node",
	       z->od[SA] >= 0 ? "yes" : "no", fz_uml() ? "uml" : "qemu");
	if (ret == FZ_NOROOM)
		fz_say(o, "single: no room for the 8 TiB VMA here");
	if (ret == FZ_PASS) {
		if (!run_ops(z, o->ops ? o->ops - 1 : -1) ||
		    (note(z, "final sweep"), !sweep(z)) ||
		    (note(z, "compare the files"), !files_same(z)))
			ret = FZ_FOUND;
	}
	if (ret == FZ_PASS)
		fz_say(o, "single: %ld ops in %.0f s, no mismatch: %ld remaps, %ld refused as "
		       "documented (%ld by the 8 TiB rule), %ld probes (%ld faulted), %ld kernel "
		       "accesses, %ld forks, %ld poisoned, %ld sweeps, %ld mlock() over PROT_NONE "
		       "pages", st->ops + 1, fz_now() - start, st->remaps, st->refused,
		       st->far_refused, st->probes, st->denied, st->kernel, st->forks,
		       st->hwpoisons, st->sweeps, st->mlock_none);

	st->notes = z->notes[NOTE_EOF_SIGBUS];
	if (st->notes) {
		fz_say(o, "single: NOTES (undocumented differences): %ld forbidden accesses past "
		       "EOF A SIGBUS / documented SEGV_ACCERR", z->notes[NOTE_EOF_SIGBUS]);
		if (ret == FZ_PASS && !o->lenient)
			ret = FZ_FOUND;
	}
	unmap_all(z);
	close_files(z);
	free(z);
	return ret;
}

