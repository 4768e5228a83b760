// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: madvise() (reclaim, populate, drop), mlock(),
 * soft-dirty clear_refs and MADV_HWPOISON, on both sides.
 */
#include "single.h"

/* --- madvise(), mlock(), clear_refs, poison --- */

static const struct {
	int adv;
	const char *name;
	int weight;
} advs[] = {
	{ MADV_DONTNEED, "DONTNEED", 32 }, { MADV_PAGEOUT, "PAGEOUT", 12 },
	{ MADV_COLD, "COLD", 6 }, { MADV_WILLNEED, "WILLNEED", 6 },
	{ MADV_POPULATE_READ, "POPULATE_READ", 14 },
	{ MADV_POPULATE_WRITE, "POPULATE_WRITE", 14 }, { MADV_FREE, "FREE", 4 },
	{ MADV_REMOVE, "REMOVE", 6 },
};

/* madvise() of page s on one side: its result and errno */
static void madvise_side(struct fz *z, int side, size_t s, int adv, int ret[2], int err[2])
{
	errno = 0;
	ret[side] = madvise(at(z, side, s), PS, adv);
	err[side] = ret[side] ? errno : 0;
}

/* madvise() of pages [s, s + k) on both sides: results and errnos */
static void madvise_both(struct fz *z, size_t s, size_t k, int adv, int ret[2], int err[2])
{
	for (int side = SA; side <= SB; side++) {
		errno = 0;
		ret[side] = madvise(at(z, side, s), k * PS, adv);
		err[side] = ret[side] ? errno : 0;
	}
}

/*
 * MADV_POPULATE_*: the first page of the range whose protection refuses
 * the access, if nothing stops population before it (a hole, EOF,
 * poison); -1 if there is none.
 */
static long populate_refusal(struct fz *z, size_t s, size_t k, bool write)
{
	unsigned long eof = file_pages_now(z);

	for (size_t j = s; j < s + k; j++) {
		if (!z->pg[j].mapped)
			continue;	/* madvise() walks the VMAs, past holes */
		if (!allows(z, z->pg[j].prot, write ? RFP_WRITE : RFP_READ))
			return j;
		if (z->pg[j].pgoff >= eof || is_poisoned(z, z->pg[j].pgoff) ||
		    poison_entry(z, j))
			return -1;
	}
	return -1;
}

bool op_madvise(struct fz *z)
{
	int total = 0, r, a = 0, ret[2], err[2];
	size_t s = pick_page(z), k = pick_np(z, s);
	long refuse = -1;

	for (size_t j = 0; j < ARRAY_SIZE(advs); j++)
		total += advs[j].weight;
	for (r = rnd(z, total); r >= advs[a].weight; a++)
		r -= advs[a].weight;
	if (advs[a].adv == MADV_REMOVE && !z->converted)
		a = 0;	/* a linear VMA would take it */
	note(z, "madvise(%s) pages %zu-%zu", advs[a].name, s, s + k - 1);

	if (advs[a].adv == MADV_REMOVE) {
		/* refused on a nonlinear VMA; B is not asked */
		k = mapped_run(z, s, k);
		if (!k)
			return true;
		errno = 0;
		ret[SA] = madvise(at(z, SA, s), k * PS, MADV_REMOVE);
		err[SA] = errno;
		more(z, ": A %d", ret[SA]);
		if (ret[SA] != -1 || err[SA] != EINVAL)
			return fail(z, "A: MADV_REMOVE returned %d (%s), the documentation says EINVAL",
				    ret[SA], ret[SA] ? strerror(err[SA]) : "success");
		return check_all(z, s, k);
	}
	/* before the conversion A is a VMA like B's: the same answers */
	if (z->converted &&
	    (advs[a].adv == MADV_POPULATE_READ || advs[a].adv == MADV_POPULATE_WRITE))
		refuse = populate_refusal(z, s, k, advs[a].adv == MADV_POPULATE_WRITE);
	madvise_both(z, s, k, advs[a].adv, ret, err);
	more(z, ": A %d %s, B %d %s", ret[SA], ret[SA] ? strerror(err[SA]) : "",
	     ret[SB], ret[SB] ? strerror(err[SB]) : "");
	if (refuse >= 0) {
		/*
		 * A: EFAULT at the page that refuses; B, a VMA that refuses:
		 * EINVAL (check_vma_flags()).
		 */
		if (ret[SA] != -1 || err[SA] != EFAULT || ret[SB] != -1 || err[SB] != EINVAL)
			return fail(z, "MADV_%s, page %ld refuses (%s): A %d (%s), B %d (%s); "
				    "the documentation says A EFAULT, the reference gives EINVAL",
				    advs[a].name, refuse, fz_prot_str(z->pg[refuse].prot),
				    ret[SA], strerror(err[SA]), ret[SB], strerror(err[SB]));
	} else if (ret[SA] != ret[SB] || err[SA] != err[SB]) {
		return fail(z, "MADV_%s pages %zu-%zu: A %d (%s), B %d (%s)", advs[a].name,
			    s, s + k - 1, ret[SA], strerror(err[SA]), ret[SB], strerror(err[SB]));
	}
	return check_some(z, s, k, 1 + rnd(z, 3));
}

/*
 * Would mlock() of [s, s + k) populate every page it may reach, so that
 * only its PROT_NONE pages (at least one) make the reference fail?
 */
static bool mlock_none_only(struct fz *z, size_t s, size_t k)
{
	unsigned long eof = file_pages_now(z);
	bool none = false;

	for (size_t j = s; j < s + k; j++) {
		const struct fpage *p = &z->pg[j];

		if (!allows(z, p->prot, RFP_READ))
			none = true;
		else if (p->pgoff >= eof || is_poisoned(z, p->pgoff) ||
			 poison_entry(z, j))
			return false;
	}
	return none;
}

bool op_mlock(struct fz *z)
{
	static const char *const what[] = { "mlock", "munlock", "mlock2(ONFAULT)" };
	size_t s = pick_page(z), k = mapped_run(z, s, pick_np(z, s));
	int w = rnd(z, 3), ret[2], err[2];

	if (!k)
		return true;
	note(z, "%s pages %zu-%zu", what[w], s, s + k - 1);
	for (int side = SA; side <= SB; side++) {
		char *p = at(z, side, s);

		errno = 0;
		ret[side] = w == 0 ? mlock(p, k * PS) : w == 1 ? munlock(p, k * PS) :
			    syscall(SYS_mlock2, p, k * PS, MLOCK_ONFAULT);
		err[side] = ret[side] ? errno : 0;
	}
	more(z, ": A %d %s, B %d %s", ret[SA], ret[SA] ? strerror(err[SA]) : "",
	     ret[SB], ret[SB] ? strerror(err[SB]) : "");
	if (w == 0 && mlock_none_only(z, s, k)) {
		/*
		 * Documented: A leaves its PROT_NONE pages unpopulated and
		 * succeeds; the reference's PROT_NONE VMA fails populating
		 * with ENOMEM.  Both lock the range.
		 */
		if (ret[SA] || ret[SB] != -1 || err[SB] != ENOMEM)
			return fail(z, "mlock pages %zu-%zu, some PROT_NONE: A %d (%s), B %d (%s); "
				    "the documentation says A 0, a PROT_NONE VMA ENOMEM",
				    s, s + k - 1, ret[SA], strerror(err[SA]), ret[SB],
				    strerror(err[SB]));
		z->st->mlock_none++;
	} else if (ret[SA] != ret[SB] || err[SA] != err[SB]) {
		return fail(z, "%s pages %zu-%zu: A %d (%s), B %d (%s)", what[w], s, s + k - 1,
			    ret[SA], strerror(err[SA]), ret[SB], strerror(err[SB]));
	}
	/*
	 * ENOMEM from mlock(): populating failed (a page past EOF), but the
	 * range is locked all the same, on both sides.
	 */
	if (!ret[SA] || (w != 1 && err[SA] == ENOMEM))
		for (size_t j = s; j < s + k; j++)
			z->pg[j].locked = w == 0 ? 1 : w == 1 ? 0 : 2;
	return check_some(z, s, k, 1 + rnd(z, 2));
}

bool op_clear_refs(struct fz *z)
{
	note(z, "clear_refs 4 (soft-dirty)");
	if (rfp_write_str("/proc/self/clear_refs", "4")) {
		more(z, ": %s, not again", strerror(errno));
		z->clear_refs_ok = false;
		return true;
	}
	return check_some(z, 0, z->n, 1);
}

/*
 * The SIGBUS a MADV_HWPOISON call gets: since 6.6 the kernel reports the
 * poisoning of a page the caller maps as an action-required memory error
 * (BUS_MCEERR_AR at the page), where 6.1 sent nothing to a late-kill
 * process.  Both sides must get the same, at the same place in the page.
 */
static volatile sig_atomic_t hw_bus;
static volatile int hw_code;
static void *volatile hw_addr;

static void on_hw_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	hw_bus++;
	hw_code = si->si_code;
	hw_addr = si->si_addr;
}

/*
 * MADV_HWPOISON of the frame behind page i on both sides (each poisons a
 * frame for the rest of the boot: a few per run).  The page is made
 * present and dirty first where its protection lets it.
 */
bool op_hwpoison(struct fz *z)
{
	struct sigaction sa = { .sa_sigaction = on_hw_bus, .sa_flags = SA_SIGINFO }, old;
	size_t i = pick_page(z);
	int ret[2], err[2], bus[2], code[2];
	long off[2];

	if (!z->pg[i].mapped)
		return true;
	note(z, "MADV_HWPOISON page %zu (pgoff %#lx)", i, z->pg[i].pgoff);
	if (!cmp_probe(z, i, allows(z, z->pg[i].prot, RFP_WRITE) ? P_WRITE64 : P_READ))
		return false;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	for (int side = SA; side <= SB; side++) {
		hw_bus = 0;
		hw_code = 0;
		hw_addr = NULL;
		madvise_side(z, side, i, MADV_HWPOISON, ret, err);
		bus[side] = hw_bus;
		code[side] = hw_code;
		off[side] = hw_bus ? (char *)hw_addr - at(z, side, i) : 0;
	}
	sigaction(SIGBUS, &old, NULL);
	more(z, ": A %d %s, B %d %s", ret[SA], ret[SA] ? strerror(err[SA]) : "",
	     ret[SB], ret[SB] ? strerror(err[SB]) : "");
	if (bus[SA] || bus[SB])
		more(z, "; SIGBUS A %d (code %d, +%ld), B %d (code %d, +%ld)", bus[SA], code[SA],
		     off[SA], bus[SB], code[SB], off[SB]);
	if (bus[SA] != bus[SB] || code[SA] != code[SB] || off[SA] != off[SB])
		return fail(z, "MADV_HWPOISON page %zu: SIGBUS A %d (code %d at +%ld), "
			    "B %d (code %d at +%ld)", i, bus[SA], code[SA], off[SA],
			    bus[SB], code[SB], off[SB]);
	if (ret[SA] && ret[SB] && err[SA] == err[SB] && (err[SA] == EINVAL || err[SA] == EPERM)) {
		more(z, " (%s: no more)", strerror(err[SA]));
		z->hw_left = 0;
		return true;
	}
	if (ret[SA] != ret[SB] || err[SA] != err[SB])
		return fail(z, "MADV_HWPOISON page %zu: A %d (%s), B %d (%s)", i, ret[SA],
			    strerror(err[SA]), ret[SB], strerror(err[SB]));
	if (!ret[SA]) {
		z->hw_left--;
		z->st->hwpoisons++;
		if (z->npoisoned < (int)ARRAY_SIZE(z->poisoned))
			z->poisoned[z->npoisoned++] = z->pg[i].pgoff;
	}
	z->hot = i;
	if (!cmp_probe(z, i, P_READ))
		return false;
	/* what the page table may do next to the poisoned entry */
	switch (rnd(z, 4)) {
	case 0:
	case 1:
		more(z, "; MADV_DONTNEED");
		madvise_both(z, i, 1, MADV_DONTNEED, ret, err);
		break;
	case 2:
		more(z, "; MADV_PAGEOUT");
		madvise_both(z, i, 1, MADV_PAGEOUT, ret, err);
		break;
	default:
		return true;
	}
	if (ret[SA] != ret[SB] || err[SA] != err[SB])
		return fail(z, "madvise after MADV_HWPOISON, page %zu: A %d (%s), B %d (%s)", i,
			    ret[SA], strerror(err[SA]), ret[SB], strerror(err[SB]));
	return check_all(z, i, 1);
}
