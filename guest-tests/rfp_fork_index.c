// SPDX-License-Identifier: GPL-2.0
/*
 * fork and the reverse index of a nonlinear VMA.  fork gives the child
 * no present page (it refaults each one, as from a linear shared
 * mapping) and shares the parent's index, as the child maps every file
 * page at the same address; whichever side remaps pages first gets its
 * own copy.  After each side's change, reclaim must still find every
 * page of both through its own index: MADV_PAGEOUT leaves none present,
 * with no walk of the whole VMA, and every page shows its file page.
 */
#include "rfp.h"

#include <sys/wait.h>

#define NPAGES 64
#define HALF (NPAGES / 2)

FIXTURE(fi) {
	struct rfp_area a;
};

FIXTURE_SETUP(fi)
{
	rfp_catch();
	/* file pages 0..4N-1, all filled; the VMA maps the first N */
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, 4 * NPAGES, 4 * NPAGES,
				   PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(fi)
{
	rfp_area_close(&self->a);
}

/* Remap n pages from p to file pages first + i, populated. */
static int remap(char *p, size_t n, size_t first)
{
	return rfp(p, n * PS, PROT_READ | PROT_WRITE, first, MAP_CHGPROT);
}

/*
 * The child's checks, as bits of its exit status: it starts with no page
 * present, reads the parent's layout, remaps its first half to file
 * pages 2N.., reads both halves and pages its first half out (the second
 * half's pages are the parent's too, which MADV_PAGEOUT leaves alone).
 */
static int child_remaps(char *m)
{
	long walks = rfp_rmap_walks();
	int fail = 0;

	if (rfp_present(m, NPAGES) != 0)
		fail |= 1;
	if (rfp_bad_pages(m, NPAGES, NPAGES))
		fail |= 2;
	if (remap(m, HALF, 2 * NPAGES))
		fail |= 4;
	if (rfp_bad_pages(m, HALF, 2 * NPAGES) ||
	    rfp_bad_pages(m + HALF * PS, HALF, NPAGES + HALF))
		fail |= 8;
	if (rfp_pageout(m, HALF) != 0)
		fail |= 16;
	if (walks >= 0 && rfp_rmap_walks() != walks)
		fail |= 32;
	return fail;
}

TEST_F(fi, child_changes_its_copy)
{
	char *m = self->a.m;
	long walks;
	int status;
	pid_t pid;

	RFP_NEED_SWAP();
	RFP_FIRST_CHGPROT(return, m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES);
	ASSERT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
	ASSERT_EQ(NPAGES, rfp_present(m, NPAGES));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_remaps(m));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child: 1 pages present after fork, 2 layout, 4 remap, "
		       "8 new layout, 16 pages left after MADV_PAGEOUT, 32 walks");
	/* the parent's index and pages are as before the child's change */
	EXPECT_EQ(NPAGES, rfp_present(m, NPAGES));
	EXPECT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
	walks = rfp_rmap_walks();
	EXPECT_EQ(0, rfp_pageout(m, NPAGES));
	if (walks >= 0)
		EXPECT_EQ(walks, rfp_rmap_walks());
	EXPECT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
}

TEST_F(fi, parent_changes_its_copy)
{
	int go[2], status, fail = 0;
	char *m = self->a.m, c = 0;
	long walks;
	pid_t pid;

	RFP_NEED_SWAP();
	RFP_FIRST_CHGPROT(return, m, NPAGES * PS, PROT_READ | PROT_WRITE, NPAGES);
	ASSERT_EQ(0, rfp_bad_pages(m, NPAGES, NPAGES));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* wait for the parent's change, then check and reclaim */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(64);
		walks = rfp_rmap_walks();
		if (rfp_bad_pages(m, NPAGES, NPAGES))
			fail |= 1;
		if (rfp_pageout(m, NPAGES) != 0)
			fail |= 2;
		if (walks >= 0 && rfp_rmap_walks() != walks)
			fail |= 4;
		if (rfp_bad_pages(m, NPAGES, NPAGES))
			fail |= 8;
		_exit(fail);
	}
	close(go[0]);
	/* while the child still shares the index */
	walks = rfp_rmap_walks();
	EXPECT_EQ(0, remap(m + HALF * PS, HALF, 3 * NPAGES));
	EXPECT_EQ(0, rfp_bad_pages(m, HALF, NPAGES));
	EXPECT_EQ(0, rfp_bad_pages(m + HALF * PS, HALF, 3 * NPAGES));
	EXPECT_EQ(0, rfp_pageout(m, NPAGES));
	if (walks >= 0)
		EXPECT_EQ(walks, rfp_rmap_walks());
	ASSERT_EQ(1, write(go[1], &c, 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child: 1 layout, 2 pages left after MADV_PAGEOUT, 4 walks, "
		       "8 layout after reclaim, 64 no go");
}

TEST_HARNESS_MAIN
