// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: NUMA: mbind(), refused on A, and move_pages() of
 * pages present on both sides (migration), with two nodes.
 */
#include "single.h"

#include <limits.h>

bool op_mbind(struct fz *z)
{
	static const int modes[] = {
		FZ_MPOL_DEFAULT, FZ_MPOL_PREFERRED, FZ_MPOL_BIND, FZ_MPOL_INTERLEAVE,
	};
	size_t s = pick_page(z), k = mapped_run(z, s, pick_np(z, s));
	int mode = modes[rnd(z, 4)];
	unsigned long mask = 1 + rnd(z, 3);
	long r;

	if (!k)
		return true;
	note(z, "mbind pages %zu-%zu mode %d nodes %#lx", s, s + k - 1, mode, mask);
	errno = 0;
	r = syscall(SYS_mbind, at(z, SA, s), k * PS, mode,
		    mode == FZ_MPOL_DEFAULT ? NULL : &mask, mode == FZ_MPOL_DEFAULT ? 0 : 3, 0);
	if (r != -1 || errno != EINVAL)
		return fail(z, "A: mbind() returned %ld (%s), the documentation says EINVAL",
			    r, r ? strerror(errno) : "success");
	return check_all(z, s, k);
}

/* At how many tracked pages is file page pgoff mapped? */
static size_t mapped_at(struct fz *z, unsigned long pgoff)
{
	size_t n = 0;

	for (size_t j = 0; j < z->n; j++)
		n += z->pg[j].mapped && z->pg[j].pgoff == pgoff;
	return n;
}

/*
 * move_pages() on one side; the statuses it did not write stay INT_MIN
 * (a migration that fails ends the call: it returns how many pages were
 * not moved and writes no more statuses).
 */
static long move(void **pages, int *nodes, int *st, size_t k)
{
	for (size_t j = 0; j < k; j++)
		st[j] = INT_MIN;
	return syscall(SYS_move_pages, 0, k, pages, nodes, st, FZ_MPOL_MF_MOVE);
}

/*
 * move_pages() of pages made present on both sides by a read first: the
 * same return and statuses.  A page migrated out of an mlocked range is
 * mapped again at once and stays locked (the documentation), as on B.
 */
bool op_move_pages(struct fz *z)
{
	size_t s = pick_page(z), k = 1 + rnd(z, 8);
	int node = rnd(z, 2), nodes[8], st[2][8];
	unsigned long eof = file_pages_now(z);
	void *pages[2][8];
	bool locked[8];
	char why[224] = "";
	long r[2];

	if (k > z->n - s)
		k = z->n - s;
	note(z, "move_pages pages %zu-%zu to node %d", s, s + k - 1, node);
	for (size_t j = 0; j < k; j++) {
		const struct fpage *p = &z->pg[s + j];

		/* present (just read), in the file and not poisoned */
		locked[j] = false;
		if (p->mapped && allows(z, p->prot, RFP_READ)) {
			if (!cmp_probe(z, s + j, P_READ))
				return false;
			locked[j] = p->locked && !is_poisoned(z, p->pgoff) && p->pgoff < eof;
		}
		nodes[j] = node;
		pages[SA][j] = at(z, SA, s + j);
		pages[SB][j] = at(z, SB, s + j);
	}
	/* a page can be busy for a moment: a second chance */
	for (int try = 0; try < 2; try++) {
		if (try) {
			/* A maps a migrated page again only at its next access */
			more(z, " (%s)", why);
			for (size_t j = 0; j < k; j++)
				if (z->pg[s + j].mapped && allows(z, z->pg[s + j].prot, RFP_READ) &&
				    !cmp_probe(z, s + j, P_READ))
					return false;
		}
		why[0] = 0;
		for (int side = SA; side <= SB; side++)
			r[side] = move(pages[side], nodes, st[side], k);
		more(z, "%s A %ld, B %ld", try ? "; again:" : ":", r[SA], r[SB]);
		if (r[SA] < 0 || r[SB] < 0)
			return fail(z, "move_pages: A %ld, B %ld (%s)", r[SA], r[SB],
				    strerror(errno));
		if (r[SA] != r[SB]) {
			snprintf(why, sizeof(why), "returned A %ld, B %ld", r[SA], r[SB]);
			continue;
		}
		for (size_t j = 0; j < k && !why[0] && !r[SA]; j++) {
			const struct fpage *p = &z->pg[s + j];

			/*
			 * Mapped only there: a file page mapped elsewhere too
			 * (another page, the parent of a child) is refused
			 * (EACCES) or not as its other mappings happen to be
			 * present, which differs between the sides.
			 */
			if (!p->mapped || !allows(z, p->prot, RFP_READ) ||
			    is_poisoned(z, p->pgoff) || z->depth || mapped_at(z, p->pgoff) > 1)
				continue;
			if (st[SA][j] != st[SB][j]) {
				char ps[128];

				page_str(z, s + j, ps, sizeof(ps));
				snprintf(why, sizeof(why), "%s: A status %d, B %d", ps, st[SA][j],
					 st[SB][j]);
			}
		}
		/* mlocked: mapped again at once, and still locked */
		for (size_t j = 0; j < k && !why[0]; j++) {
			int ma, mb;

			if (!locked[j])
				continue;
			if (rfp_present(pages[SA][j], 1) != 1) {
				snprintf(why, sizeof(why), "page %zu: mlocked, not present after",
					 s + j);
				break;
			}
			ma = rfp_mlocked(pages[SA][j]);
			mb = rfp_mlocked(pages[SB][j]);
			if (ma >= 0 && mb >= 0 && ma != mb)
				snprintf(why, sizeof(why), "page %zu: page mlocked after: A %d, "
					 "B %d", s + j, ma, mb);
		}
		if (!why[0])
			break;
	}
	if (why[0]) {
		char each[320];
		size_t len = 0;

		/* which page A cannot move: one at a time */
		for (size_t j = 0; j < k; j++) {
			int one;
			long r1 = move(&pages[SA][j], nodes, &one, 1);

			len += snprintf(each + len, sizeof(each) - len, " %zu:%ld/%d", s + j, r1, one);
			if (len >= sizeof(each))
				break;
		}
		len = strlen(each);
		for (size_t j = 0; j < k && len < sizeof(each) - 1; j++)
			len += snprintf(each + len, sizeof(each) - len, "%s%zu:lo %d mlocked %d",
					j ? ", " : "; VMA locked, page mlocked: ", s + j,
					rfp_vmflag(pages[SA][j], "lo"), rfp_mlocked(pages[SA][j]));
		return fail(z, "move_pages pages %zu-%zu: %s; A one page at a time (page:ret/status):%s",
			    s, s + k - 1, why, each);
	}
	return check_some(z, s, k, 2);
}
