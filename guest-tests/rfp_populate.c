// SPDX-License-Identifier: GPL-2.0
/*
 * What fills a nonlinear VMA ahead of access, and what reads its pages
 * for others, against per-page protections:
 * - populate (MAP_CHGPROT without MAP_NONBLOCK, mlock) faults in the pages
 *   a read may reach and never allocates a PROT_NONE page's file page;
 * - MADV_POPULATE_READ/WRITE fail with EFAULT at a page that denies the
 *   access, having filled the pages before it;
 * - MADV_WILLNEED and clearing soft-dirty change no protection;
 * - GUP (process_vm_readv/writev, /proc/self/mem) on a VMA whose own
 *   protection is read-only or PROT_NONE follows each page's protection.
 * Pages map file holes, so an allocation shows as file data (SEEK_DATA).
 */
#include "rfp.h"

#define NPAGES 32
#define HOLE_NONE 128	/* PROT_NONE pages map file pages from here */
#define HOLE_RO 192	/* read-only pages map file pages from here */

FIXTURE(pop) {
	struct rfp_area a;
};

FIXTURE_SETUP(pop)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, 256, 64, PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(pop)
{
	munlockall();
	rfp_area_close(&self->a);
}

/* Even pages PROT_NONE over holes, odd pages read-only over holes. */
static int set_layout(struct rfp_area *a, int flags)
{
	for (size_t i = 0; i < NPAGES; i++) {
		int none = !(i & 1);

		if (rfp(a->m + i * PS, PS, none ? PROT_NONE : PROT_READ,
			(none ? HOLE_NONE : HOLE_RO) + i, MAP_CHGPROT | flags))
			return -1;
	}
	return 0;
}

/* The layout after populate: odd pages present, even pages absent and unallocated. */
static void expect_populated(struct __test_metadata *_metadata, struct rfp_area *a)
{
	uint64_t pm[NPAGES];
	size_t none_alloc = 0, none_present = 0, ro_absent = 0;

	ASSERT_EQ(0, rfp_pagemap(a->m, NPAGES, pm));
	for (size_t i = 0; i < NPAGES; i++) {
		if (i & 1) {
			ro_absent += !(pm[i] & RFP_PM_PRESENT);
			continue;
		}
		none_present += !!(pm[i] & RFP_PM_PRESENT);
		none_alloc += rfp_file_has_page(a->fd, HOLE_NONE + i);
	}
	EXPECT_EQ(0, none_alloc) TH_LOG("file pages allocated for PROT_NONE pages");
	EXPECT_EQ(0, none_present);
	EXPECT_EQ(0, ro_absent) TH_LOG("read-only pages left out");
}

TEST_F(pop, chgprot_populates_but_not_prot_none)
{
	RFP_FIRST_CHGPROT(return, self->a.m + PS, PS, PROT_READ, HOLE_RO + 1);
	ASSERT_EQ(0, set_layout(&self->a, 0));
	expect_populated(_metadata, &self->a);
}

TEST_F(pop, mlock_populates_but_not_prot_none)
{
	/*
	 * Another offset than set_layout() gives page 1: a page whose offset
	 * stays keeps its residency, and nothing may be present before mlock.
	 */
	RFP_FIRST_CHGPROT(return, self->a.m + PS, PS, PROT_READ, HOLE_RO);
	ASSERT_EQ(0, set_layout(&self->a, MAP_NONBLOCK));
	ASSERT_EQ(0, rfp_present(self->a.m, NPAGES));
	ASSERT_EQ(0, mlock(self->a.m, NPAGES * PS));
	expect_populated(_metadata, &self->a);
	RFP_EXPECT_MLOCKED(NPAGES / 2, self->a.m, NPAGES);
	EXPECT_EQ(SEGV_ACCERR, rfp_try(self->a.m + RFP_OFF_R, RFP_READ));
}

TEST_F(pop, madv_populate_read_stops_at_prot_none)
{
	char *m = self->a.m;

	RFP_FIRST_CHGPROT(return, m, 8 * PS, PROT_READ, HOLE_RO);
	ASSERT_EQ(0, rfp(m + 8 * PS, PS, PROT_NONE, HOLE_NONE, MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(0, rfp(m + 9 * PS, 7 * PS, PROT_READ, HOLE_RO + 9, MAP_CHGPROT | MAP_NONBLOCK));
	errno = 0;
	EXPECT_EQ(-1, madvise(m, 16 * PS, MADV_POPULATE_READ));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(8, rfp_present(m, 8));
	EXPECT_EQ(0, rfp_present(m + 8 * PS, 1));
	EXPECT_FALSE(rfp_file_has_page(self->a.fd, HOLE_NONE));
	EXPECT_EQ(0, madvise(m + 9 * PS, 7 * PS, MADV_POPULATE_READ));
	EXPECT_EQ(7, rfp_present(m + 9 * PS, 7));
}

TEST_F(pop, madv_populate_write_refused_on_read_only)
{
	char *m = self->a.m;

	RFP_FIRST_CHGPROT(return, m, 4 * PS, PROT_READ | PROT_WRITE, HOLE_RO);
	ASSERT_EQ(0, rfp(m + 4 * PS, PS, PROT_READ, HOLE_RO + 4, MAP_CHGPROT | MAP_NONBLOCK));
	EXPECT_EQ(0, madvise(m, 4 * PS, MADV_POPULATE_WRITE));
	EXPECT_EQ(4, rfp_present(m, 4));
	errno = 0;
	EXPECT_EQ(-1, madvise(m + 4 * PS, PS, MADV_POPULATE_WRITE));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_FALSE(rfp_file_has_page(self->a.fd, HOLE_RO + 4));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + 4 * PS + RFP_OFF_W, RFP_WRITE));
}

TEST_F(pop, willneed_and_clear_refs_keep_protections)
{
	char *m = self->a.m;

	RFP_FIRST_CHGPROT(return, m, PS, PROT_READ, 40);
	ASSERT_EQ(0, rfp(m + PS, PS, PROT_NONE, 41, MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(0, rfp(m + 2 * PS, PS, PROT_READ | PROT_WRITE, 42, MAP_CHGPROT));
	EXPECT_EQ(0, madvise(m, NPAGES * PS, MADV_WILLNEED));
	/* 4: clear soft-dirty bits, which write-protects ordinary PTEs */
	EXPECT_EQ(0, rfp_write_str("/proc/self/clear_refs", "4"));
	EXPECT_EQ(0, rfp_try(m + 2 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + PS + RFP_OFF_R, RFP_READ));
	EXPECT_EQ(0, rfp_try(m + 3 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(1, rfp_vmflag(m, "mp"));
}

/*
 * process_vm_readv/writev on ourselves (GUP without FOLL_FORCE), and
 * /proc/self/mem (FOLL_FORCE, the area's self_mem) on a VMA mapped
 * read-only (of a read-write fd): one page made writable.
 */
TEST_F(pop, gup_on_read_only_vma)
{
	char *m = mmap(NULL, 8 * PS, PROT_READ, MAP_SHARED, self->a.fd, 0);
	uint64_t id = 0;
	char c = 'x';

	ASSERT_NE(MAP_FAILED, m);
	RFP_FIRST_CHGPROT(goto out, m + 3 * PS, PS, PROT_READ | PROT_WRITE, 3);
	EXPECT_EQ(1, rfp_vm_rw(m + 3 * PS + RFP_OFF_W, &c, 1, true));
	EXPECT_EQ('x', m[3 * PS + RFP_OFF_W]);
	errno = 0;
	EXPECT_EQ(-1, rfp_vm_rw(m + 4 * PS + RFP_OFF_W, &c, 1, true));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->a.self_mem, &c, 1,
			     (off_t)(uintptr_t)(m + 4 * PS + RFP_OFF_W)));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(8, rfp_vm_rw(m + 4 * PS + RFP_OFF_ID, &id, 8, false));
	EXPECT_EQ(rfp_id(4, 0), id);
	EXPECT_EQ(0, rfp_try(m + 3 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + 4 * PS + RFP_OFF_W, RFP_WRITE));
out:
	munmap(m, 8 * PS);
}

/* A VMA mapped PROT_NONE: one page made readable. */
TEST_F(pop, gup_on_prot_none_vma)
{
	char *m = mmap(NULL, 8 * PS, PROT_NONE, MAP_SHARED, self->a.fd, 0);
	uint64_t id = 0;
	char c = 0;

	ASSERT_NE(MAP_FAILED, m);
	RFP_FIRST_CHGPROT(goto out, m + 5 * PS, PS, PROT_READ, 6);
	EXPECT_EQ(8, rfp_vm_rw(m + 5 * PS + RFP_OFF_ID, &id, 8, false));
	EXPECT_EQ(rfp_id(6, 0), id);
	errno = 0;
	EXPECT_EQ(-1, rfp_vm_rw(m + 5 * PS + RFP_OFF_W, &c, 1, true));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, rfp_vm_rw(m + 4 * PS + RFP_OFF_R, &c, 1, false));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, rfp_try(m + 5 * PS + RFP_OFF_R, RFP_READ));
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + 4 * PS + RFP_OFF_R, RFP_READ));
	/* populate of a PROT_NONE VMA fills only the readable page */
	EXPECT_EQ(0, mlock(m, 8 * PS));
	EXPECT_EQ(1, rfp_present(m, 8));
out:
	munmap(m, 8 * PS);
}

TEST_HARNESS_MAIN
