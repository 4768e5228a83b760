// SPDX-License-Identifier: GPL-2.0
/*
 * Fork and exec of a converted VMA.  Stock fork does not copy
 * the page tables of a shared file mapping, leaving faults to refill them
 * from the file at linear offsets; for a converted VMA that would lose the
 * pgoffs and protections.  The child must see exactly what the parent set
 * up, on pages populated before the fork and on pages never touched.  Exit
 * and exec must free it all, which a leak check measures.
 */
#include "rfp.h"

#include <sys/wait.h>

#define NPAGES 16	/* pages of the VMA */
#define FPAGES 32	/* pages of the memfd */
#define DEPTH 3		/* child, grandchild, great-grandchild */
#define RW (PROT_READ | PROT_WRITE)

/*
 * The pages that MAP_CHGPROT changes; the others keep the default: their
 * own file page, read-write.  No two pages show the same file page, so a
 * write shows at one address only.  The first has prot != 0 (for
 * RFP_FIRST_CHGPROT).
 */
static const struct {
	size_t idx;
	unsigned long pgoff;
	int prot;
	bool populate;		/* touched before the fork */
} layout[] = {
	{ 0, 20, PROT_READ, true },
	{ 1, 3, PROT_NONE, false },
	{ 2, 31, RW, true },
	{ 3, 17, PROT_WRITE, false },		/* normalised to rw */
	{ 4, 2, PROT_EXEC, true },		/* normalised to rx */
	{ 5, 25, PROT_NONE, true },		/* present, inaccessible */
	{ 7, 7, PROT_READ, true },		/* own pgoff, other prot */
	{ 9, 28, RW, false },
	{ 12, 0, PROT_READ, false },
	{ 14, 19, RW, true },
};

/* Default pages touched before the fork. */
static const size_t populated_defaults[] = { 6, 10 };

/* The writable page each level of a fork chain writes its marker through. */
static const size_t marker_page[DEPTH + 1] = { 0, 2, 9, 10 };

/* What page idx of the VMA should show, and with which protection. */
static void want(size_t idx, unsigned long *pgoff, int *prot)
{
	*pgoff = idx;
	*prot = RW;
	for (size_t i = 0; i < ARRAY_SIZE(layout); i++)
		if (layout[i].idx == idx) {
			*pgoff = layout[i].pgoff;
			*prot = layout[i].prot;
		}
}

FIXTURE(fk) {
	struct rfp_area a;	/* the memfd, a.m the converted VMA */
	unsigned char *shadow;	/* what the memfd should hold */
};

FIXTURE_SETUP(fk)
{
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, FPAGES, FPAGES, RW));
	self->shadow = malloc(FPAGES * PS);
	ASSERT_NE(NULL, self->shadow);
	for (size_t i = 0; i < FPAGES; i++)
		rfp_pattern(self->shadow + i * PS, i, 0);
	rfp_catch();
}

FIXTURE_TEARDOWN(fk)
{
	free(self->shadow);
	rfp_area_close(&self->a);
}

/* Apply layout[from...] to map; 0 or -1. */
static int apply(char *map, size_t from)
{
	for (size_t i = from; i < ARRAY_SIZE(layout); i++)
		if (rfp(map + layout[i].idx * PS, PS, layout[i].prot,
			layout[i].pgoff, MAP_CHGPROT))
			return -1;
	return 0;
}

/*
 * Fault in the pages to populate, keeping their data: a store of the same
 * byte where writable, else a load, and /proc/self/mem (FOLL_FORCE) for
 * PROT_NONE, which leaves a present but inaccessible entry.  0 or -1.
 */
static int populate(char *map, const unsigned char *shadow)
{
	unsigned char v;
	size_t idx[ARRAY_SIZE(layout) + ARRAY_SIZE(populated_defaults)], n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(layout); i++)
		if (layout[i].populate)
			idx[n++] = layout[i].idx;
	for (size_t i = 0; i < ARRAY_SIZE(populated_defaults); i++)
		idx[n++] = populated_defaults[i];

	for (size_t i = 0; i < n; i++) {
		char *a = map + idx[i] * PS;
		unsigned long pgoff;
		int prot, r;

		want(idx[i], &pgoff, &prot);
		if (rfp_allows(prot, RFP_WRITE))
			r = rfp_try_store(a, shadow[pgoff * PS]);
		else if (rfp_allows(prot, RFP_READ))
			r = rfp_try_load(a, &v);
		else
			r = rfp_mem_read(a, &v, 1) == 1 ? 0 : -1;
		if (r)
			return -1;
	}
	return 0;
}

/* Convert the fixture's VMA and populate it.  false when SKIP()ped. */
static bool build(struct __test_metadata *_metadata, FIXTURE_DATA(fk) *self)
{
	RFP_FIRST_CHGPROT(return false, self->a.m + layout[0].idx * PS, PS,
			  layout[0].prot, layout[0].pgoff);
	ASSERT_EQ(0, apply(self->a.m, 1)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, populate(self->a.m, self->shadow));
	return true;
}

/*
 * Every page of map shows its file page's contents (read through
 * /proc/self/mem, which works whatever the protection) and has its
 * protection: probe a read and a write (of the byte already there) at an
 * offset that differs per page.  EXPECT only: also used in children.
 */
static void check_layout(struct __test_metadata *_metadata, char *map,
			 const unsigned char *shadow)
{
	unsigned char buf[PS];

	for (size_t idx = 0; idx < NPAGES; idx++) {
		char *p = map + idx * PS, *a = p + (idx * 257) % PS;
		const unsigned char *exp;
		unsigned long pgoff;
		unsigned char v = 0;
		bool r, w;
		int prot;

		want(idx, &pgoff, &prot);
		exp = shadow + pgoff * PS;
		r = rfp_allows(prot, RFP_READ);
		w = rfp_allows(prot, RFP_WRITE);

		EXPECT_EQ((ssize_t)PS, rfp_mem_read(p, buf, PS));
		EXPECT_EQ(0, memcmp(buf, exp, PS))
			TH_LOG("page %zu: not file page %lu", idx, pgoff);

		EXPECT_EQ(r ? 0 : SEGV_ACCERR, rfp_try_load(a, &v))
			TH_LOG("page %zu: read", idx);
		if (r) {
			EXPECT_EQ(exp[a - p], v) TH_LOG("page %zu", idx);
		} else {
			EXPECT_EQ((void *)a, rfp_fault_addr);
		}
		EXPECT_EQ(w ? 0 : SEGV_ACCERR, rfp_try_store(a, exp[a - p]))
			TH_LOG("page %zu: write", idx);
		if (!w) {
			EXPECT_EQ((void *)a, rfp_fault_addr);
		}
	}
}

/*
 * Level 'level' of a fork chain writes one marker byte through its RW page
 * marker_page[level].  Record it in the shadow and, if write, write it.
 */
static void mark(struct __test_metadata *_metadata, FIXTURE_DATA(fk) *self,
		 int level, bool write)
{
	size_t idx = marker_page[level], off = 64 + level;
	unsigned char v = 0xc0 + level;
	unsigned long pgoff;
	int prot;

	want(idx, &pgoff, &prot);
	self->shadow[pgoff * PS + off] = v;
	if (write) {
		EXPECT_EQ(0, rfp_try_store(self->a.m + idx * PS + off, v));
	}
}

/*
 * One level of a fork chain (1 is the test's child): wait until the parent
 * let go (go), check the inherited layout, write this level's marker, then
 * fork the next level and unmap this copy before letting it run, so each
 * copy must stand on its own.  Exits 0 when this level and those below
 * passed.
 */
static void __attribute__((noreturn))
chain(struct __test_metadata *_metadata, FIXTURE_DATA(fk) *self, int level,
      int depth, int go)
{
	int next_go[2], st;
	pid_t pid;
	char c;

	if (go >= 0) {
		EXPECT_EQ(1, read(go, &c, 1));
		close(go);
	}
	check_layout(_metadata, self->a.m, self->shadow);
	mark(_metadata, self, level, true);
	if (level < depth) {
		if (pipe(next_go))
			_exit(2);
		pid = fork();
		if (pid < 0)
			_exit(2);
		if (pid == 0) {
			close(next_go[1]);
			chain(_metadata, self, level + 1, depth, next_go[0]);
		}
		close(next_go[0]);
		EXPECT_EQ(0, munmap(self->a.m, NPAGES * PS));
		EXPECT_EQ(1, write(next_go[1], "g", 1));
		close(next_go[1]);
		EXPECT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_EQ(0, st) TH_LOG("level %d: status %#x", level + 1, st);
	}
	_exit(RFP_PASSED(_metadata) ? 0 : 1);
}

/*
 * Run a fork chain of depth levels, then check in the parent: its own
 * layout is intact and every level's marker (MAP_SHARED) is visible.
 */
static void run_chain(struct __test_metadata *_metadata, FIXTURE_DATA(fk) *self,
		      int depth)
{
	unsigned char buf[PS];
	int st;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		chain(_metadata, self, 1, depth, -1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st) TH_LOG("child: status %#x", st);

	for (int level = 1; level <= depth; level++)
		mark(_metadata, self, level, false);
	check_layout(_metadata, self->a.m, self->shadow);
	for (size_t i = 0; i < FPAGES; i++) {
		EXPECT_EQ((ssize_t)PS, pread(self->a.fd, buf, PS, i * PS));
		EXPECT_EQ(0, memcmp(buf, self->shadow + i * PS, PS))
			TH_LOG("file page %zu", i);
	}
}

/* The child has every pgoff and protection; its write shows in the parent. */
TEST_F(fk, child_inherits)
{
	if (!build(_metadata, self))
		return;
	run_chain(_metadata, self, 1);
}

/* The same down a chain of forks, each level checked after its parent unmapped. */
TEST_F(fk, grandchild_chain)
{
	if (!build(_metadata, self))
		return;
	run_chain(_metadata, self, DEPTH);
}

/*
 * A child holding the inherited converted VMA and one it converted itself
 * execs /bin/true: exec tears both down (an oops or a WARN there shows on
 * the console), and the parent's layout is untouched.
 */
TEST_F(fk, exec_cleans_up)
{
	int st;
	pid_t pid;

	if (!build(_metadata, self))
		return;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = rfp_memfd(FPAGES);
		char *m = fd < 0 ? MAP_FAILED :
			mmap(NULL, NPAGES * PS, RW, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED || apply(m, 0) || populate(m, self->shadow))
			_exit(2);
		check_layout(_metadata, m, self->shadow);
		if (!RFP_PASSED(_metadata))
			_exit(1);
		close(fd);
		close(self->a.fd);
		close(self->a.self_mem);
		execl("/bin/true", "true", (char *)NULL);
		_exit(3);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st)
		TH_LOG("status %#x (exit 1: layout, 2: setup, 3: exec)", st);
	check_layout(_metadata, self->a.m, self->shadow);
}

/* The leak check's workload: a 16 MiB memfd, every third page remapped. */
#define WL_BYTES (16UL << 20)
#define ROUNDS 4
#define SHMEM_TOL_KB 512L
/*
 * Free memory is MemFree plus the pages parked on the per-CPU free lists
 * (/proc/zoneinfo "count:"), which MemFree leaves out and which can hold
 * megabytes; page cache and reclaimable slab are dropped before each
 * reading.  What still moves is unreclaimable slab, page tables and the
 * per-CPU vmstat drift: about 0.1 MiB in the 2 GiB QEMU guest.  4 MiB is a
 * quarter of one round's memfd, so leaking one round's pages, or an
 * eighth of them every round, is caught.
 */
#define FREE_TOL_KB (4L << 10)

static const int wl_prots[] = { PROT_NONE, PROT_READ, RW, PROT_EXEC };

static void wl_want(size_t n, size_t i, unsigned long *pgoff, int *prot)
{
	*pgoff = i;
	*prot = RW;
	if (i % 3 == 0) {
		*pgoff = n - 1 - i;
		*prot = wl_prots[i / 3 % ARRAY_SIZE(wl_prots)];
	}
}

/*
 * In a child: create, convert and populate the workload, fork a grandchild
 * that spot-checks it, then exit or exec /bin/true.  Exits non-zero on
 * trouble; a wrong fault kills it with SIGSEGV.
 */
static void __attribute__((noreturn)) workload(bool exec)
{
	size_t n = WL_BYTES / PS;
	unsigned long pgoff;
	int fd, prot, st;
	pid_t pid;
	char *m;

	signal(SIGSEGV, SIG_DFL);	/* no rfp_try() here */
	signal(SIGBUS, SIG_DFL);
	fd = rfp_memfd(n);
	if (fd < 0)
		_exit(10);
	m = mmap(NULL, n * PS, RW, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(11);
	for (size_t i = 0; i < n; i += 3) {
		wl_want(n, i, &pgoff, &prot);
		if (rfp(m + i * PS, PS, prot, pgoff, MAP_CHGPROT))
			_exit(12);
	}
	for (size_t i = 0; i < n; i++) {
		wl_want(n, i, &pgoff, &prot);
		if (rfp_allows(prot, RFP_WRITE))
			m[i * PS] = rfp_byte(pgoff, 0, 0);
		else if (rfp_allows(prot, RFP_READ))
			(void)*(volatile char *)(m + i * PS);
	}
	pid = fork();
	if (pid == 0) {
		/* the word around byte i % PS of each page i: its file page's */
		for (size_t i = 0; i < n; i += 61) {
			size_t w = i % PS / 8;

			wl_want(n, i, &pgoff, &prot);
			if (rfp_allows(prot, RFP_READ) &&
			    ((uint64_t *)(m + i * PS))[w] != rfp_word(pgoff, w, 0))
				_exit(13);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st)
		_exit(14);
	close(fd);
	if (exec) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(15);
	}
	_exit(0);
}

static int run_workload(bool exec)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		workload(exec);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static long pcp_free_kb(void)
{
	char line[256];
	long pages = 0, count;
	FILE *f = fopen("/proc/zoneinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &count) == 1)
			pages += count;
	if (f)
		fclose(f);
	return pages * (long)(PS / 1024);
}

struct mem {
	long shmem, free;	/* KiB */
};

/* Drop what can be dropped, then read. */
static void settle(struct __test_metadata *_metadata, struct mem *m)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1)
		TH_LOG("cannot drop caches: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	m->shmem = rfp_meminfo_kb("Shmem");
	m->free = rfp_meminfo_kb("MemFree") + pcp_free_kb();
	ASSERT_LE(0, m->shmem);
	ASSERT_LE(0, m->free);
}

/*
 * Converted 16 MiB memfds created, forked, exited or exec'ed ROUNDS times
 * in children give all their memory back.
 */
TEST_F_TIMEOUT(fk, no_leak, 300)
{
	struct mem before, after;

	if (!build(_metadata, self))
		return;
	/* a first round grows the caches and slabs that will stay */
	ASSERT_EQ(0, run_workload(true));
	settle(_metadata, &before);
	for (int r = 0; r < ROUNDS; r++) {
		EXPECT_EQ(0, run_workload(r & 1)) TH_LOG("round %d", r);
	}
	settle(_metadata, &after);

	TH_LOG("Shmem %ld -> %ld kB, free %ld -> %ld kB after %d rounds of %lu kB",
	       before.shmem, after.shmem, before.free, after.free, ROUNDS,
	       WL_BYTES >> 10);
	EXPECT_GE(before.shmem + SHMEM_TOL_KB, after.shmem);
	EXPECT_GE(after.free + FREE_TOL_KB, before.free);
}

TEST_HARNESS_MAIN
