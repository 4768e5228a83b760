// SPDX-License-Identifier: GPL-2.0
/*
 * Second part, reclaim: pages of a converted VMA, at their linear address
 * or at a nonlinear one, can be swapped out (MADV_PAGEOUT, a memcg limit)
 * and dropped (MADV_DONTNEED); afterwards every address maps the same file
 * page with the same protection, in the process and in a child forked
 * after the pageout.  Two figures: the MADV_PAGEOUT rate of nonlinear
 * against linear pages, and the reverse index's memory per remapped page.
 *
 * Every page holds self-identifying data (rfp_word(): the pgoff and a hash
 * of pgoff, word and generation in each 64-bit word), so a page that came
 * back as another file page, or shifted, shows in a whole-page compare.
 */
#include "rfp.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* 16 MiB: VMA and memfd; in UML a quarter (rfp_level_pages()) */
#define NPAGES 4096
#define FORK_PAGES 2048		/* for the fork variant, to bound its time */
#define RW (PROT_READ | PROT_WRITE)

/* The layout: page i maps rfp_scatter_pgoff(i, n) with rfp_scatter_prot(i). */
static size_t lay_pgoff(size_t i, size_t n)
{
	return rfp_scatter_pgoff(i, n);
}

static int lay_prot(size_t i)
{
	return rfp_scatter_prot(i);
}

/*
 * An n-page area, every file page filled, converted to the layout and
 * populated.  false if SKIP()ped.
 */
static bool lay_build(struct __test_metadata *_metadata, struct rfp_area *l,
		      size_t n)
{
	ASSERT_EQ(0, rfp_area_open(l, n, n, n, RW));
	rfp_catch();

	RFP_FIRST_CHGPROT(return false, l->m, PS, lay_prot(0), lay_pgoff(0, n));
	for (size_t i = 1; i < n; i++) {
		ASSERT_EQ(0, rfp(l->m + i * PS, PS, lay_prot(i),
				 lay_pgoff(i, n), MAP_CHGPROT))
			TH_LOG("page %zu: %s", i, strerror(errno));
	}
	/* remap_file_pages() populates; make sure of it for every page */
	for (size_t i = 0; i < n; i++) {
		ASSERT_EQ(0, rfp_touch(l->m + i * PS, lay_prot(i), l->self_mem))
			TH_LOG("page %zu (prot %d) cannot be populated", i, lay_prot(i));
	}
	return true;
}

/* rfp_check_page() over the whole layout. */
static void lay_check(struct rfp_area *l, bool rewrite, struct rfp_tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < l->n; i++) {
		size_t pgoff = lay_pgoff(i, l->n);

		rfp_check_page(t, l->m + i * PS, i, pgoff, lay_prot(i),
			       &l->gen[pgoff], rewrite, l->fd, l->self_mem);
	}
}

/*
 * Does every swap device complete its writes before reclaim looks again
 * (zram is SWP_SYNCHRONOUS_IO)?  Then a paged-out page is freed at once.
 * On another device (UML's ubd) it stays in the swap cache until its
 * write ends, so mincore() still counts it and only the page tables and
 * SwapFree show that it went out.
 */
static bool swap_synchronous(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[256];
	bool sync = true;

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))	/* header */
		while (fgets(line, sizeof(line), f))
			sync &= !strncmp(line, "/dev/zram", 9);
	fclose(f);
	return sync;
}

/*
 * How many of the n pages at map are still in memory after a pageout:
 * resident (mincore(), which looks a nonlinear page up at its own pgoff)
 * on a synchronous swap device, else still mapped (pagemap).
 */
static long still_in(char *map, size_t n)
{
	return swap_synchronous() ? rfp_resident(map, n) : rfp_present(map, n);
}

/*
 * MADV_PAGEOUT the range and check that the pages left memory: at most 10%
 * of them still_in() it, and SwapFree dropped by at least 3/4 of the range
 * (the rest: per-CPU swap slot caches filled ahead, pages not yet on the
 * LRU).
 */
static void pageout(struct __test_metadata *_metadata, char *map, size_t n,
		    const char *what)
{
	long before = rfp_resident(map, n), swap0 = rfp_meminfo_kb("SwapFree");
	long after, swap1, mapped;

	ASSERT_LE(0, swap0);
	ASSERT_LT(0, rfp_meminfo_kb("SwapTotal")) TH_LOG("no swap in the guest");
	ASSERT_EQ(0, madvise(map, n * PS, MADV_PAGEOUT)) TH_LOG("%s", strerror(errno));
	after = rfp_resident(map, n);
	mapped = rfp_present(map, n);
	swap1 = rfp_meminfo_kb("SwapFree");
	TH_LOG("%s: MADV_PAGEOUT: resident %ld -> %ld of %zu pages (%ld mapped), SwapFree %ld -> %ld kB%s",
	       what, before, after, n, mapped, swap0, swap1,
	       swap_synchronous() ? "" : "; asynchronous swap: mapped pages count");
	EXPECT_LE((long)n * 9 / 10, before);
	EXPECT_LE(0, after);
	EXPECT_LE(0, mapped);
	EXPECT_GE((long)n / 10, swap_synchronous() ? after : mapped)
		TH_LOG("%s: pages did not leave memory", what);
	EXPECT_LE((long)(n * PS / 1024) * 3 / 4, swap0 - swap1)
		TH_LOG("%s: SwapFree did not drop", what);
}

FIXTURE(sw) {
	struct rfp_area l;
};

FIXTURE_SETUP(sw)
{
	rfp_area_init(&self->l);
}

FIXTURE_TEARDOWN(sw)
{
	rfp_area_close(&self->l);
}

/*
 * 4096 pages at scattered pgoffs with all 8 protections go to swap and
 * come back: data of the right file page, SEGV_ACCERR at the address for
 * each denied read, write and exec, writes reaching the file.  A second
 * pageout and pass shows the pages written back to swap the same way.
 * Two swap-ins of 16 MiB from UML's ubd swap under TCG took about two
 * minutes on an idle 2-core machine, hence a quarter there; the timeout
 * leaves room for a slower machine, not for a hang.
 */
TEST_F_TIMEOUT(sw, swap_round_trip, 300)
{
	size_t n = rfp_level_pages(NPAGES);
	struct rfp_tally t;

	if (!lay_build(_metadata, &self->l, n))
		return;
	pageout(_metadata, self->l.m, n, "first");
	lay_check(&self->l, true, &t);
	RFP_EXPECT_CLEAN(&t, "after swap-in");
	pageout(_metadata, self->l.m, n, "second");
	lay_check(&self->l, false, &t);
	RFP_EXPECT_CLEAN(&t, "after the second swap-in");
}

/*
 * The parent forks right after MADV_PAGEOUT: the child's copy of the
 * entries finds the swapped pages (and writes a new generation into every
 * writable page); then the parent, whose own entries are still not
 * present, checks it all and sees the child's writes.
 */
TEST_F_TIMEOUT(sw, swap_round_trip_fork, 120)
{
	size_t n = rfp_level_pages(FORK_PAGES);
	struct rfp_area *l = &self->l;
	struct rfp_tally t;
	int st;
	pid_t pid;

	if (!lay_build(_metadata, l, n))
		return;
	pageout(_metadata, l->m, n, "before fork");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		RFP_PASS(_metadata);	/* the child's own verdict */
		close(l->self_mem);
		l->self_mem = open("/proc/self/mem", O_RDWR);
		if (l->self_mem < 0)
			_exit(2);
		lay_check(l, true, &t);
		RFP_EXPECT_CLEAN(&t, "child");
		_exit(RFP_PASSED(_metadata) ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st) TH_LOG("child status %#x", st);
	/* the child wrote the next generation through every writable page */
	for (size_t i = 0; i < n; i++)
		if (rfp_allows(lay_prot(i), RFP_WRITE))
			l->gen[lay_pgoff(i, n)]++;
	EXPECT_GE((long)n / 10, rfp_present(l->m, n))
		TH_LOG("the parent's entries are present: not paged out, or filled by the child?");
	lay_check(l, false, &t);
	RFP_EXPECT_CLEAN(&t, "parent after the child");
}

/*
 * MADV_DONTNEED over the whole converted VMA drops every entry (pagemap:
 * none present) but keeps each address's pgoff and protection.
 */
TEST_F_TIMEOUT(sw, dontneed_keeps, 120)
{
	size_t n = rfp_level_pages(NPAGES);
	struct rfp_tally t;

	if (!lay_build(_metadata, &self->l, n))
		return;
	EXPECT_LE((long)n * 9 / 10, rfp_present(self->l.m, n));
	ASSERT_EQ(0, madvise(self->l.m, n * PS, MADV_DONTNEED));
	EXPECT_EQ(0, rfp_present(self->l.m, n));
	/* the file pages stay in the page cache */
	EXPECT_LE((long)n * 9 / 10, rfp_resident(self->l.m, n));
	lay_check(&self->l, true, &t);
	RFP_EXPECT_CLEAN(&t, "after MADV_DONTNEED");
}

/* --- memcg_pressure --- */

#define CG_ROOT "/sys/fs/cgroup"
#define MEMCG_LIMIT (4UL << 20)
#define MEMCG_PAGES 4096	/* 16 MiB working set, four times the limit */
#define MEMCG_RUN_MS 3000	/* touch pages at least this long */
#define MEMCG_MIN_TOUCHES 1000	/* and at least this often ... */
#define MEMCG_MAX_MS 60000	/* ... unless this runs out (UML under TCG) */

/*
 * Those sizes, halved in UML (rfp_level_pages()), where the whole test
 * came close to its timeout on a loaded machine: the same pressure, four
 * times the limit.
 */
static size_t memcg_pages, memcg_limit;
static long memcg_min_touches;

static void memcg_sizes(void)
{
	int shift = rfp_level_pages(NPAGES) < NPAGES;

	memcg_pages = MEMCG_PAGES >> shift;
	memcg_limit = MEMCG_LIMIT >> shift;
	memcg_min_touches = MEMCG_MIN_TOUCHES >> shift;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* What the child in the memory cgroup reports, in a shared page. */
struct cg_report {
	long touches, writes, denied;	/* in the timed loop */
	long resident;			/* mincore after the loop */
	long swap_current;		/* memory.swap.current after the loop */
};

/*
 * In the child, already in the cgroup: create and fill the memfd (charged
 * here), convert it without populating (MAP_NONBLOCK), touch random pages
 * for MEMCG_RUN_MS and MEMCG_MIN_TOUCHES times at least (reading the whole
 * page, or writing a new generation where writable, or probing a denied
 * access), then check every page.
 */
static void __attribute__((noreturn))
cg_child(struct __test_metadata *_metadata, const char *cg, struct cg_report *rep)
{
	struct rfp_area l;
	struct timespec t0;
	struct rfp_tally t = {};
	uint64_t x = 0x2545f4914f6cdd1dULL;
	char path[256];

	RFP_PASS(_metadata);	/* the child's own verdict */
	rfp_catch();
	if (rfp_area_open(&l, memcg_pages, memcg_pages, memcg_pages, RW))
		_exit(2);
	for (size_t i = 0; i < l.n; i++)
		if (rfp(l.m + i * PS, PS, lay_prot(i), lay_pgoff(i, l.n),
			MAP_CHGPROT | MAP_NONBLOCK))
			_exit(4);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < MEMCG_RUN_MS ||
	       (rep->touches < memcg_min_touches && ms_since(&t0) < MEMCG_MAX_MS)) {
		for (int k = 0; k < 64; k++) {
			size_t i, pgoff;
			int prot;

			rfp_rand(&x);
			i = x % l.n;
			pgoff = lay_pgoff(i, l.n);
			prot = lay_prot(i);
			if (rfp_allows(prot, RFP_WRITE) && (x >> 32) % 3 == 0) {
				if (rfp_try_fill(l.m + i * PS, pgoff, l.gen[pgoff] + 1))
					rfp_note(&t, allowed_faulted, "loop: page %zu write", i);
				else
					l.gen[pgoff]++;
				rep->writes++;
			} else if (rfp_allows(prot, RFP_READ)) {
				size_t bad = 0;
				int code = rfp_try_check(l.m + i * PS, pgoff,
							 l.gen[pgoff], &bad);

				if (code)
					rfp_note(&t, allowed_faulted, "loop: page %zu read: %d", i, code);
				else if (bad)
					rfp_note(&t, bad_data, "loop: page %zu (pgoff %zu): %zu words wrong",
						 i, pgoff, bad);
			} else {
				rfp_denied(&t, rfp_try(l.m + i * PS + 8, RFP_READ),
					   l.m + i * PS + 8, i, "read");
				rep->denied++;
			}
			rep->touches++;
		}
	}
	rep->resident = rfp_resident(l.m, l.n);
	snprintf(path, sizeof(path), "%s/memory.swap.current", cg);
	rep->swap_current = rfp_read_long(path);
	RFP_EXPECT_CLEAN(&t, "timed loop");

	lay_check(&l, false, &t);
	RFP_EXPECT_CLEAN(&t, "every page after the loop");
	_exit(RFP_PASSED(_metadata) ? 0 : 1);
}

/*
 * A child in a memory cgroup limited to 4 MiB works on a 16 MiB converted
 * memfd (all of it at nonlinear addresses, mixed protections) for 3 s
 * (in UML 2 MiB, 8 MiB):
 * the limit can only hold by reclaiming those pages, and every page must
 * come back right.
 */
TEST_F_TIMEOUT(sw, memcg_pressure, 240)
{
	struct cg_report *rep;
	char cg[128], path[256], buf[32];
	long max_events, oom_kill, pgscan, pgsteal;
	int go[2], st = -1;
	pid_t pid;
	int fd = rfp_memfd(2);
	char *m;

	memcg_sizes();
	/* the level check, on a memfd of the test itself */
	ASSERT_LE(0, fd);
	m = mmap(NULL, 2 * PS, RW, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	RFP_FIRST_CHGPROT(return, m, PS, PROT_READ, 1);
	munmap(m, 2 * PS);
	close(fd);

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		ASSERT_EQ(0, mount("none", CG_ROOT, "cgroup2", 0, NULL))
			TH_LOG("mount cgroup2: %s", strerror(errno));
	}
	ASSERT_TRUE(rfp_has_word(CG_ROOT "/cgroup.controllers", "memory"))
		TH_LOG("no memory controller in " CG_ROOT "/cgroup.controllers");
	if (!rfp_has_word(CG_ROOT "/cgroup.subtree_control", "memory")) {
		ASSERT_EQ(0, rfp_write_str(CG_ROOT "/cgroup.subtree_control", "+memory"))
			TH_LOG("enable memory: %s", strerror(errno));
	}
	snprintf(cg, sizeof(cg), CG_ROOT "/rfp_swap.%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755)) TH_LOG("mkdir %s: %s", cg, strerror(errno));

	rep = mmap(NULL, PS, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	snprintf(buf, sizeof(buf), "%zu", memcg_limit);
	if (rep == MAP_FAILED || rfp_write_str(path, buf) || pipe(go)) {
		rmdir(cg);
		ASSERT_TRUE(false) TH_LOG("cgroup setup: %s", strerror(errno));
	}
	memset(rep, 0, sizeof(*rep));
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(5);
		cg_child(_metadata, cg, rep);
	}
	close(go[0]);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", pid);
	if (pid > 0 && rfp_write_str(path, buf)) {
		TH_LOG("moving the child: %s", strerror(errno));
		kill(pid, SIGKILL);
	}
	if (pid > 0) {
		EXPECT_EQ(1, write(go[1], "g", 1));
		waitpid(pid, &st, 0);
	}
	close(go[1]);

	/* read what the cgroup saw, then remove it before asserting */
	snprintf(path, sizeof(path), "%s/memory.events", cg);
	max_events = rfp_keyed(path, "max", ' ');
	oom_kill = rfp_keyed(path, "oom_kill", ' ');
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	pgscan = rfp_keyed(path, "pgscan", ' ');
	pgsteal = rfp_keyed(path, "pgsteal", ' ');
	EXPECT_EQ(0, rmdir(cg)) TH_LOG("rmdir %s: %s", cg, strerror(errno));

	TH_LOG("child: %ld touches (%ld writes, %ld denied), resident %ld of %zu pages, "
	       "swap.current %ld kB; cgroup: max %ld, oom_kill %ld, pgscan %ld, pgsteal %ld",
	       rep->touches, rep->writes, rep->denied, rep->resident, memcg_pages,
	       rep->swap_current >> 10, max_events, oom_kill, pgscan, pgsteal);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, st) TH_LOG("child status %#x (exit 1: wrong data or faults; 2-5: setup; "
				"signal 9: OOM-killed?)", st);
	EXPECT_EQ(0, oom_kill);
	EXPECT_LT(0, max_events);
	/* 16 MiB through 4 MiB: at least 12 MiB were reclaimed */
	EXPECT_LE((long)(memcg_pages - memcg_limit / PS), pgsteal);
	EXPECT_LE(pgsteal, pgscan);
	/* the nonlinear pages were really out: 4 MiB can hold 1024 */
	EXPECT_LE(0, rep->resident);
	EXPECT_GE((long)(memcg_limit / PS), rep->resident);
	EXPECT_LE((long)(memcg_pages * PS / 2), rep->swap_current);
	EXPECT_LE(memcg_min_touches, rep->touches);
	munmap(rep, PS);
}

/* --- figures --- */

#define RATE_PAGES 4096

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Time MADV_PAGEOUT of n populated pages at map; check that they left. */
static double time_pageout(struct __test_metadata *_metadata, char *map, size_t n,
			   const char *what)
{
	double t0, t1;
	long res;

	EXPECT_LE((long)n * 9 / 10, rfp_resident(map, n)) TH_LOG("%s: not populated", what);
	t0 = now_ms();
	EXPECT_EQ(0, madvise(map, n * PS, MADV_PAGEOUT));
	t1 = now_ms();
	res = still_in(map, n);
	EXPECT_LE(0, res);
	EXPECT_GE((long)n / 10, res) TH_LOG("%s: %ld of %zu pages still in memory", what, res, n);
	return t1 - t0;
}

/*
 * Figure: MADV_PAGEOUT of RATE_PAGES nonlinear pages against as many
 * pages of a plain shared memfd mapping, populated alike, in one run.
 * Both must be paged out, and where debugfs shows the count, the nonlinear
 * ones without a walk of the whole VMA (no file page is at two addresses).
 */
TEST_F_TIMEOUT(sw, reclaim_rate, 120)
{
	size_t n = rfp_level_pages(RATE_PAGES);
	struct rfp_area *l = &self->l;
	double tn, tl;
	long walks;
	char *lin;
	int fd;

	if (!lay_build(_metadata, l, n))
		return;
	fd = rfp_memfd(n);
	ASSERT_LE(0, fd);
	lin = mmap(NULL, n * PS, RW, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, lin);
	for (size_t i = 0; i < n; i++)
		(void)*(volatile char *)(lin + i * PS);

	tl = time_pageout(_metadata, lin, n, "linear");
	walks = rfp_rmap_walks();
	tn = time_pageout(_metadata, l->m, n, "nonlinear");
	/* no page is at two addresses: rmap finds each through the index */
	if (walks >= 0)
		EXPECT_EQ(walks, rfp_rmap_walks())
			TH_LOG("reclaim walked whole VMAs");
	TH_LOG("reclaim: nonlinear %zu pages in %.1f ms (%.0f pages/s), linear %zu pages in %.1f ms (%.0f pages/s), ratio %.2f",
	       n, tn, n / tn * 1e3, n, tl,
	       n / tl * 1e3, tn / tl);
	munmap(lin, n * PS);
	close(fd);
}

#define RMAP_PAGES 16384	/* 64 MiB */
#define RMAP_CONTROL 4096	/* the linear control: 16 MiB */
/*
 * Pages per call: runs of 16 consecutive file pages, the runs scattered.
 * Every page of a run has its own slot as a lone page would, and the
 * call count drops sixteenfold (one call per page took past the test's
 * timeout in UML under TCG on a loaded machine).  No run lands on its
 * own (linear) place: that needs 1030 r + 17 = 0 mod 1024, and the left
 * side is odd.
 */
#define RMAP_RUN 16

/*
 * Bytes in use (active objects * object size) of the reverse index's
 * caches: radix_tree_node (xarray nodes) and manyprots_rmap_chunk (its
 * slots).  -1 if either is not listed, the chunks' cache when merged into
 * another one (boots without slab_nomerge).
 */
static long long index_bytes(void)
{
	long long radix = -1, chunk = -1;
	char line[512], name[64];
	long a, n, sz;
	FILE *f = fopen("/proc/slabinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %ld %ld %ld", name, &a, &n, &sz) != 4)
			continue;
		if (!strcmp(name, "radix_tree_node"))
			radix = (long long)a * sz;
		else if (!strcmp(name, "manyprots_rmap_chunk"))
			chunk = (long long)a * sz;
	}
	if (f)
		fclose(f);
	return radix < 0 || chunk < 0 ? -1 : radix + chunk;
}

/* A fallocated (page cache fully populated) memfd of n pages, mapped. */
static char *rmap_memfd(struct __test_metadata *_metadata, size_t n, int *fd)
{
	char *m;

	*fd = memfd_create("rfp_rmap", 0);
	EXPECT_LE(0, *fd);
	EXPECT_EQ(0, fallocate(*fd, 0, 0, n * PS));
	m = mmap(NULL, n * PS, RW, MAP_SHARED, *fd, 0);
	EXPECT_NE(MAP_FAILED, m);
	return m;
}

/*
 * Figure: memory of the reverse index of nonlinear pages, as the growth
 * of its slabs (index_bytes()).  Both memfds are fallocated first, so
 * their own page cache trees are already there; a control remaps every
 * page of another VMA to its own (linear) pgoff with MAP_CHGPROT and a
 * non-default protection, which needs no reverse index.
 *
 * Slab noise: SLUB's active count treats the per-CPU slabs as in use, so
 * it moves in whole slabs (14 radix_tree_nodes of 584 bytes, 576 and
 * debug padding, in an 8 KiB slab; 16 chunks of 256 bytes in 4 KiB), and
 * whatever else the kernel does meanwhile (page cache of other files,
 * dropped beforehand) shows too: a slab or two, 0.5 to 1 byte per page
 * of 16384, 2 to 4 of the control's 4096.  The index itself is 4 bytes
 * a slot, 60 slots to a chunk: about 4.3 bytes a page.
 */
TEST_F_TIMEOUT(sw, rmap_bytes, 120)
{
	long long b0, b1, b2;
	double lin_b, nl_b;
	int fdl, fdn, fd;
	char *lin, *nl;

	lin = rmap_memfd(_metadata, RMAP_CONTROL, &fdl);
	nl = rmap_memfd(_metadata, RMAP_PAGES, &fdn);
	ASSERT_TRUE(RFP_PASSED(_metadata));
	/* let caches and slabs settle: drop what page cache can go */
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd >= 0) {
		EXPECT_EQ(1, write(fd, "3", 1));
		close(fd);
	}

	b0 = index_bytes();
	RFP_FIRST_CHGPROT(return, lin, RMAP_RUN * PS, PROT_READ, 0);
	if (b0 < 0)
		SKIP(return, "no radix_tree_node or manyprots_rmap_chunk in /proc/slabinfo "
		     "(booted without slab_nomerge?)");
	for (size_t i = RMAP_RUN; i < RMAP_CONTROL; i += RMAP_RUN) {
		ASSERT_EQ(0, rfp(lin + i * PS, RMAP_RUN * PS,
				 lay_prot(i) ? lay_prot(i) : PROT_READ, i, MAP_CHGPROT));
	}
	b1 = index_bytes();
	for (size_t r = 0; r < RMAP_PAGES / RMAP_RUN; r++) {
		ASSERT_EQ(0, rfp(nl + r * RMAP_RUN * PS, RMAP_RUN * PS,
				 lay_prot(r) ? lay_prot(r) : PROT_READ,
				 lay_pgoff(r, RMAP_PAGES / RMAP_RUN) * RMAP_RUN,
				 MAP_CHGPROT));
	}
	b2 = index_bytes();

	lin_b = (double)(b1 - b0) / RMAP_CONTROL;
	nl_b = (double)(b2 - b1) / RMAP_PAGES;
	TH_LOG("index slabs: %lld -> %lld (linear remap of %d pages) -> %lld bytes "
	       "(nonlinear remap of %d)", b0, b1, RMAP_CONTROL, b2, RMAP_PAGES);
	TH_LOG("reverse index: %.1f bytes per remapped page (linear control: %.1f)",
	       nl_b, lin_b);
	ASSERT_LE(0, b1);
	ASSERT_LE(0, b2);
	EXPECT_LT(1.0, nl_b) TH_LOG("no reverse index grew for nonlinear pages");
	EXPECT_GT(8.0, nl_b) TH_LOG("more than an 8-byte slot a page");
	EXPECT_GT(nl_b / 2, lin_b) TH_LOG("linear remaps grew it as much");
	munmap(lin, RMAP_CONTROL * PS);
	munmap(nl, RMAP_PAGES * PS);
	close(fdl);
	close(fdn);
}

TEST_HARNESS_MAIN
