// SPDX-License-Identifier: GPL-2.0
/*
 * Second part, migration: compaction and move_pages() move the pages of a
 * converted VMA, mapped at nonlinear addresses, and put them back with their pgoffs and protections: data intact, no
 * protection widened, no migration entry left behind.  Pages stay put only
 * if migration cannot find their entries, so the tests also show, through
 * /proc/self/pagemap, that they did move.
 */
#include "rfp.h"

#include <pthread.h>
#include <sys/stat.h>

#define NPAGES 4096		/* 16 MiB, the most npages can be */
#define BALLAST_RATIO 7
#define COMPACT_ROUNDS 4
#define PLACEMENTS 3		/* of the compaction test's pages */
#define RW (PROT_READ | PROT_WRITE)

/*
 * The layout's pages: NPAGES, a quarter in UML (rfp_level_pages()), where
 * the compaction test's ballast alone took two minutes; and the pages of
 * the compaction test's control, a quarter of those.
 */
static size_t npages, ncontrol;
#define ballast_bytes ((npages + ncontrol) * BALLAST_RATIO * 4096UL)

/* The layout of rfp_swap.c: rfp_scatter_pgoff(), rfp_scatter_prot(). */
static size_t lay_pgoff(size_t i)
{
	return rfp_scatter_pgoff(i, npages);
}

static int lay_prot(size_t i)
{
	return rfp_scatter_prot(i);
}

/* a: the memfd, NPAGES long, its pages holes until a test fills them */
FIXTURE(mg) {
	struct rfp_area a;
	uint64_t pm0[NPAGES], pm1[NPAGES];
};

FIXTURE_SETUP(mg)
{
	npages = rfp_level_pages(NPAGES);
	ncontrol = npages / 4;
	ASSERT_EQ(0, rfp_area_open(&self->a, 0, npages, 0, RW));
	rfp_catch();
}

FIXTURE_TEARDOWN(mg)
{
	rfp_area_close(&self->a);
}

/*
 * Fill the memfd (unless the caller did), map it, convert it to the
 * layout, populate it; read the PFNs into pm0.  false if SKIP()ped.
 */
static bool build(struct __test_metadata *_metadata, FIXTURE_DATA(mg) *self,
		  bool fill)
{
	if (fill) {
		ASSERT_EQ(0, rfp_pattern_fd(self->a.fd, 0, npages, 0));
	}
	ASSERT_EQ(0, rfp_area_map(&self->a, npages, RW, 0));
	RFP_FIRST_CHGPROT(return false, self->a.m, PS, lay_prot(0), lay_pgoff(0));
	for (size_t i = 1; i < npages; i++) {
		ASSERT_EQ(0, rfp(self->a.m + i * PS, PS, lay_prot(i), lay_pgoff(i),
				 MAP_CHGPROT))
			TH_LOG("page %zu: %s", i, strerror(errno));
	}
	for (size_t i = 0; i < npages; i++) {
		ASSERT_EQ(0, rfp_touch(self->a.m + i * PS, lay_prot(i), self->a.self_mem))
			TH_LOG("page %zu (prot %d) cannot be populated", i, lay_prot(i));
	}
	ASSERT_EQ(0, rfp_pagemap(self->a.m, npages, self->pm0));
	for (size_t i = 0; i < npages; i++) {
		ASSERT_TRUE(self->pm0[i] & RFP_PM_PRESENT) TH_LOG("page %zu not present", i);
	}
	ASSERT_NE(0, RFP_PM_PFN(self->pm0[0])) TH_LOG("pagemap shows no PFNs (not root?)");
	return true;
}

static void check_all(FIXTURE_DATA(mg) *self, bool rewrite, struct rfp_tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < npages; i++)
		rfp_check_page(t, self->a.m + i * PS, i, lay_pgoff(i), lay_prot(i),
			       &self->a.gen[lay_pgoff(i)], rewrite, self->a.fd,
			       self->a.self_mem);
}

/*
 * The swap types of migration entries: MAX_SWAPFILES + SWP_HWPOISON_NUM
 * and the next two (include/linux/swap.h), MAX_SWAPFILES being 32 less
 * the special types the configuration has.  From /proc/config.gz; -1 if
 * it cannot be read (then every swap-type entry counts as one).
 */
static int migration_type(void)
{
	FILE *f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[256];
	bool any = false, device = false, migration = false, hwpoison = false;
	bool marker = false, manyprots = false;
	int max;

	while (f && fgets(line, sizeof(line), f)) {
		any = true;
		device |= !strcmp(line, "CONFIG_DEVICE_PRIVATE=y\n");
		migration |= !strcmp(line, "CONFIG_MIGRATION=y\n");
		hwpoison |= !strcmp(line, "CONFIG_MEMORY_FAILURE=y\n");
		marker |= !strcmp(line, "CONFIG_PTE_MARKER=y\n");
		manyprots |= !strcmp(line, "CONFIG_MANYPROTS=y\n");
	}
	if (f)
		pclose(f);
	if (!any || !migration)
		return -1;
	/*
	 * SWP_SWAPIN_ERROR_NUM is 1 in 6.1, SWP_FILE_NUM 2 with the series
	 * (SWP_FILE and SWP_FILE_POISON)
	 */
	max = 32 - 4 * device - 3 - hwpoison - marker - 1 - 2 * manyprots;
	return max + hwpoison;
}

struct pm_summary {
	long present, moved, swap, migration;
	unsigned long long pfn_min0, pfn_max0, pfn_min1, pfn_max1;
	unsigned int last_type;
};

static void pm_summarize(const uint64_t *pm0, const uint64_t *pm1, size_t n,
			 int mtype, struct pm_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->pfn_min0 = s->pfn_min1 = ~0ULL;
	for (size_t i = 0; i < n; i++) {
		if (pm0[i] & RFP_PM_PRESENT) {
			s->pfn_min0 = s->pfn_min0 < RFP_PM_PFN(pm0[i]) ? s->pfn_min0 : RFP_PM_PFN(pm0[i]);
			s->pfn_max0 = s->pfn_max0 > RFP_PM_PFN(pm0[i]) ? s->pfn_max0 : RFP_PM_PFN(pm0[i]);
		}
		if (pm1[i] & RFP_PM_PRESENT) {
			s->pfn_min1 = s->pfn_min1 < RFP_PM_PFN(pm1[i]) ? s->pfn_min1 : RFP_PM_PFN(pm1[i]);
			s->pfn_max1 = s->pfn_max1 > RFP_PM_PFN(pm1[i]) ? s->pfn_max1 : RFP_PM_PFN(pm1[i]);
		}
		if (pm1[i] & RFP_PM_PRESENT) {
			s->present++;
			s->moved += RFP_PM_PFN(pm1[i]) != RFP_PM_PFN(pm0[i]);
		} else if (pm1[i] & RFP_PM_SWAP) {
			unsigned int type = RFP_PM_SWAPTYPE(pm1[i]);

			s->swap++;
			s->last_type = type;
			if (mtype < 0 || (type >= (unsigned int)mtype &&
					  type < (unsigned int)mtype + 3))
				s->migration++;
		}
	}
}

static int stop;

/* A thread that keeps checking the layout while compaction runs. */
static void *reader(void *arg)
{
	FIXTURE_DATA(mg) *self = arg;
	struct rfp_tally *t = calloc(1, sizeof(*t));
	unsigned char v;

	while (t && !__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		for (size_t i = 0; i < npages; i++) {
			char *a = self->a.m + i * PS;
			size_t bad = 0, pgoff = lay_pgoff(i);
			int prot = lay_prot(i), code;

			t->pages++;
			if (rfp_allows(prot, RFP_READ)) {
				code = rfp_try_check(a, pgoff, 0, &bad);
				if (code)
					rfp_note(t, allowed_faulted, "reader: page %zu read: %d", i, code);
				else if (bad)
					rfp_note(t, bad_data, "reader: page %zu: %zu words wrong", i, bad);
			} else {
				rfp_denied(t, rfp_try_load(a + 64, &v), a + 64, i, "read");
			}
			if (!rfp_allows(prot, RFP_WRITE))
				rfp_denied(t, rfp_try_store(a + 72, rfp_byte(pgoff, 72, 0)),
					   a + 72, i, "write");
		}
	}
	return t;
}

/*
 * /proc/sys/vm/compact_memory while a thread reads the pages: data and
 * protections hold during and after it, no migration entry stays, and the
 * pages moved.  A plain shared memfd populated alongside shows how many
 * pages compaction moves when it can.  400 s: in UML under TCG, where
 * every fault and signal goes through the host, it takes 3 minutes.
 */
TEST_F_TIMEOUT(mg, compaction, 600)
{
	struct pm_summary s, sl;
	struct rfp_tally t, *rt = NULL;
	uint64_t *lpm0, *lpm1;
	pthread_t th;
	int fd, lfd = -1, mtype = migration_type();
	char *lin = MAP_FAILED, *ballast;
	long mig0, mig1, fail0, fail1, refaulted_moved = 0;
	static uint64_t pm2[NPAGES];
	int rounds, placement;

	/*
	 * Off and without the feature, skip before the ballast, which takes
	 * minutes in UML: MAP_CHGPROT on a page of a scratch mapping.
	 */
	fd = memfd_create("rfp_probe", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, PS));
	lin = mmap(NULL, PS, RW, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	close(fd);
	RFP_FIRST_CHGPROT(return, lin, PS, PROT_READ, 0);
	ASSERT_EQ(0, munmap(lin, PS));

	lpm0 = calloc(ncontrol, sizeof(*lpm0));
	lpm1 = calloc(ncontrol, sizeof(*lpm1));
	ASSERT_NE(NULL, lpm0);
	ASSERT_NE(NULL, lpm1);
	for (placement = 1;; placement++) {
		/*
		 * Compaction moves pages from the low end of the zone into
		 * free pages of partly used pageblocks at the high end, until
		 * its scanners meet; wholly free pageblocks are no targets.
		 * In a fresh guest, pages allocated in a row fill whole
		 * pageblocks and mostly stay put (this moved none of 4096).
		 * So each page of the layout's memfd and of the control is
		 * allocated after BALLAST_RATIO pages of a ballast, which is
		 * then freed: their pageblocks are mostly free, spread over
		 * the zone, and compaction packs the low ones into the high
		 * ones (in most boots it moved half of the control's pages
		 * or more).
		 */
		ballast = mmap(NULL, ballast_bytes, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, ballast);
		madvise(ballast, ballast_bytes, MADV_NOHUGEPAGE);
		lfd = memfd_create("rfp_linear", 0);
		ASSERT_LE(0, lfd);
		ASSERT_EQ(0, ftruncate(lfd, ncontrol * PS));
		lin = mmap(NULL, ncontrol * PS, RW, MAP_SHARED, lfd, 0);
		ASSERT_NE(MAP_FAILED, lin);
		for (size_t i = 0, b = 0; i < npages; i++) {
			for (int k = 0; k < BALLAST_RATIO; k++)
				ballast[b++ * PS] = 1;
			ASSERT_EQ(0, rfp_pattern_fd(self->a.fd, i, 1, 0));
			if (i % (npages / ncontrol))
				continue;
			for (int k = 0; k < BALLAST_RATIO; k++)
				ballast[b++ * PS] = 1;
			lin[i / (npages / ncontrol) * PS] = 1;
		}
		if (!build(_metadata, self, false))
			return;
		ASSERT_EQ(0, rfp_pagemap(lin, ncontrol, lpm0));
		ASSERT_EQ(0, munmap(ballast, ballast_bytes));

		mig0 = rfp_keyed("/proc/vmstat", "pgmigrate_success", ' ');
		fail0 = rfp_keyed("/proc/vmstat", "pgmigrate_fail", ' ');
		__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
		ASSERT_EQ(0, pthread_create(&th, NULL, reader, self));
		/*
		 * One compaction moves most of what it can, but not always:
		 * some runs stop early.  Compact again, a few times at most,
		 * until it moved a quarter of the control's pages.
		 */
		for (rounds = 1;; rounds++) {
			fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
			EXPECT_LE(0, fd);
			EXPECT_EQ(1, write(fd, "1", 1))
				TH_LOG("compact_memory: %s", strerror(errno));
			close(fd);
			ASSERT_EQ(0, rfp_pagemap(lin, ncontrol, lpm1));
			pm_summarize(lpm0, lpm1, ncontrol, mtype, &sl);
			if (sl.moved >= (long)ncontrol / 4 || rounds == COMPACT_ROUNDS)
				break;
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		ASSERT_EQ(0, pthread_join(th, (void **)&rt));
		ASSERT_NE(NULL, rt);
		RFP_EXPECT_CLEAN(rt, "reader during compaction");
		EXPECT_LT(0, rt->pages);
		mig1 = rfp_keyed("/proc/vmstat", "pgmigrate_success", ' ');
		fail1 = rfp_keyed("/proc/vmstat", "pgmigrate_fail", ' ');

		ASSERT_EQ(0, rfp_pagemap(self->a.m, npages, self->pm1));
		ASSERT_EQ(0, rfp_pagemap(lin, ncontrol, lpm1));
		pm_summarize(self->pm0, self->pm1, npages, mtype, &s);
		pm_summarize(lpm0, lpm1, ncontrol, mtype, &sl);
		TH_LOG("compaction (placement %d, %d rounds): %ld of %zu nonlinear pages moved, "
		       "%ld more left not present, %ld swap-type entries; linear control: "
		       "%ld of %zu moved; reader: %lu page checks; migration types from %d",
		       placement, rounds, s.moved, npages, (long)npages - s.present, s.swap,
		       sl.moved, ncontrol, rt->pages, mtype);
		TH_LOG("PFNs: nonlinear %#llx-%#llx -> %#llx-%#llx, linear %#llx-%#llx -> %#llx-%#llx",
		       s.pfn_min0, s.pfn_max0, s.pfn_min1, s.pfn_max1,
		       sl.pfn_min0, sl.pfn_max0, sl.pfn_min1, sl.pfn_max1);
		TH_LOG("vmstat: pgmigrate_success +%ld, pgmigrate_fail +%ld", mig1 - mig0,
		       fail1 - fail0);
		/*
		 * Where compaction hardly moves the control, the placement is
		 * at fault, not the series: in a guest that ran other tests
		 * first, the ballast and the pages sometimes sit in a dense
		 * run low in a zone whose top is wholly free pageblocks, and
		 * four compactions moved 27 of the control's 1024 pages (the
		 * next placement: 857).  Place them again, a few times at most.
		 */
		if (sl.moved >= (long)ncontrol / 4 || placement == PLACEMENTS)
			break;
		EXPECT_EQ(0, s.migration) TH_LOG("migration entries left (type %u)", s.last_type);
		check_all(self, false, &t);
		RFP_EXPECT_CLEAN(&t, "after compaction");
		free(rt);
		rt = NULL;
		ASSERT_EQ(0, munmap(self->a.m, npages * PS));
		self->a.m = NULL;
		ASSERT_EQ(0, fallocate(self->a.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       0, npages * PS));
		ASSERT_EQ(0, munmap(lin, ncontrol * PS));
		close(lfd);
	}
	EXPECT_EQ(0, s.migration) TH_LOG("migration entries left (type %u)", s.last_type);
	EXPECT_EQ(0, sl.migration);
	/*
	 * Compaction moved pages it could, so the nonlinear ones too: present
	 * at another PFN, or migrated and left not present (the series leaves
	 * a SWP_FILE entry behind; every page was present before).
	 */
	EXPECT_LT(0, sl.moved) TH_LOG("compaction moved no page of the control either");

	/*
	 * A page left not present counts as moved only if it comes back at
	 * another PFN (reclaim would also leave it not present).
	 */
	check_all(self, true, &t);
	RFP_EXPECT_CLEAN(&t, "after compaction");
	ASSERT_EQ(0, rfp_pagemap(self->a.m, npages, pm2));
	for (size_t i = 0; i < npages; i++)
		if (!(self->pm1[i] & RFP_PM_PRESENT) && (pm2[i] & RFP_PM_PRESENT) &&
		    RFP_PM_PFN(pm2[i]) != RFP_PM_PFN(self->pm0[i]))
			refaulted_moved++;
	TH_LOG("compaction: %ld nonlinear pages moved in place, %ld came back at another PFN",
	       s.moved, refaulted_moved);
	EXPECT_LT(0, s.moved + refaulted_moved) TH_LOG("no nonlinear page moved");
	free(rt);
	free(lpm0);
	free(lpm1);
	munmap(lin, ncontrol * PS);
	close(lfd);
}

#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

/* move_pages(2) on this process; nodes NULL queries. */
static long move_pages(size_t n, void **pages, const int *nodes, int *status)
{
	return syscall(279, 0, n, pages, nodes, status, nodes ? MPOL_MF_MOVE : 0);
}

/*
 * Whether move_pages() finds and moves a page of a PROT_NONE VMA on this
 * kernel: 6.1 does not (-ENOENT, follow_page() refuses it), 6.12 does (its
 * folio walk looks at no protection).  A per-page PROT_NONE page must be
 * treated the same: measured on a shared page mprotect()ed PROT_NONE.
 */
static bool none_followed(void)
{
	char *p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	void *pages[1] = { p };

	if (p == MAP_FAILED)
		return false;
	*p = 1;
	mprotect(p, PS, PROT_NONE);
	if (move_pages(1, pages, NULL, &status))
		status = -ENOENT;
	munmap(p, PS);
	return status >= 0;
}

/*
 * The statuses of a move_pages() call against want (NULL: any node),
 * PROT_NONE pages counted apart from the others: unless none_followed(),
 * move_pages() neither finds nor moves them (-ENOENT), as for a page of a
 * PROT_NONE VMA.
 */
struct mp_count {
	long ok, bad, bad_none, none;
	long first, first_none;
};

static void mp_compare(const int *status, const int *want, bool followed,
		       struct mp_count *c)
{
	memset(c, 0, sizeof(*c));
	c->first = c->first_none = -1;
	for (size_t i = 0; i < npages; i++) {
		bool none = lay_prot(i) == PROT_NONE;

		c->none += none;
		if (none && !followed ? status[i] == -ENOENT :
		    want ? status[i] == want[i] : status[i] >= 0)
			c->ok++;
		else if (none && !c->bad_none++)
			c->first_none = i;
		else if (!none && !c->bad++)
			c->first = i;
	}
}

/* want[i], status[i] for the messages; -1 where there is none. */
static int mp_at(const int *a, long i)
{
	return a && i >= 0 ? a[i] : -1;
}

#define MP_EXPECT(c, status, want, what) do {					\
	EXPECT_EQ(0, (c)->bad)							\
		TH_LOG("%s: %ld accessible pages wrong, first: page %ld (prot %d) status %d, want %d", \
		       what, (c)->bad, (c)->first, lay_prot((c)->first),	\
		       mp_at(status, (c)->first), mp_at(want, (c)->first));	\
	EXPECT_EQ(0, (c)->bad_none)						\
		TH_LOG("%s: %ld of %ld PROT_NONE pages wrong, first: page %ld status %d, want %d", \
		       what, (c)->bad_none, (c)->none, (c)->first_none,	\
		       mp_at(status, (c)->first_none), mp_at(want, (c)->first_none)); \
} while (0)

/*
 * move_pages() of every page (all populated, PROT_NONE ones too) to the
 * other node: the status of each is its new node (PROT_NONE pages as a
 * page of a PROT_NONE VMA here: none_followed()), and once the pages are
 * present again (migration may leave a SWP_FILE entry behind), a query
 * says the same; then mbind(MPOL_BIND node 0, MPOL_MF_MOVE) of the whole
 * VMA is refused (EINVAL) and moves nothing.  Each time the layout holds.
 */
TEST_F_TIMEOUT(mg, move_pages, 120)
{
	static void *pages[NPAGES];
	static int nodes[NPAGES], status[NPAGES];
	unsigned long mask = 1;
	struct mp_count c;
	struct rfp_tally t;
	long to1 = 0, present;
	bool followed;

	if (!build(_metadata, self, true))
		return;
	RFP_NEED_TWO_NODES();
	followed = none_followed();
	TH_LOG("move_pages() %s a page of a PROT_NONE VMA here",
	       followed ? "finds and moves" : "neither finds nor moves");

	for (size_t i = 0; i < npages; i++)
		pages[i] = self->a.m + i * PS;
	ASSERT_EQ(0, move_pages(npages, pages, NULL, status)) TH_LOG("%s", strerror(errno));
	mp_compare(status, NULL, followed, &c);
	MP_EXPECT(&c, status, NULL, "query before moving");
	for (size_t i = 0; i < npages; i++) {
		nodes[i] = status[i] == 1 ? 0 : 1;
		to1 += nodes[i];
	}

	ASSERT_EQ(0, move_pages(npages, pages, nodes, status)) TH_LOG("%s", strerror(errno));
	mp_compare(status, nodes, followed, &c);
	TH_LOG("move_pages: %ld pages sent to node 1, %ld to node 0: %ld where sent "
	       "(%ld PROT_NONE pages, %ld of them not)", to1, (long)npages - to1, c.ok, c.none,
	       c.bad_none);
	MP_EXPECT(&c, status, nodes, "move_pages status");
	present = rfp_present(self->a.m, npages);
	/* a query finds present pages only: touch them all (checking them) */
	check_all(self, true, &t);
	RFP_EXPECT_CLEAN(&t, "after move_pages");
	ASSERT_EQ(0, move_pages(npages, pages, NULL, status));
	mp_compare(status, nodes, followed, &c);
	TH_LOG("after move_pages: %ld pages present; once touched, %ld found where sent",
	       present, c.ok);
	MP_EXPECT(&c, status, nodes, "query after move_pages");

	/* mbind() refuses a nonlinear VMA (rfp_mlock.c) and moves nothing */
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_mbind, self->a.m, npages * PS, MPOL_BIND, &mask,
			      sizeof(mask) * 8, MPOL_MF_MOVE));
	EXPECT_EQ(EINVAL, errno);
	check_all(self, true, &t);
	RFP_EXPECT_CLEAN(&t, "after mbind");
	ASSERT_EQ(0, move_pages(npages, pages, NULL, status));
	mp_compare(status, nodes, followed, &c);
	MP_EXPECT(&c, status, nodes, "query after mbind");
}

TEST_HARNESS_MAIN
