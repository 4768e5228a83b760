// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: remap_file_pages() calls, with MAP_CHGPROT, legacy
 * and with bad arguments.  What the documentation says the call must do
 * on A is predicted first; a call that works is applied to B page by page,
 * one that fails must have changed nothing.
 */
#include "single.h"

/* --- remap_file_pages() --- */

enum { WHY_OK, WHY_ARGS, WHY_VMA, WHY_LIMIT, WHY_FAR };

/*
 * What the documentation says the call must do on A: 0 or the errno;
 * *why says which rule refused it, *npages how many pages it covers.
 */
static int predict(struct fz *z, char *start, size_t size, int prot,
		   unsigned long pgoff, int flags, bool legacy, int *why,
		   size_t *npages)
{
	uintptr_t a = (uintptr_t)start, end;
	unsigned long vs, ve;
	size_t np, s;
	char perms[5];
	bool all_linear;
	int eprot;

	*why = WHY_ARGS;
	*npages = 0;
	if (legacy) {
		/* the emulation's checks: start and size rounded down */
		if (prot)
			return EINVAL;
		a &= ~(PS - 1);
		size &= ~(PS - 1);
		if (!size || a + size <= a)
			return EINVAL;
	} else {
		if (flags & ~(MAP_CHGPROT | MAP_NONBLOCK))
			return EINVAL;
		if (prot & ~RWX)
			return EINVAL;
		if (a % PS || !size)
			return EINVAL;
	}
	np = size / PS + !!(size % PS);
	end = a + np * PS;
	if (np > (UINTPTR_MAX - a) / PS || end <= a)
		return EINVAL;
	*npages = np;
	*why = WHY_VMA;
	if (rfp_vma_of(start, &vs, &ve, perms) || perms[3] != 's' || end > ve)
		return EINVAL;
	*why = WHY_ARGS;
	if (pgoff + np < pgoff)
		return EINVAL;
	/* a range inside the VMA is inside the tracked pages: the generator sees to it */
	s = (start - z->map[SA]) / PS;
	eprot = legacy ? z->vprot : prot;
	all_linear = pgoff == linear(z, s) && eprot == z->vprot;
	*why = WHY_LIMIT;
	if (!all_linear && pgoff + np > z->lim)
		return EINVAL;
	*why = WHY_FAR;
	for (size_t j = 0; j < np; j++)
		if (z->idx0 + s + j >= FAR_IDX && pgoff + j != linear(z, s + j))
			return EINVAL;
	*why = WHY_OK;
	return 0;
}

/*
 * Page s on, size bytes (np pages unless a bad size was asked for by the
 * caller through size itself): call, compare with the prediction, apply to
 * B when it worked, check.
 */
static bool remap_sized(struct fz *z, char *start, size_t size, int prot,
			unsigned long pgoff, int flags, bool legacy)
{
	size_t np, s = (start - z->map[SA]) / PS;
	int why, exp, err, eprot = legacy ? z->vprot : prot;
	long ret;

	exp = predict(z, start, size, prot, pgoff, flags, legacy, &why, &np);
	more(z, " rfp(A+%#lx, %#zx, %#x %s, pgoff %#lx, %s%s%s)",
	     (long)(start - z->map[SA]), size, prot, prot & ~RWX ? "bad" : fz_prot_str(prot),
	     pgoff, flags & MAP_CHGPROT ? "CHGPROT" : "legacy",
	     flags & MAP_NONBLOCK ? "|NONBLOCK" : "",
	     flags & ~(MAP_CHGPROT | MAP_NONBLOCK) ? "|bad" : "");
	if (!exp && (s >= z->n || s + np > z->n)) {
		more(z, ": not tracked, not made");
		return true;
	}
	errno = 0;
	ret = rfp(start, size, prot, pgoff, flags);
	err = errno;
	more(z, " = %ld%s%s", ret, ret ? " " : "", ret ? strerror(err) : "");
	if (exp && (ret != -1 || err != exp))
		return fail(z, "A: remap_file_pages() returned %ld (%s), the documentation says %s (%s)",
			    ret, ret ? strerror(err) : "success", strerror(exp),
			    why == WHY_FAR ?
			    "a nonlinear page 2^31 - 1 pages or more above the VMA's start" :
			    why == WHY_LIMIT ? "an offset beyond what a non-present entry holds" :
			    why == WHY_VMA ? "the range is not inside one shared VMA" :
			    "bad arguments");
	if (!exp && ret)
		return fail(z, "A: remap_file_pages() failed (%s), the documentation says it works",
			    strerror(err));
	if (exp) {
		/* an error changes nothing: every page it named, every access */
		z->st->refused++;
		z->st->far_refused += why == WHY_FAR;
		if (s < z->n)
			return check_all(z, s, np ? np : 1);
		return true;
	}
	z->st->remaps++;
	for (size_t j = 0; j < np; j++) {
		if (!map_b(z, s + j, pgoff + j, eprot, !(flags & MAP_NONBLOCK)))
			return false;
		z->pg[s + j].pgoff = pgoff + j;
		z->pg[s + j].prot = eprot;
	}
	z->hot = s + rnd(z, np);
	return check_some(z, s, np, 1 + rnd(z, 3));
}

bool remap_call(struct fz *z, size_t s, size_t np, int prot,
		       unsigned long pgoff, int flags, bool legacy)
{
	return remap_sized(z, at(z, SA, s), np * PS, prot, pgoff, flags, legacy);
}

static unsigned long pick_pgoff(struct fz *z, size_t s)
{
	switch (rnd(z, 20)) {
	case 7: case 8: case 9: case 10:
		return z->pg[s].pgoff;		/* the first page keeps it: prot only */
	case 11: case 12: case 13:
		return linear(z, s);
	case 14:
		return z->fpages + rnd(z, 4);	/* past EOF */
	case 15:
		return z->lim - 1 - rnd(z, 3);
	case 16:
		return z->lim + rnd(z, 2);
	default:
		return interest(z);
	}
}

static int pick_prot(struct fz *z)
{
	return chance(z, 15) ? z->vprot : rfp_prots[rnd(z, 8)];
}

bool op_remap(struct fz *z, int kind)
{
	static const int bad_flags[] = { MAP_POPULATE, MAP_LOCKED, 0x40000000, MAP_SHARED };
	static const int bad_prots[] = { PROT_SEM, 0x10, PROT_GROWSDOWN };
	size_t s = pick_page(z), np, size;
	bool legacy = kind == R_LEGACY;
	unsigned long pgoff;
	int prot, flags;
	char *start;

	if (z->layout == FZ_FAR && chance(z, 35))
		s = z->n / 2 - 1 - rnd(z, 2);	/* just below the 8 TiB line */
	np = pick_np(z, s);
	pgoff = pick_pgoff(z, s);
	prot = legacy ? 0 : pick_prot(z);
	flags = (legacy ? 0 : MAP_CHGPROT) | (chance(z, 35) ? MAP_NONBLOCK : 0);
	start = at(z, SA, s);
	size = np * PS;
	if (chance(z, 20))
		size -= 1 + rnd(z, PS - 1);	/* rounded up to whole pages */
	note(z, "%s", legacy ? "legacy" : kind == R_BAD ? "bad" : "remap");
	if (kind == R_BAD) {
		switch (rnd(z, 9)) {
		case 0:
			flags |= MAP_CHGPROT | bad_flags[rnd(z, 4)];
			break;
		case 1:
			prot |= bad_prots[rnd(z, 3)];
			break;
		case 2:
			start += 1 + rnd(z, PS - 1);
			break;
		case 3:
			size = 0;
			break;
		case 4:
			size = -PS;			/* start + size wraps */
			break;
		case 5:
			pgoff = ~0UL - rnd(z, 3);	/* pgoff + size wraps */
			size = (2 + rnd(z, 3)) * PS;
			break;
		case 6:
			pgoff = z->lim - 1;		/* across the offset limit */
			size = (2 + rnd(z, 2)) * PS;
			break;
		case 7:
			if (z->layout == FZ_SMALL) {	/* past the VMA's end, or before it */
				start = chance(z, 70) ? at(z, SA, z->n - 1 - rnd(z, 2)) :
					z->map[SA] - PS;
				size = (3 + rnd(z, 2)) * PS;
			} else {
				pgoff = 1UL << 52;
			}
			break;
		default:
			legacy = true;			/* a legacy call must have prot 0 */
			flags = chance(z, 50) ? MAP_NONBLOCK : 0;
			prot = 1 + rnd(z, 7);
			break;
		}
	}
	return remap_sized(z, start, size, prot, pgoff, flags, legacy);
}
