// SPDX-License-Identifier: GPL-2.0
/*
 * Changes of a page's protection and offset after it was mapped and used,
 * and faults that exist only to track the accessed and dirty bits.
 *
 * On x86_64 these are plain PTE updates.  On UML they test the TLB sync:
 * UML's processes run on host mappings that it updates from its PTEs
 * (_PAGE_NEWPROT for a protection change, _PAGE_NEWPAGE for a new page),
 * and it keeps clean pages read-only and old pages inaccessible on the
 * host to emulate the dirty and accessed bits.  A change must reach the
 * host mapping before the next access (never wider there than in the
 * PTE), and a fault that only tracks those bits must be resolved, not
 * signalled.
 */
#include "rfp.h"

#include <time.h>

#define RW (PROT_READ | PROT_WRITE)
#define NPROT 8
#define NPAGES 256
#define ROUNDS 20

FIXTURE(pc) {
	struct rfp_area a;
};

FIXTURE_SETUP(pc)
{
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, NPAGES, NPAGES, RW));
	rfp_catch();
}

FIXTURE_TEARDOWN(pc)
{
	rfp_area_close(&self->a);
}

/* Every access prot allows, so the mapping holds the page with all of it. */
static int use(char *a, size_t pgoff, int prot, unsigned int gen)
{
	unsigned char v;
	int code;

	if (rfp_allows_here(prot, RFP_READ) && (code = rfp_try_load(a + RFP_OFF_R, &v)))
		return code;
	if (rfp_allows_here(prot, RFP_EXEC) && (code = rfp_try(a + RFP_OFF_X, RFP_EXEC)))
		return code;
	if (rfp_allows(prot, RFP_WRITE))
		return rfp_try_store(a + RFP_OFF_W, rfp_byte(pgoff, RFP_OFF_W, gen));
	return 0;
}

/*
 * Page from * NPROT + to: mapped and used with rfp_prots[from] at one file
 * page, then remapped to another with rfp_prots[to] and probed at once.
 */
/*
 * Both tests fault and (below) swap page by page; UML under TCG takes
 * close to the harness's default 30 s for them, so give them room.
 */
#define PC_TIMEOUT 300

TEST_F_TIMEOUT(pc, every_transition, PC_TIMEOUT)
{
	struct rfp_tally t = { 0 };
	int code;

	RFP_FIRST_CHGPROT(return, self->a.m, PS, PROT_READ, 0);
	for (int from = 0; from < NPROT; from++) {
		for (int to = 0; to < NPROT; to++) {
			size_t i = from * NPROT + to, pg1 = NPAGES - 1 - i;
			char *a = self->a.m + i * PS;

			ASSERT_EQ(0, rfp(a, PS, rfp_prots[from], i, MAP_CHGPROT));
			code = use(a, i, rfp_prots[from], self->a.gen[i]);
			EXPECT_EQ(0, code) TH_LOG("prot %d: an allowed access faulted (%d)",
						  rfp_prots[from], code);
			ASSERT_EQ(0, rfp(a, PS, rfp_prots[to], pg1, MAP_CHGPROT));
			rfp_check_page(&t, a, i, pg1, rfp_prots[to], &self->a.gen[pg1],
				       false, self->a.fd, self->a.self_mem);
		}
	}
	RFP_EXPECT_CLEAN(&t, "after each change");
}

/*
 * As every_transition, but the second call keeps the page's (nonlinear)
 * offset: the protection changes in place.  A page that stays accessible stays the
 * same page frame (nothing dropped and refaulted), one made PROT_NONE
 * leaves memory, and either way the new protection holds at once, on
 * every access path rfp_check_page() tries.
 */
TEST_F_TIMEOUT(pc, in_place_transitions, PC_TIMEOUT)
{
	struct rfp_tally t = { 0 };
	size_t moved = 0, kept_none = 0;
	uint64_t before, after;
	int code;

	RFP_FIRST_CHGPROT(return, self->a.m, PS, PROT_READ, 0);
	for (int from = 0; from < NPROT; from++) {
		for (int to = 0; to < NPROT; to++) {
			size_t i = from * NPROT + to, pg = NPAGES - 1 - i;
			char *a = self->a.m + i * PS;

			ASSERT_EQ(0, rfp(a, PS, rfp_prots[from], pg, MAP_CHGPROT));
			code = use(a, pg, rfp_prots[from], self->a.gen[pg]);
			EXPECT_EQ(0, code) TH_LOG("prot %d: an allowed access faulted (%d)",
						  rfp_prots[from], code);
			ASSERT_EQ(0, rfp_pagemap(a, 1, &before));
			ASSERT_EQ(0, rfp(a, PS, rfp_prots[to], pg,
					 MAP_CHGPROT | MAP_NONBLOCK));
			ASSERT_EQ(0, rfp_pagemap(a, 1, &after));
			if (rfp_prots[to] == PROT_NONE)
				kept_none += !!(after & RFP_PM_PRESENT);
			else if ((before & RFP_PM_PRESENT) &&
				 (!(after & RFP_PM_PRESENT) ||
				  RFP_PM_PFN(after) != RFP_PM_PFN(before)))
				moved++;
			rfp_check_page(&t, a, i, pg, rfp_prots[to], &self->a.gen[pg],
				       true, self->a.fd, self->a.self_mem);
		}
	}
	EXPECT_EQ(0, moved) TH_LOG("present pages dropped or replaced by a protection change");
	EXPECT_EQ(0, kept_none) TH_LOG("pages made PROT_NONE stayed present");
	RFP_EXPECT_CLEAN(&t, "after each change in place");
}

/*
 * Mixed protections over the whole VMA; in each round every page is used
 * as its protection allows, then MADV_COLD makes the pages old (UML: the
 * host mapping of an old page is inaccessible) and MADV_PAGEOUT of every
 * fourth round takes them out, so the next round faults on each page
 * again.  No allowed access may be signalled, no denied one may pass, and
 * the contents stay those of each page's file page.
 */
TEST_F_TIMEOUT(pc, tracking_faults, PC_TIMEOUT)
{
	struct rfp_tally t = { 0 };
	unsigned long faulted = 0;
	time_t start = time(NULL);

	RFP_FIRST_CHGPROT(return, self->a.m, PS, rfp_prots[1], NPAGES - 1);
	for (size_t i = 0; i < NPAGES; i++)
		ASSERT_EQ(0, rfp(self->a.m + i * PS, PS, rfp_prots[(i + 1) % NPROT],
				 NPAGES - 1 - i, MAP_CHGPROT));
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < NPAGES; i++) {
			size_t pg = NPAGES - 1 - i;

			if (use(self->a.m + i * PS, pg, rfp_prots[(i + 1) % NPROT],
				self->a.gen[pg]))
				faulted++;
		}
		ASSERT_EQ(0, madvise(self->a.m, NPAGES * PS,
				     r % 4 == 3 ? MADV_PAGEOUT : MADV_COLD))
			TH_LOG("madvise: %s", strerror(errno));
	}
	TH_LOG("%d rounds in %ld s", ROUNDS, (long)(time(NULL) - start));
	EXPECT_EQ(0, faulted) TH_LOG("%lu allowed accesses were signalled", faulted);
	for (size_t i = 0; i < NPAGES; i++)
		rfp_check_page(&t, self->a.m + i * PS, i, NPAGES - 1 - i,
			       rfp_prots[(i + 1) % NPROT], &self->a.gen[NPAGES - 1 - i],
			       true, self->a.fd, self->a.self_mem);
	RFP_EXPECT_CLEAN(&t, "after the rounds");
}

TEST_HARNESS_MAIN
