// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: the A VMA itself: munmap() of pages on both sides,
 * and mremap() and mprotect(), which the documentation restricts on A.
 */
#include "single.h"

bool op_munmap(struct fz *z)
{
	size_t s = pick_page(z), k = mapped_run(z, s, 1 + rnd(z, 3));
	int r[2];

	if (!k)
		return true;
	note(z, "munmap pages %zu-%zu", s, s + k - 1);
	for (int side = SA; side <= SB; side++)
		r[side] = munmap(at(z, side, s), k * PS);
	if (r[SA] || r[SB])
		return fail(z, "munmap: A %d, B %d (%s)", r[SA], r[SB], strerror(errno));
	for (size_t j = s; j < s + k; j++)
		z->pg[j] = (struct fpage){ 0, 0, false, 0 };
	return check_all(z, s, k) && check_all(z, s ? s - 1 : 0, 1);
}

/* The pages from s that lie in the same A VMA as s, at most max. */
static size_t same_vma(struct fz *z, size_t s, size_t max)
{
	unsigned long vs, ve;
	size_t k;

	if (!z->pg[s].mapped || rfp_vma_of(at(z, SA, s), &vs, &ve, NULL))
		return 0;
	k = (ve - (unsigned long)at(z, SA, s)) / PS;
	if (k > z->n - s)
		k = z->n - s;
	return k < max ? k : max;
}

bool op_mremap(struct fz *z)
{
	size_t s = pick_page(z), k = same_vma(z, s, 1 + rnd(z, 6)), j;
	int w = rnd(z, 3);
	void *r;

	if (!k || (w == 0 && k < 2))
		return true;
	errno = 0;
	if (w == 0) {
		/* shrinking is allowed: the tail goes, on both sides */
		j = 1 + rnd(z, k - 1);
		note(z, "mremap pages %zu-%zu to %zu pages", s, s + k - 1, j);
		r = mremap(at(z, SA, s), k * PS, j * PS, 0);
		if (r != at(z, SA, s))
			return fail(z, "A: mremap() shrinking pages %zu-%zu to %zu: %s", s,
				    s + k - 1, j, strerror(errno));
		if (munmap(at(z, SB, s + j), (k - j) * PS))
			return fail(z, "reference: munmap: %s", strerror(errno));
		for (size_t i = s + j; i < s + k; i++)
			z->pg[i] = (struct fpage){ 0, 0, false, 0 };
		return check_all(z, s + j - 1, 2);
	}
	if (w == 1) {
		int flags = chance(z, 50) ? MREMAP_MAYMOVE : 0;

		j = k + 1 + rnd(z, 2);
		note(z, "mremap pages %zu-%zu to %zu pages%s", s, s + k - 1, j,
		     flags ? ", may move" : "");
		r = mremap(at(z, SA, s), k * PS, j * PS, flags);
	} else {
		note(z, "mremap pages %zu-%zu elsewhere (MREMAP_FIXED)", s, s + k - 1);
		r = mremap(at(z, SA, s), k * PS, k * PS, MREMAP_MAYMOVE | MREMAP_FIXED, z->mvto);
	}
	if (r != MAP_FAILED || errno != EINVAL)
		return fail(z, "A: mremap() %s returned %p (%s), the documentation says EINVAL",
			    w == 1 ? "growing" : "moving", r, strerror(errno));
	/* stock mremap() may have unmapped the target first: reserve it again */
	if (w == 2 && mmap(z->mvto, z->n * PS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_NORESERVE | MAP_FIXED, -1, 0) != z->mvto)
		return fail(z, "cannot reserve the mremap target again: %s", strerror(errno));
	return check_all(z, s, k);
}

bool op_mprotect(struct fz *z)
{
	size_t s = pick_page(z), k = mapped_run(z, s, pick_np(z, s));
	int prot = rfp_prots[rnd(z, 8)], r;

	if (!k)
		return true;
	note(z, "mprotect pages %zu-%zu %s", s, s + k - 1, fz_prot_str(prot));
	errno = 0;
	r = mprotect(at(z, SA, s), k * PS, prot);
	if (r != -1 || errno != EACCES)
		return fail(z, "A: mprotect() returned %d (%s), the documentation says EACCES",
			    r, r ? strerror(errno) : "success");
	return check_all(z, s, k);
}
