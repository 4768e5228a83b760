// SPDX-License-Identifier: GPL-2.0
/*
 * rmap on a large nonlinear VMA whose file page is mapped at two
 * addresses: the reverse index cannot name one address then, and a walk
 * must still be bounded by what the VMA maps, not by its size.  A 16 TiB
 * VMA of a memfd as large holds a handful of pages; file page 5 is mapped
 * near its start and 8 TiB further, the last page the reverse index can
 * name.  (A walk of every address of a 1 TiB VMA takes a few seconds in
 * the TCG guest, under the soft-lockup detector's 20 s; of 16 TiB, about
 * a minute.)  Then, each in its own test:
 * - MADV_PAGEOUT of it (swap needed): not present at either address
 *   afterwards, and both read it back;
 * - move_pages() of it to the other NUMA node: it is there afterwards,
 *   seen from both addresses;
 * - MADV_HWPOISON of it, in a child with early kill (QEMU guest only):
 *   SIGBUS at one of the two addresses, then at both on access.
 * Each must finish without the soft-lockup detector firing on the test's
 * process (the kernel log, /dev/kmsg, names it; qemu/run also fails a run
 * whose console shows "BUG: soft lockup") and within the harness's
 * timeout; nothing here measures time.
 */
#include "rfp.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif

#define VMA_PAGES (1UL << 32)	/* 16 TiB */
#define HI ((1UL << 31) - 2)	/* the last page the reverse index names */
#define PGOFF 5
#define RW (PROT_READ | PROT_WRITE)

/*
 * Soft-lockup reports in the kernel log that name process pid ("BUG: soft
 * lockup - CPU#1 stuck for 26s! [rfp_walks:65]"); -1 if unreadable.
 */
static long lockups_of(pid_t pid)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	char rec[2048], tag[24];
	long n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	snprintf(tag, sizeof(tag), ":%d]", (int)pid);
	/* one record a read; EPIPE: records overwritten, go on */
	while ((r = read(fd, rec, sizeof(rec) - 1)) > 0 || (r < 0 && errno == EPIPE)) {
		if (r <= 0)
			continue;
		rec[r] = 0;
		n += strstr(rec, "soft lockup") && strstr(rec, tag);
	}
	close(fd);
	return n;
}

#define EXPECT_NO_LOCKUP() do {						\
	EXPECT_EQ(0, lockups_of(getpid()))				\
		TH_LOG("the soft-lockup detector fired on this process"); \
} while (0)

struct big {
	int fd;
	char *m, *lo, *hi;
};

/* The VMA, file page PGOFF at lo and hi, both present; false if SKIP()ped. */
static bool big_build(struct __test_metadata *_metadata, struct big *b)
{
	long walks;

	b->m = MAP_FAILED;
	b->fd = memfd_create("rfp_walks", 0);
	ASSERT_LE(0, b->fd);
	ASSERT_EQ(0, ftruncate(b->fd, (off_t)(VMA_PAGES * PS)));
	ASSERT_EQ(0, rfp_pattern_fd(b->fd, 0, 16, 0));
	b->m = mmap(NULL, VMA_PAGES * PS, RW, MAP_SHARED | MAP_NORESERVE, b->fd, 0);
	if (b->m == MAP_FAILED)
		SKIP(return false, "no room for a 16 TiB mapping: %s", strerror(errno));
	b->lo = b->m + PS;
	b->hi = b->m + HI * PS;
	RFP_FIRST_CHGPROT(return false, b->lo, PS, RW, PGOFF);
	ASSERT_EQ(0, rfp(b->hi, PS, RW, PGOFF, MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, rfp_touch(b->lo, RW, -1));
	ASSERT_EQ(0, rfp_touch(b->hi, RW, -1));
	ASSERT_EQ(1, rfp_present(b->lo, 1));
	ASSERT_EQ(1, rfp_present(b->hi, 1));
	walks = rfp_rmap_walks();
	TH_LOG("rmap_vma_walks so far: %ld", walks);
	return true;
}

static void big_free(struct big *b)
{
	if (b->m != MAP_FAILED)
		munmap(b->m, VMA_PAGES * PS);
	if (b->fd >= 0)
		close(b->fd);
}

/* Both addresses read file page PGOFF, whole. */
static void expect_both_read(struct __test_metadata *_metadata, struct big *b)
{
	size_t bad = 0;

	EXPECT_EQ(0, rfp_try_check(b->lo, PGOFF, 0, &bad));
	EXPECT_EQ(0, bad) TH_LOG("near the start: %zu words wrong", bad);
	bad = 0;
	EXPECT_EQ(0, rfp_try_check(b->hi, PGOFF, 0, &bad));
	EXPECT_EQ(0, bad) TH_LOG("8 TiB further: %zu words wrong", bad);
}

/* No fixture data: a fixture only for TEST_F_TIMEOUT(). */
FIXTURE(walk) {
	int unused;
};

FIXTURE_SETUP(walk)
{
}

FIXTURE_TEARDOWN(walk)
{
}

/*
 * MADV_PAGEOUT leaves a page mapped more than once alone: the copy near
 * the start is dropped first (MADV_DONTNEED keeps its offset), so the
 * page is mapped once, 8 TiB into the VMA, while the index still counts
 * two addresses.
 */
TEST_F_TIMEOUT(walk, pageout, 300)
{
	struct big b = { .fd = -1, .m = MAP_FAILED };
	long w0, w1;

	RFP_NEED_SWAP();
	rfp_catch();
	if (!big_build(_metadata, &b))
		goto out;
	ASSERT_EQ(0, madvise(b.lo, PS, MADV_DONTNEED));
	w0 = rfp_rmap_walks();
	EXPECT_EQ(0, rfp_pageout(b.hi, 1)) TH_LOG("still present after MADV_PAGEOUT");
	w1 = rfp_rmap_walks();
	TH_LOG("rmap_vma_walks: %ld -> %ld", w0, w1);
	EXPECT_EQ(0, rfp_present(b.lo, 1));
	expect_both_read(_metadata, &b);
	EXPECT_NO_LOCKUP();
out:
	big_free(&b);
}

static long move_pages(size_t n, void **pages, const int *nodes, int *status,
		       int flags)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status, flags);
}

/* Both mappings present: MPOL_MF_MOVE_ALL (root) moves a shared page. */
TEST_F_TIMEOUT(walk, move_pages, 300)
{
	struct big b = { .fd = -1, .m = MAP_FAILED };
	void *pages[2];
	int status[2] = { -1, -1 }, nodes[2];
	long ret;

	RFP_NEED_TWO_NODES();
	rfp_catch();
	if (!big_build(_metadata, &b))
		goto out;
	pages[0] = b.lo;
	pages[1] = b.hi;
	ASSERT_EQ(0, move_pages(1, pages, NULL, status, 0)) TH_LOG("%s", strerror(errno));
	ASSERT_LE(0, status[0]);
	nodes[0] = status[0] == 0 ? 1 : 0;
	ret = move_pages(1, pages, nodes, status, MPOL_MF_MOVE_ALL);
	EXPECT_EQ(0, ret) TH_LOG("move_pages: %ld, %s", ret, strerror(errno));
	EXPECT_EQ(nodes[0], status[0]) TH_LOG("status %d", status[0]);
	/* migration may leave SWP_FILE entries: a query needs present pages */
	expect_both_read(_metadata, &b);
	ASSERT_EQ(0, move_pages(2, pages, NULL, status, 0));
	EXPECT_EQ(nodes[0], status[0]);
	EXPECT_EQ(nodes[0], status[1]);
	EXPECT_NO_LOCKUP();
out:
	big_free(&b);
}

static volatile void *bus_addr;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!bus_addr)
		bus_addr = si->si_addr;
}

/*
 * In a child, so that only it maps the page: 0 all well; 1 no early
 * SIGBUS, 2 at neither address, 3 an access did not SIGBUS, 4 setup,
 * 5 skip (no CONFIG_MEMORY_FAILURE), 6 a soft lockup on the child.
 */
static int poison_child(struct __test_metadata *_metadata, struct big *b)
{
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };
	uint64_t v;

	if (!big_build(_metadata, b))
		return 4;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) ||
	    prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		return 4;
	if (madvise(b->lo, PS, MADV_HWPOISON))
		return errno == EINVAL ? 5 : 4;
	if (!bus_addr)
		return 1;
	if (bus_addr != b->lo && bus_addr != b->hi)
		return 2;
	rfp_catch();
	if (rfp_try_load64(b->lo, &v) != -SIGBUS || rfp_try_load64(b->hi, &v) != -SIGBUS)
		return 3;
	return lockups_of(getpid()) ? 6 : 0;
}

TEST_F_TIMEOUT(walk, hwpoison, 300)
{
	const char *lvl = getenv("EXPECT_LEVEL");
	int st;
	pid_t pid;

	if (!lvl || strcmp(lvl, "qemu"))
		SKIP(return, "poisons memory: QEMU guest only (EXPECT_LEVEL=%s)",
		     lvl ?: "(unset)");
	RFP_NEED_MANYPROTS(return);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct big b = { .fd = -1, .m = MAP_FAILED };

		_exit(poison_child(_metadata, &b));
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child status %#x", st);
	if (WEXITSTATUS(st) == 5)
		SKIP(return, "MADV_HWPOISON refused: no CONFIG_MEMORY_FAILURE");
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("1: no early SIGBUS, 2: SIGBUS at neither address, "
		       "3: an access did not SIGBUS, 4: setup failed, "
		       "6: the soft-lockup detector fired on the child");
}

TEST_HARNESS_MAIN
