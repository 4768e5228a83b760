// SPDX-License-Identifier: GPL-2.0
/*
 * The first MAP_CHGPROT on a VMA that maps a tmpfs huge page with a PMD
 * (shmem_enabled=advise and MADV_HUGEPAGE): the call must take the huge
 * mapping down before it builds page tables there, succeed, and leave
 * every page with its own contents and protection.
 */
#include "rfp.h"

#define HPAGE (2UL << 20)
#define NPAGES (2 * HPAGE / 4096)

static const char knob[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

FIXTURE(thp) {
	char old[32];
	struct rfp_area a;
};

FIXTURE_SETUP(thp)
{
	char line[128];

	self->old[0] = 0;
	rfp_area_init(&self->a);
	/*
	 * No knob, no shmem THP (UML): the test SKIP()s on the empty
	 * self->old, as 6.1's harness runs the test after a setup SKIP().
	 */
	if (rfp_read_str(knob, line, sizeof(line)))
		return;
	/* the current value is the one in brackets: "always [never] ..." */
	ASSERT_TRUE(rfp_choice(line) && strlen(line) < sizeof(self->old));
	strcpy(self->old, line);
	ASSERT_EQ(0, rfp_write_str(knob, "advise"));
}

FIXTURE_TEARDOWN(thp)
{
	rfp_area_close(&self->a);
	if (self->old[0])
		rfp_write_str(knob, self->old);
}

TEST_F(thp, first_chgprot_over_huge_pmd)
{
	long pmd_kb;
	char *m;

	if (!self->old[0])
		SKIP(return, "no %s: no shmem THP here", knob);
	rfp_catch();
	/* a file of holes, mapped at a huge page boundary */
	ASSERT_EQ(0, rfp_area_open(&self->a, 0, NPAGES, 0, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, rfp_area_map(&self->a, NPAGES, PROT_READ | PROT_WRITE, HPAGE));
	m = self->a.m;
	ASSERT_EQ(0, madvise(m, 2 * HPAGE, MADV_HUGEPAGE));
	/* the first write faults in a huge page and maps it with a PMD */
	rfp_pattern_mem(m, 0, NPAGES, 0);
	pmd_kb = rfp_smaps_kb(m, "ShmemPmdMapped");
	TH_LOG("ShmemPmdMapped before MAP_CHGPROT: %ld kB", pmd_kb);
	if (pmd_kb < (long)(HPAGE >> 10))
		SKIP(return, "no PMD-mapped shmem huge page (ShmemPmdMapped %ld kB)", pmd_kb);

	/* page 5 of the first huge page shows file page 700, read-only */
	RFP_FIRST_CHGPROT(return, m + 5 * PS, PS, PROT_READ, 700);
	EXPECT_EQ(0, rfp_smaps_kb(m, "ShmemPmdMapped"));
	EXPECT_EQ(1, rfp_vmflag(m, "nl"));
	for (size_t i = 0; i < NPAGES; i++) {
		size_t want = i == 5 ? 700 : i;
		uint64_t v = 0;

		ASSERT_EQ(0, rfp_try_id(m + i * PS, &v));
		ASSERT_EQ(rfp_id(want, 0), v) TH_LOG("page %zu", i);
	}
	EXPECT_EQ(SEGV_ACCERR, rfp_try(m + 5 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(0, rfp_try(m + 6 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(0, rfp_try(m + 600 * PS + RFP_OFF_W, RFP_WRITE));
}

TEST_HARNESS_MAIN
