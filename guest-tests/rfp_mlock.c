// SPDX-License-Identifier: GPL-2.0
/*
 * mlock on a nonlinear VMA: its pages stay resident and locked through
 * move_pages() and compaction, with their file pages and protections;
 * mbind() refuses a nonlinear VMA (EINVAL), whose addresses do not name
 * the file range a shared policy is set on, and changes nothing.
 */
#include "rfp.h"

#include <linux/mempolicy.h>

#define NPAGES 64

static size_t lay_pgoff(size_t i)
{
	return NPAGES + (i * 37) % NPAGES;
}

static int lay_prot(size_t i)
{
	return (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE;
}

FIXTURE(ml) {
	struct rfp_area a;
};

FIXTURE_SETUP(ml)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, 2 * NPAGES, 2 * NPAGES,
				   PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(ml)
{
	munlockall();
	rfp_area_close(&self->a);
}

/* Lay the pages out, mlock them; false if SKIP()ped. */
static bool build(struct __test_metadata *_metadata, struct rfp_area *a)
{
	RFP_FIRST_CHGPROT(return false, a->m, PS, lay_prot(0), lay_pgoff(0));
	for (size_t i = 1; i < NPAGES; i++)
		ASSERT_EQ(0, rfp(a->m + i * PS, PS, lay_prot(i), lay_pgoff(i),
				 MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(0, mlock(a->m, NPAGES * PS));
	ASSERT_EQ(NPAGES, rfp_present(a->m, NPAGES));
	RFP_EXPECT_MLOCKED(NPAGES, a->m, NPAGES);
	return true;
}

/* Every page shows its file page and allows exactly its protection. */
static long bad_pages(struct rfp_area *a)
{
	long bad = 0;

	for (size_t i = 0; i < NPAGES; i++) {
		uint64_t v = 0;
		int w = rfp_try(a->m + i * PS + RFP_OFF_W, RFP_WRITE);

		if (rfp_try_id(a->m + i * PS, &v) || v != rfp_id(lay_pgoff(i), 0) ||
		    (lay_prot(i) & PROT_WRITE ? w != 0 : w != SEGV_ACCERR))
			bad++;
	}
	return bad;
}

TEST_F(ml, move_pages_keeps_locked_pages)
{
	static void *pages[NPAGES];
	static int nodes[NPAGES], status[NPAGES];
	long moved = 0, busy = 0, ret;

	RFP_NEED_TWO_NODES();
	if (!build(_metadata, &self->a))
		return;
	for (size_t i = 0; i < NPAGES; i++)
		pages[i] = self->a.m + i * PS;
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, NPAGES, pages, NULL, status, 0));
	for (size_t i = 0; i < NPAGES; i++)
		nodes[i] = status[i] == 0 ? 1 : 0;
	/* a positive return: pages not migrated, their status not written */
	ret = syscall(SYS_move_pages, 0, NPAGES, pages, nodes, status, MPOL_MF_MOVE);
	ASSERT_LE(0, ret) TH_LOG("move_pages: %s", strerror(errno));
	for (size_t i = 0; i < NPAGES; i++) {
		moved += status[i] == nodes[i];
		busy += status[i] < 0;
	}
	TH_LOG("move_pages returned %ld: %ld moved, %ld refused", ret, moved, busy);
	/* pagemap, not a touch: a touch would fault them back in */
	EXPECT_EQ(NPAGES, rfp_present(self->a.m, NPAGES));
	RFP_EXPECT_MLOCKED(NPAGES, self->a.m, NPAGES);
	EXPECT_EQ(0, bad_pages(&self->a));
}

TEST_F(ml, compaction_keeps_locked_pages)
{
	if (access("/proc/sys/vm/compact_memory", F_OK))
		SKIP(return, "no compaction");
	if (!build(_metadata, &self->a))
		return;
	ASSERT_EQ(0, rfp_write_str("/proc/sys/vm/compact_memory", "1"));
	EXPECT_EQ(NPAGES, rfp_present(self->a.m, NPAGES));
	RFP_EXPECT_MLOCKED(NPAGES, self->a.m, NPAGES);
	EXPECT_EQ(0, bad_pages(&self->a));
}

TEST_F(ml, mbind_refused)
{
	unsigned long mask = 1;

	if (!build(_metadata, &self->a))
		return;
	errno = 0;
	if (syscall(SYS_mbind, self->a.m, PS, MPOL_DEFAULT, NULL, 0, 0) && errno == ENOSYS)
		SKIP(return, "no NUMA (mbind: ENOSYS)");
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_mbind, self->a.m, NPAGES * PS, MPOL_BIND, &mask,
			      sizeof(mask) * 8, MPOL_MF_MOVE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NPAGES, rfp_present(self->a.m, NPAGES));
	EXPECT_EQ(0, bad_pages(&self->a));
}

TEST_HARNESS_MAIN
