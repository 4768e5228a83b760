// SPDX-License-Identifier: GPL-2.0
/*
 * mlock on a nonlinear VMA: mlock keeps pages resident, it does not pin
 * them in place.  move_pages() and compaction migrate them like the pages
 * of any mlocked mapping, and afterwards they are present and mlocked
 * again, with their file pages and protections; /proc/self/pagemap shows
 * that they moved.  mbind() refuses a nonlinear VMA (EINVAL), whose
 * addresses do not name the file range a shared policy is set on, and
 * changes nothing.
 */
#include "rfp.h"

#include <linux/mempolicy.h>

#define NPAGES 64
/*
 * The compaction test's layout and its mlocked linear control, a quarter
 * of it in UML, where every fault of the setup goes through the host.
 */
#define NCOMPACT 1024
#define NCONTROL 256
#define UML_SHIFT 2
#define BALLAST_RATIO 7
#define COMPACT_ROUNDS 4
#define RW (PROT_READ | PROT_WRITE)

/* Page i of an n-page layout: file page n + (i * 37) mod n. */
static size_t lay_pgoff(size_t i, size_t n)
{
	return n + (i * 37) % n;
}

static int lay_prot(size_t i)
{
	return (i & 1) ? PROT_READ : RW;
}

FIXTURE(ml) {
	struct rfp_area a;
	size_t n;
	long unevictable_orig;	/* compact_unevictable_allowed to put back, or -1 */
};

FIXTURE_SETUP(ml)
{
	rfp_catch();
	self->unevictable_orig = -1;
	rfp_area_init(&self->a);
}

FIXTURE_TEARDOWN(ml)
{
	char v[24];

	munlockall();
	rfp_area_close(&self->a);
	if (self->unevictable_orig >= 0) {
		snprintf(v, sizeof(v), "%ld", self->unevictable_orig);
		rfp_write_str("/proc/sys/vm/compact_unevictable_allowed", v);
	}
}

/* The area: a file of 2n pages, the first n holes, the rest filled if fill. */
static void open_area(struct __test_metadata *_metadata, FIXTURE_DATA(ml) *self,
		      size_t n, bool fill)
{
	self->n = n;
	ASSERT_EQ(0, rfp_area_open(&self->a, 0, 2 * n, 0, RW));
	if (fill) {
		ASSERT_EQ(0, rfp_pattern_fd(self->a.fd, n, n, 0));
	}
}

/* Map the area's n pages, lay them out, mlock them; false if SKIP()ped. */
static bool lay_out(struct __test_metadata *_metadata, FIXTURE_DATA(ml) *self)
{
	struct rfp_area *a = &self->a;
	size_t n = self->n;

	ASSERT_EQ(0, rfp_area_map(a, n, RW, 0));
	RFP_FIRST_CHGPROT(return false, a->m, PS, lay_prot(0), lay_pgoff(0, n));
	for (size_t i = 1; i < n; i++) {
		ASSERT_EQ(0, rfp(a->m + i * PS, PS, lay_prot(i), lay_pgoff(i, n),
				 MAP_CHGPROT | MAP_NONBLOCK));
	}
	ASSERT_EQ(0, mlock(a->m, n * PS));
	ASSERT_EQ(n, rfp_present(a->m, n));
	RFP_EXPECT_MLOCKED(n, a->m, n);
	return true;
}

static bool build(struct __test_metadata *_metadata, FIXTURE_DATA(ml) *self,
		  size_t n)
{
	open_area(_metadata, self, n, true);
	return lay_out(_metadata, self);
}

/* Pages that do not show their file page or allow other than their protection. */
static long bad_pages(FIXTURE_DATA(ml) *self)
{
	long bad = 0;

	for (size_t i = 0; i < self->n; i++) {
		char *p = self->a.m + i * PS;
		uint64_t v = 0;
		int w = rfp_try_store(p + RFP_OFF_W,
				      rfp_byte(lay_pgoff(i, self->n), RFP_OFF_W, 0));

		if (rfp_try_id(p, &v) || v != rfp_id(lay_pgoff(i, self->n), 0) ||
		    (lay_prot(i) & PROT_WRITE ? w != 0 : w != SEGV_ACCERR))
			bad++;
	}
	return bad;
}

/* How many of n pages pagemap shows present at another page frame than in pm0. */
static long moved(const void *start, size_t n, const uint64_t *pm0)
{
	uint64_t *pm = calloc(n, sizeof(*pm));
	long k = 0;

	if (!pm || rfp_pagemap(start, n, pm)) {
		free(pm);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		k += (pm[i] & RFP_PM_PRESENT) && RFP_PM_PFN(pm[i]) != RFP_PM_PFN(pm0[i]);
	free(pm);
	return k;
}

TEST_F(ml, move_pages_migrates_locked_pages)
{
	static void *pages[NPAGES];
	static int nodes[NPAGES], status[NPAGES];
	static uint64_t pm0[NPAGES];
	long to_node = 0, busy = 0, ret;

	RFP_NEED_TWO_NODES();
	if (!build(_metadata, self, NPAGES))
		return;
	ASSERT_EQ(0, rfp_pagemap(self->a.m, NPAGES, pm0));
	for (size_t i = 0; i < NPAGES; i++)
		pages[i] = self->a.m + i * PS;
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, NPAGES, pages, NULL, status, 0));
	for (size_t i = 0; i < NPAGES; i++)
		nodes[i] = status[i] == 0 ? 1 : 0;
	ret = syscall(SYS_move_pages, 0, NPAGES, pages, nodes, status, MPOL_MF_MOVE);
	ASSERT_LE(0, ret) TH_LOG("move_pages: %s", strerror(errno));
	for (size_t i = 0; i < NPAGES; i++) {
		to_node += status[i] == nodes[i];
		busy += status[i] < 0;
	}
	TH_LOG("move_pages returned %ld: %ld on the node asked for, %ld refused",
	       ret, to_node, busy);
	EXPECT_EQ(0, ret) TH_LOG("pages not migrated");
	EXPECT_EQ(NPAGES, to_node);
	/* pagemap, not a touch: a touch would fault them back in */
	EXPECT_EQ(NPAGES, rfp_present(self->a.m, NPAGES));
	EXPECT_EQ(NPAGES, moved(self->a.m, NPAGES, pm0)) TH_LOG("page frames unchanged");
	RFP_EXPECT_MLOCKED(NPAGES, self->a.m, NPAGES);
	EXPECT_EQ(0, bad_pages(self));
	/* where they are, seen by a query */
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, NPAGES, pages, NULL, status, 0));
	to_node = 0;
	for (size_t i = 0; i < NPAGES; i++)
		to_node += status[i] == nodes[i];
	EXPECT_EQ(NPAGES, to_node);
}

/*
 * Compaction migrates mlocked pages (compact_unevictable_allowed, set for
 * the test if it is not).  It only moves pages out of pageblocks it can
 * empty into partly used ones, so, as in rfp_migrate.c, each page of the
 * layout's file and of an mlocked linear control is allocated between
 * pages of a ballast, freed before compacting; compaction runs until it
 * moved a quarter of the control, a few rounds at most.  The layout's
 * pages must move too, and be present, mlocked and right afterwards.
 */
TEST_F_TIMEOUT(ml, compaction_migrates_locked_pages, 400)
{
	static uint64_t pm0[NCOMPACT], lpm0[NCONTROL];
	const char *lvl = getenv("EXPECT_LEVEL");
	int shift = lvl && !strcmp(lvl, "uml") ? UML_SHIFT : 0;
	size_t ncompact = NCOMPACT >> shift, ncontrol = NCONTROL >> shift;
	size_t ballast_len = (ncompact + ncontrol) * BALLAST_RATIO * PS;
	long nl_moved, ctl_moved = 0, unevictable;
	char *ballast, *lin;
	int lfd, rounds;

	if (access("/proc/sys/vm/compact_memory", F_OK))
		SKIP(return, "no compaction");
	RFP_NEED_MANYPROTS(return);
	unevictable = rfp_read_long("/proc/sys/vm/compact_unevictable_allowed");
	if (unevictable == 0) {
		ASSERT_EQ(0, rfp_write_str("/proc/sys/vm/compact_unevictable_allowed", "1"));
		self->unevictable_orig = 0;
	}

	ballast = mmap(NULL, ballast_len, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ballast);
	madvise(ballast, ballast_len, MADV_NOHUGEPAGE);
	lfd = memfd_create("rfp_mlock_control", 0);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, ftruncate(lfd, ncontrol * PS));
	lin = mmap(NULL, ncontrol * PS, RW, MAP_SHARED, lfd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	open_area(_metadata, self, ncompact, false);
	for (size_t i = 0, b = 0; i < ncompact; i++) {
		for (int k = 0; k < BALLAST_RATIO; k++)
			ballast[b++ * PS] = 1;
		ASSERT_EQ(0, rfp_pattern_fd(self->a.fd, ncompact + i, 1, 0));
		if (i % (ncompact / ncontrol))
			continue;
		for (int k = 0; k < BALLAST_RATIO; k++)
			ballast[b++ * PS] = 1;
		lin[i / (ncompact / ncontrol) * PS] = 1;
	}
	if (!lay_out(_metadata, self))
		return;
	ASSERT_EQ(0, mlock(lin, ncontrol * PS));
	ASSERT_EQ(0, rfp_pagemap(self->a.m, ncompact, pm0));
	ASSERT_EQ(0, rfp_pagemap(lin, ncontrol, lpm0));
	ASSERT_NE(0, RFP_PM_PFN(pm0[0])) TH_LOG("pagemap shows no PFNs (not root?)");
	ASSERT_EQ(0, munmap(ballast, ballast_len));

	for (rounds = 1;; rounds++) {
		ASSERT_EQ(0, rfp_write_str("/proc/sys/vm/compact_memory", "1"));
		ctl_moved = moved(lin, ncontrol, lpm0);
		if (ctl_moved >= ncontrol / 4 || rounds == COMPACT_ROUNDS)
			break;
	}
	nl_moved = moved(self->a.m, ncompact, pm0);
	TH_LOG("compaction (%d rounds): %ld of %zu nonlinear mlocked pages moved, "
	       "%ld of %zu of the mlocked linear control", rounds, nl_moved,
	       ncompact, ctl_moved, ncontrol);
	EXPECT_LT(0, ctl_moved) TH_LOG("compaction moved no mlocked page of the control");
	EXPECT_LT(0, nl_moved) TH_LOG("no nonlinear mlocked page moved");
	EXPECT_EQ(ncompact, rfp_present(self->a.m, ncompact));
	RFP_EXPECT_MLOCKED(ncompact, self->a.m, ncompact);
	EXPECT_EQ(0, bad_pages(self));
	munmap(lin, ncontrol * PS);
	close(lfd);
}

TEST_F(ml, mbind_refused)
{
	unsigned long mask = 1;

	if (!build(_metadata, self, NPAGES))
		return;
	errno = 0;
	if (syscall(SYS_mbind, self->a.m, PS, MPOL_DEFAULT, NULL, 0, 0) && errno == ENOSYS)
		SKIP(return, "no NUMA (mbind: ENOSYS)");
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_mbind, self->a.m, NPAGES * PS, MPOL_BIND, &mask,
			      sizeof(mask) * 8, MPOL_MF_MOVE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NPAGES, rfp_present(self->a.m, NPAGES));
	EXPECT_EQ(0, bad_pages(self));
}

TEST_HARNESS_MAIN
