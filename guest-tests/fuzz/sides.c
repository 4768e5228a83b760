// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: building the two sides.  A is one MAP_SHARED VMA
 * of memfd (or tmpfs file) F_A; B maps the same pages of F_B one
 * mmap(MAP_FIXED) each.  The linear VMA is left in some state (dirty,
 * clear_refs, swapped) before A's first MAP_CHGPROT converts it.
 */
#include "single.h"

#include <linux/magic.h>
#include <sys/statfs.h>

/* --- building the two sides --- */

void unmap_all(struct fz *z)
{
	for (int s = SA; s <= SB; s++) {
		if (z->res[s])
			munmap(z->res[s], z->res_len[s]);
		z->res[s] = NULL;
	}
}

void close_files(struct fz *z)
{
	for (int s = SA; s <= SB; s++) {
		if (z->fd[s] >= 0)
			close(z->fd[s]);
		z->fd[s] = -1;
	}
	z->file_layout = -1;
}

/* A shmem file: a memfd, or a file on the tmpfs at /tmp when there is one. */
static int shmem_file(bool tmpfs)
{
	char path[] = "/tmp/rfp_fuzz.XXXXXX";
	struct statfs sfs;
	int fd;

	if (tmpfs) {
		fd = mkstemp(path);
		if (fd >= 0) {
			unlink(path);
			if (!fstatfs(fd, &sfs) && sfs.f_type == TMPFS_MAGIC)
				return fd;
			close(fd);
		}
	}
	return memfd_create("rfp_fuzz", 0);
}

static bool new_files(struct fz *z)
{
	bool tmpfs = chance(z, 30);

	close_files(z);
	z->fpages = z->layout == FZ_FAR ? FAR_PAGES : SMALL_FP;
	for (int s = SA; s <= SB; s++) {
		z->fd[s] = shmem_file(tmpfs);
		if (z->fd[s] < 0 || ftruncate(z->fd[s], (off_t)(z->fpages * PS)))
			return fail(z, "cannot make a %lu-page shmem file: %s",
				    z->fpages, strerror(errno));
		if (z->layout == FZ_FAR) {
			if (rfp_pattern_fd(z->fd[s], 0, FAR_LOW, 0) ||
			    rfp_pattern_fd(z->fd[s], FAR_IDX - FAR_N / 2, FAR_N, 0))
				return fail(z, "cannot fill the files: %s", strerror(errno));
		} else if (rfp_pattern_fd(z->fd[s], 0, z->fpages, 0)) {
			return fail(z, "cannot fill the files: %s", strerror(errno));
		}
	}
	z->file_layout = z->layout;
	z->npoisoned = 0;	/* new frames: the old poisoned ones went with the files */
	more(z, " new %s files", tmpfs ? "tmpfs" : "memfd");
	return true;
}

/* B's page i: file page pgoff with protection prot (normalised), locked as A's. */
bool map_b(struct fz *z, size_t i, unsigned long pgoff, int prot, bool populate)
{
	char *p = at(z, SB, i);

	if (mmap(p, PS, norm(z, prot), MAP_SHARED | MAP_FIXED | (populate ? MAP_POPULATE : 0),
		 z->fd[SB], (off_t)(pgoff * PS)) != p)
		return fail(z, "reference: mmap of page %zu (pgoff %#lx): %s", i, pgoff,
			    strerror(errno));
	/* ENOMEM: a page past EOF could not be populated, but it is locked */
	if (z->pg[i].locked == 1 && mlock(p, PS) && errno != ENOMEM)
		return fail(z, "reference: mlock of page %zu: %s", i, strerror(errno));
	if (z->pg[i].locked == 2 && syscall(SYS_mlock2, p, PS, MLOCK_ONFAULT))
		return fail(z, "reference: mlock2 of page %zu: %s", i, strerror(errno));
	return true;
}

/*
 * Map both sides afresh, the A VMA with its own protection vprot, each B
 * page of it alike, then convert A with a first MAP_CHGPROT call.
 */
int build(struct fz *z)
{
	static const int vprots[] = {
		PROT_NONE, PROT_READ, RW, RW, PROT_READ | PROT_EXEC, RWX,
	};
	static const unsigned long lin0s[] = { 0, 16, 48 };
	const struct fz_opts *o = z->o;
	size_t len;
	char *r;

	unmap_all(z);
	z->layout = o->layout == FZ_MIXED ? (z->far_ok && chance(z, 25) ? FZ_FAR : FZ_SMALL) :
		    (int)o->layout;
	z->vprot = vprots[rnd(z, ARRAY_SIZE(vprots))];
	z->converted = false;
	if (z->layout == FZ_FAR) {
		z->n = FAR_N;
		z->idx0 = FAR_IDX - FAR_N / 2;	/* the window straddles the limit */
		z->lin0 = z->idx0;
		if (chance(z, 50))
			z->vprot = RW;
	} else {
		z->n = SMALL_N;
		z->idx0 = 0;
		z->lin0 = lin0s[rnd(z, 3)];	/* 48: the last 8 pages past EOF */
	}
	note(z, "build: %s layout, VMA %s, linear page 0 = %#lx", layout_name(z->layout),
	     fz_prot_str(z->vprot), z->lin0);
	if (z->file_layout != z->layout || chance(z, 10))
		if (!new_files(z))
			return FZ_ERROR;

	len = (z->n + 2) * PS;
	for (int s = SA; s <= SB; s++) {
		r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED) {
			fail(z, "cannot reserve %zu bytes: %s", len, strerror(errno));
			return FZ_ERROR;
		}
		z->res[s] = r;
		z->res_len[s] = len;
		z->map[s] = r + PS;
	}
	if (z->layout == FZ_FAR) {
		/* A: one VMA of 8 TiB and some pages; B keeps its guards */
		munmap(z->res[SA], z->res_len[SA]);
		len = FAR_PAGES * PS;
		r = mmap(NULL, len, z->vprot, MAP_SHARED | MAP_NORESERVE, z->fd[SA], 0);
		if (r == MAP_FAILED) {
			z->res[SA] = NULL;
			more(z, ": no room (%s)", strerror(errno));
			return FZ_NOROOM;
		}
		z->res[SA] = r;
		z->res_len[SA] = len;
		z->map[SA] = r + z->idx0 * PS;
	} else if (mmap(z->map[SA], z->n * PS, z->vprot, MAP_SHARED | MAP_FIXED, z->fd[SA],
			(off_t)(z->lin0 * PS)) != z->map[SA]) {
		fail(z, "mmap of the A VMA: %s", strerror(errno));
		return FZ_ERROR;
	}
	for (size_t i = 0; i < z->n; i++) {
		z->pg[i] = (struct fpage){ linear(z, i), z->vprot, true, 0 };
		if (!map_b(z, i, linear(z, i), z->vprot, false))
			return FZ_ERROR;
	}
	z->hot = rnd(z, z->n);

	/*
	 * The VMA is still linear: leave its page table in some state
	 * (present, dirty, write-protected by clear_refs, swapped, dropped)
	 * for the conversion to start from.
	 */
	if (chance(z, 50)) {
		note(z, "dirty every page");
		for (size_t i = 0; i < z->n; i++)
			if (!cmp_probe(z, i, P_WRITE64))
				return FZ_FOUND;
	}
	for (int k = rnd(z, 6); k > 0; k--)
		if (!one_op(z))
			return FZ_FOUND;
	if (z->clear_refs_ok && chance(z, 50) && !op_clear_refs(z))
		return FZ_FOUND;

	/*
	 * The first MAP_CHGPROT, which converts the VMA: one that must work,
	 * so in the far layout below the 8 TiB line.
	 */
	{
		size_t lim = z->layout == FZ_FAR ? z->n / 2 : z->n;
		size_t s = rnd(z, lim), np = 1 + rnd(z, lim - s);
		unsigned long pgoff = chance(z, 50) ? linear(z, s) : interest(z);

		note(z, "first MAP_CHGPROT of the VMA:");
		if (!remap_call(z, s, np, rfp_prots[1 + rnd(z, 7)], pgoff,
				MAP_CHGPROT | (chance(z, 50) ? MAP_NONBLOCK : 0), false) ||
		    !check_all(z, s, np))
			return FZ_FOUND;
		if (rfp_vmflag(z->map[SA], "nl") != 1) {
			fail(z, "the first MAP_CHGPROT left the VMA without nl in smaps");
			return FZ_FOUND;
		}
		z->converted = true;
	}
	return FZ_PASS;
}
