// SPDX-License-Identifier: GPL-2.0
/*
 * The reverse index of a nonlinear VMA, which reclaim and migration use to
 * find a file page at its nonlinear address:
 * - after the VMA is split (mlock of a part, munmap of a part and a new
 *   mapping in the hole), reclaim finds each page in the VMA that maps it
 *   and never acts on it through the other part, whose flags (VM_LOCKED)
 *   would keep it resident and mlock it;
 * - it marks a file page as mapped at several addresses only while it is:
 *   reclaim then walks the whole VMA (counted in debugfs), otherwise never.
 */
#include "rfp.h"

#include <linux/mempolicy.h>

#define NPAGES 64
#define WALKS "debugfs manyprots/rmap_vma_walks"

FIXTURE(split) {
	struct rfp_area a;
};

FIXTURE_SETUP(split)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, 4 * NPAGES, 4 * NPAGES,
				   PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(split)
{
	munlockall();
	rfp_area_close(&self->a);
}

/*
 * Every page nonlinear, the first quarter mlocked (a split): paging out
 * the rest must empty it, and mlock nothing more.
 */
TEST_F(split, mlock_part_then_pageout)
{
	char *m = self->a.m;
	long left;

	RFP_NEED_SWAP();
	RFP_FIRST_CHGPROT(return, m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES);
	ASSERT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
	ASSERT_EQ(0, mlock(m, NPAGES / 4 * PS));
	left = rfp_pageout(m + NPAGES / 4 * PS, NPAGES * 3 / 4);
	TH_LOG("after MADV_PAGEOUT: %ld of %d unlocked pages present, %ld of them mlocked",
	       left, NPAGES * 3 / 4, rfp_mlocked_pages(m + NPAGES / 4 * PS, NPAGES * 3 / 4));
	EXPECT_EQ(0, left);
	RFP_EXPECT_MLOCKED(NPAGES / 4, m, NPAGES / 4);
	EXPECT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
}

/*
 * The second half unmapped from a locked nonlinear VMA and mapped again
 * by a new, unlocked nonlinear VMA with the same file pages at the same
 * addresses: the old index of the first half names those addresses.
 */
TEST_F(split, new_mapping_in_hole)
{
	char *m = self->a.m, *h = m + NPAGES / 2 * PS;
	long left;

	RFP_NEED_SWAP();
	RFP_FIRST_CHGPROT(return, m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES);
	ASSERT_EQ(0, mlock(m, NPAGES * PS));
	ASSERT_EQ(0, munmap(h, NPAGES / 2 * PS));
	ASSERT_EQ(h, mmap(h, NPAGES / 2 * PS, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED, self->a.fd, NPAGES / 2 * PS));
	ASSERT_EQ(0, rfp(h, NPAGES / 2 * PS, PROT_READ, NPAGES + NPAGES / 2,
			 MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(0, rfp_bad_pages(h, NPAGES / 2, NPAGES + NPAGES / 2));
	left = rfp_pageout(h, NPAGES / 2);
	TH_LOG("after MADV_PAGEOUT of the new mapping: %ld of %d pages present",
	       left, NPAGES / 2);
	EXPECT_EQ(0, left);
	EXPECT_EQ(0, rfp_bad_pages(h, NPAGES / 2, NPAGES + NPAGES / 2));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(h + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(0, rfp_bad_pages(m, NPAGES / 2, NPAGES));
}

#define NEED_DEBUGFS() do {						\
	if (rfp_rmap_walks() == -2)					\
		SKIP(return, "no debugfs (CONFIG_DEBUG_FS)");		\
} while (0)

/*
 * Shifting every page by one file page in one call moves each file page
 * from one address to the next, never to two at once: reclaim must find
 * them all without walking the VMA.
 */
TEST_F(split, shift_walks_nothing)
{
	char *m = self->a.m;
	long w0, left;

	RFP_NEED_SWAP();
	NEED_DEBUGFS();
	RFP_FIRST_CHGPROT(return, m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES);
	ASSERT_EQ(0, rfp(m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES + 1, MAP_CHGPROT));
	ASSERT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES + 1));
	w0 = rfp_rmap_walks();
	ASSERT_LE(0, w0) TH_LOG("no %s", WALKS);
	left = rfp_pageout(m, NPAGES);
	EXPECT_EQ(0, left);
	EXPECT_EQ(w0, rfp_rmap_walks())
		TH_LOG("reclaim walked the VMA %ld times", rfp_rmap_walks() - w0);
	EXPECT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES + 1));
}

/* Move the page at p to the other NUMA node: its rmap walk. */
static int move_to_other_node(char *p)
{
	void *pages[1] = { p };
	int status = -1, node;

	if (syscall(SYS_move_pages, 0, 1, pages, NULL, &status, 0) || status < 0)
		return -1;
	node = !status;
	return syscall(SYS_move_pages, 0, 1, pages, &node, &status, MPOL_MF_MOVE_ALL);
}

/*
 * One file page at two addresses: migration (MADV_PAGEOUT leaves pages
 * mapped twice alone) walks the VMA to find both.  Once one of them maps
 * something else, reclaim must find the other without a walk.
 */
TEST_F(split, two_addresses_then_one)
{
	char *m = self->a.m;
	long w0, w1;

	RFP_NEED_SWAP();
	NEED_DEBUGFS();
	RFP_NEED_TWO_NODES();
	RFP_FIRST_CHGPROT(return, m + 10 * PS, PS, PROT_READ, 200);
	ASSERT_EQ(0, rfp(m + 20 * PS, PS, PROT_READ, 200, MAP_CHGPROT));
	ASSERT_EQ(0, rfp_bad_pages(m + 10 * PS, 1, 200));
	ASSERT_EQ(0, rfp_bad_pages(m + 20 * PS, 1, 200));
	w0 = rfp_rmap_walks();
	ASSERT_LE(0, w0) TH_LOG("no %s", WALKS);
	EXPECT_EQ(0, move_to_other_node(m + 10 * PS)) TH_LOG("move_pages: %s", strerror(errno));
	w1 = rfp_rmap_walks();
	EXPECT_LT(w0, w1) TH_LOG("a page at two addresses was found without a walk");

	/* page 20 back to its own file page: 200 is only at page 10 now */
	ASSERT_EQ(0, rfp(m + 20 * PS, PS, PROT_READ | PROT_WRITE, 20, MAP_CHGPROT));
	ASSERT_EQ(0, rfp_bad_pages(m + 10 * PS, 1, 200));
	EXPECT_EQ(0, rfp_pageout(m + 10 * PS, 1));
	EXPECT_EQ(w1, rfp_rmap_walks()) TH_LOG("the index still says two addresses");
	EXPECT_EQ(0, rfp_bad_pages(m + 10 * PS, 1, 200));
	EXPECT_EQ(0, rfp_bad_pages(m + 20 * PS, 1, 20));
}

TEST_HARNESS_MAIN
