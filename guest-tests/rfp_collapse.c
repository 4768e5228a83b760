// SPDX-License-Identifier: GPL-2.0
/*
 * Second part, THP collapse: collapsing a shmem file into a huge page for
 * a linear mapping of it (MADV_COLLAPSE, then khugepaged itself) unmaps
 * the file's small pages from every mapping, a nonlinear one included,
 * and retracts the page tables of the mappings it can map with a PMD.  The
 * page table of a converted VMA holds per-page offsets and protections:
 * it must never be retracted, and after the collapse every one of its
 * addresses must map the same file page, now part of the huge page, with
 * the same protection.
 */
#include "rfp.h"

#define NPAGES 1024			/* two PMDs' worth: 4 MiB */
#define PMD_SZ (2UL << 20)
#define HALF (NPAGES / 2)
#define RW (PROT_READ | PROT_WRITE)
#define THP "/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED_WAIT 60		/* seconds */
#define COLLAPSE_TRIES 5
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25		/* 6.1 uapi; glibc 2.36 lacks it */
#endif

/* a permutation of [0, NPAGES) without fixed points, mixing both halves */
static size_t lay_pgoff(size_t i)
{
	return (i * 389 + 7) & (NPAGES - 1);
}

static int lay_prot(size_t i)
{
	return rfp_prots[(i * 3 + i / 8 + 1) % 8];
}

/* a: the memfd, its pattern, and the converted VMA, PMD-aligned */
FIXTURE(co) {
	struct rfp_area a;
	char *lin;
	char shmem_enabled[64], scan_sleep[32];
};

FIXTURE_SETUP(co)
{
	self->lin = MAP_FAILED;
	self->shmem_enabled[0] = self->scan_sleep[0] = 0;
	ASSERT_EQ(0, rfp_area_open(&self->a, 0, NPAGES, NPAGES, RW));
	rfp_catch();
}

FIXTURE_TEARDOWN(co)
{
	if (self->shmem_enabled[0])
		rfp_write_str(THP "shmem_enabled", self->shmem_enabled);
	if (self->scan_sleep[0])
		rfp_write_str(THP "khugepaged/scan_sleep_millisecs", self->scan_sleep);
	rfp_area_close(&self->a);
	if (self->lin != MAP_FAILED)
		munmap(self->lin, NPAGES * PS);
}

static void check_nl(FIXTURE_DATA(co) *self, struct rfp_tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < NPAGES; i++)
		rfp_check_page(t, self->a.m + i * PS, i, lay_pgoff(i), lay_prot(i),
			       &self->a.gen[lay_pgoff(i)], false, self->a.fd,
			       self->a.self_mem);
}

/*
 * Every page of the nonlinear VMA present (check_nl() touched them all)
 * and at the PFN of its file page in the linear mapping: the same page,
 * after the collapse a subpage of the huge page.  Counts mismatches.
 */
static long pfn_mismatches(FIXTURE_DATA(co) *self, size_t *first)
{
	static uint64_t pn[NPAGES], pl[NPAGES];
	long bad = 0;

	for (size_t i = 0; i < NPAGES; i++)
		(void)*(volatile char *)(self->lin + i * PS);
	if (rfp_pagemap(self->a.m, NPAGES, pn) || rfp_pagemap(self->lin, NPAGES, pl))
		return -1;
	for (size_t i = 0; i < NPAGES; i++) {
		uint64_t l = pl[lay_pgoff(i)];

		if (!(pn[i] & RFP_PM_PRESENT) || !(l & RFP_PM_PRESENT) ||
		    RFP_PM_PFN(pn[i]) != RFP_PM_PFN(l)) {
			if (!bad++)
				*first = i;
		}
	}
	return bad;
}

/*
 * After a collapse: every page of the nonlinear VMA has its data and
 * protection, and sits at its file page's PFN.
 */
static void expect_intact(struct __test_metadata *_metadata,
			  FIXTURE_DATA(co) *self, const char *what)
{
	struct rfp_tally t;
	size_t first = 0;
	long bad;

	check_nl(self, &t);
	RFP_EXPECT_CLEAN(&t, what);
	bad = pfn_mismatches(self, &first);
	EXPECT_EQ(0, bad) TH_LOG("%s: %ld pages not at their file page's PFN, first %zu",
				 what, bad, first);
}

TEST_F_TIMEOUT(co, collapse_keeps_nonlinear, 180)
{
	char path[] = THP "shmem_enabled", buf[64];
	struct rfp_tally t;
	long pmd_kb;
	int waited, tries, ret;

	/* the converted VMA, PMD-aligned so a retraction could reach it */
	ASSERT_EQ(0, rfp_area_map(&self->a, NPAGES, RW, PMD_SZ));
	RFP_FIRST_CHGPROT(return, self->a.m, PS, lay_prot(0), lay_pgoff(0));
	for (size_t i = 1; i < NPAGES; i++) {
		ASSERT_EQ(0, rfp(self->a.m + i * PS, PS, lay_prot(i), lay_pgoff(i),
				 MAP_CHGPROT)) TH_LOG("page %zu: %s", i, strerror(errno));
	}
	check_nl(self, &t);
	RFP_EXPECT_CLEAN(&t, "before the collapse");

	if (rfp_read_str(path, self->shmem_enabled, sizeof(self->shmem_enabled)))
		SKIP(return, "no %s: this kernel has no transparent huge pages", path);
	rfp_choice(self->shmem_enabled);
	ASSERT_EQ(0, rfp_write_str(path, "advise")) TH_LOG("%s: %s", path, strerror(errno));

	/* the linear mapping that gets the huge pages */
	self->lin = rfp_map_shared(self->a.fd, NPAGES, RW, PMD_SZ);
	ASSERT_NE(MAP_FAILED, self->lin);
	for (size_t i = 0; i < NPAGES; i++)
		(void)*(volatile char *)(self->lin + i * PS);

	/*
	 * 1. MADV_COLLAPSE of the first PMD of the file.  It needs no
	 * MADV_HUGEPAGE; without one khugepaged cannot be collapsing the
	 * same pages at the same time, which makes MADV_COLLAPSE fail with
	 * EAGAIN (a locked page, an extra reference).  EAGAIN is retried a
	 * few times all the same: a nonlinear page the unmap missed would
	 * fail every time.
	 */
	for (tries = 1; ; tries++) {
		ret = madvise(self->lin, HALF * PS, MADV_COLLAPSE);
		if (!ret || errno != EAGAIN || tries == COLLAPSE_TRIES)
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, ret) TH_LOG("MADV_COLLAPSE, try %d: %s", tries, strerror(errno));
	if (tries > 1)
		TH_LOG("MADV_COLLAPSE: EAGAIN %d times", tries - 1);
	pmd_kb = rfp_smaps_kb(self->lin, "ShmemPmdMapped");
	EXPECT_LE((long)(PMD_SZ / 1024), pmd_kb) TH_LOG("no PMD mapping after MADV_COLLAPSE");
	EXPECT_EQ(1, rfp_vmflag(self->a.m, "nl"));
	expect_intact(_metadata, self, "after MADV_COLLAPSE");

	/*
	 * Twice: 6.1's hugepage_madvise() asks shmem_is_huge() before the
	 * VMA has VM_HUGEPAGE, so with shmem_enabled=advise only the second
	 * call registers the mm with khugepaged.
	 */
	ASSERT_EQ(0, madvise(self->lin, NPAGES * PS, MADV_HUGEPAGE));
	ASSERT_EQ(0, madvise(self->lin, NPAGES * PS, MADV_HUGEPAGE));

	/* 2. khugepaged collapses the second PMD on its own */
	ASSERT_EQ(0, rfp_read_str(THP "khugepaged/scan_sleep_millisecs", buf, sizeof(buf)));
	strcpy(self->scan_sleep, buf);
	ASSERT_EQ(0, rfp_write_str(THP "khugepaged/scan_sleep_millisecs", "10"));
	for (waited = 0; waited < KHUGEPAGED_WAIT * 10; waited++) {
		for (size_t i = HALF; i < NPAGES; i++)
			(void)*(volatile char *)(self->lin + i * PS);
		pmd_kb = rfp_smaps_kb(self->lin, "ShmemPmdMapped");
		if (pmd_kb >= (long)(2 * PMD_SZ / 1024))
			break;
		usleep(100000);
	}
	TH_LOG("khugepaged: ShmemPmdMapped %ld kB after %.1f s", pmd_kb, waited / 10.0);
	ASSERT_LE((long)(2 * PMD_SZ / 1024), pmd_kb)
		TH_LOG("khugepaged did not collapse the second PMD in %d s", KHUGEPAGED_WAIT);
	EXPECT_EQ(0, rfp_smaps_kb(self->a.m, "ShmemPmdMapped"));
	EXPECT_EQ(1, rfp_vmflag(self->a.m, "mp"));
	expect_intact(_metadata, self, "after khugepaged");
}

TEST_HARNESS_MAIN
