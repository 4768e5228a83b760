// SPDX-License-Identifier: GPL-2.0
/*
 * Memory failure of a page mapped at a nonlinear address: a process that
 * asked for early kill (PR_MCE_KILL_EARLY) gets SIGBUS with si_addr at the
 * address that maps the page, not at the page's linear address, and the
 * address then faults with SIGBUS.  MADV_HWPOISON injects it (root,
 * CONFIG_MEMORY_FAILURE); the poisoned page stays out of use in this boot.
 *
 * A poisoned page at a nonlinear address then behaves as the same file
 * page mapped the per-page way (its own one-page mapping, per_page_way
 * shows what that does): every access raises SIGBUS, after MADV_DONTNEED
 * too and in a child forked afterwards, never another file page's data;
 * a later MAP_CHGPROT call that maps the poisoned file page elsewhere
 * gives SIGBUS there, one that maps another file page over the poisoned
 * address reads that page.  The poisoning tests run in the QEMU guest
 * only (EXPECT_LEVEL=qemu): they take memory out of the machine.
 */
#include "rfp.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

#define NPAGES 16
#define AT 9		/* the address (page index) ... */
#define PGOFF 5		/* ... that maps this file page, inside the linear range */

static volatile void *bus_addr;
static volatile int bus_code;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	bus_addr = si->si_addr;
	bus_code = si->si_code;
}

/* In a child: 0 all well, 1 no early SIGBUS, 2 wrong si_addr, 3 setup, 4 skip */
static int child(char *m, int *detail)
{
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) ||
	    prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		return 3;
	m[AT * PS] = 1;		/* present and dirty */
	if (madvise(m + AT * PS, PS, MADV_HWPOISON))
		return errno == EINVAL ? 4 : 3;
	if (!bus_addr)
		return 1;
	*detail = (int)(((char *)bus_addr - m) / (long)PS);
	return bus_addr == m + AT * PS ? 0 : 2;
}

TEST(early_kill_at_nonlinear_address)
{
	struct rfp_area a;
	int st, detail = -1, pfd[2];
	pid_t pid;

	ASSERT_EQ(0, rfp_area_open(&a, NPAGES, NPAGES, NPAGES, PROT_READ | PROT_WRITE));
	RFP_FIRST_CHGPROT(return, a.m + AT * PS, PS, PROT_READ | PROT_WRITE, PGOFF);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int r = child(a.m, &detail);

		if (write(pfd[1], &detail, sizeof(detail)) != sizeof(detail))
			r = 3;
		_exit(r);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(sizeof(detail), read(pfd[0], &detail, sizeof(detail)));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child status %#x", st);
	if (WEXITSTATUS(st) == 4)
		SKIP(return, "MADV_HWPOISON refused: no CONFIG_MEMORY_FAILURE");
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("1: no early SIGBUS, 2: si_addr at page %d, not %d (linear: %d)",
		       detail, AT, PGOFF);
	rfp_area_close(&a);
}

/*
 * Late kill: the poisoning sends no signal to other processes, the next
 * access gets SIGBUS.  The caller itself, since 6.6, gets the poisoning
 * reported as an action-required error (BUS_MCEERR_AR) when it maps the
 * page; that one must name the address it was poisoned at, the nonlinear
 * one in a nonlinear VMA.  Any other SIGBUS is stray.
 */
static volatile int stray_bus;
static char *volatile poisoning;	/* the page, while it is poisoned */
static size_t poison_len;

static void on_stray_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == BUS_MCEERR_AR && poisoning &&
	    (char *)si->si_addr >= poisoning && (char *)si->si_addr < poisoning + poison_len)
		return;
	stray_bus++;
}

/*
 * Poison the page at p, which the caller made present and dirty: 0, or
 * why not (EINVAL: no CONFIG_MEMORY_FAILURE, EPERM: not root, ENOTSUP:
 * not the QEMU guest).
 */
static int poison(char *p)
{
	struct sigaction sa = { .sa_sigaction = on_stray_bus, .sa_flags = SA_SIGINFO }, old;
	const char *lvl = getenv("EXPECT_LEVEL");
	int ret;

	if (!lvl || strcmp(lvl, "qemu"))
		return ENOTSUP;
	if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0))
		return errno;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	poison_len = PS;
	poisoning = p;
	ret = madvise(p, PS, MADV_HWPOISON) ? errno : 0;
	poisoning = NULL;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}

#define POISON(out, p) do {						\
	int __e = poison(p);						\
									\
	if (__e == ENOTSUP)						\
		SKIP(out, "poisons memory: QEMU guest only (EXPECT_LEVEL=%s)", \
		     getenv("EXPECT_LEVEL") ?: "(unset)");		\
	if (__e == EINVAL)						\
		SKIP(out, "MADV_HWPOISON refused: no CONFIG_MEMORY_FAILURE"); \
	if (__e == EPERM)						\
		SKIP(out, "MADV_HWPOISON refused: not root");		\
	ASSERT_EQ(0, __e) TH_LOG("MADV_HWPOISON: %s", strerror(__e));	\
	EXPECT_EQ(0, stray_bus) TH_LOG("SIGBUS while poisoning (late kill)"); \
} while (0)

/* A probe that must end in SIGBUS; what it read otherwise. */
#define EXPECT_BUS(p, what) do {					\
	uint64_t __v = 0;						\
	int __c = rfp_try_load64((char *)(p) + RFP_OFF_ID, &__v);	\
									\
	EXPECT_EQ(-SIGBUS, __c)						\
		TH_LOG("%s: si_code %d, read %#llx (file page 0: %#llx, 1: %#llx, 3: %#llx)", \
		       what, __c, (unsigned long long)__v,		\
		       (unsigned long long)rfp_id(0, 0),		\
		       (unsigned long long)rfp_id(1, 0),		\
		       (unsigned long long)rfp_id(3, 0));		\
} while (0)

/* The page at p shows file page pgoff and takes a write of its own byte. */
#define EXPECT_SHOWS(p, pgoff) do {					\
	uint64_t __v = 0;						\
									\
	EXPECT_EQ(0, rfp_try_id((p), &__v));				\
	EXPECT_EQ(rfp_id((pgoff), 0), __v) TH_LOG("not file page %d", (int)(pgoff)); \
	EXPECT_EQ(0, rfp_try_store((char *)(p) + RFP_OFF_W,		\
				   rfp_byte((pgoff), RFP_OFF_W, 0)));	\
} while (0)

#define NL_PAGES 4

/*
 * The reference: file page 2 of a memfd mapped the per-page way (a
 * one-page mapping), written, poisoned: SIGBUS there, after MADV_DONTNEED,
 * in a forked child, through a new mapping of the page elsewhere; a
 * mapping of file page 3 over the address reads page 3.
 */
TEST(per_page_way)
{
	int fd = rfp_memfd(NL_PAGES), st;
	char *p, *q;
	pid_t pid;

	rfp_catch();
	ASSERT_LE(0, fd);
	p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * PS);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, rfp_try_store(p + RFP_OFF_W, rfp_byte(2, RFP_OFF_W, 0)));
	POISON(goto out, p);
	EXPECT_BUS(p, "after poisoning");
	ASSERT_EQ(0, madvise(p, PS, MADV_DONTNEED));
	EXPECT_BUS(p, "after MADV_DONTNEED");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint64_t v;

		_exit(rfp_try_load64(p + RFP_OFF_ID, &v) == -SIGBUS ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st) TH_LOG("the child could access the poisoned page");
	q = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * PS);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_BUS(q, "another mapping of the poisoned file page");
	munmap(q, PS);
	ASSERT_EQ(p, mmap(p, PS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			  fd, 3 * PS));
	EXPECT_SHOWS(p, 3);
out:
	munmap(p, PS);
	close(fd);
}

/*
 * Page 0 of a 4-page VMA maps file page 2, written and poisoned: SIGBUS
 * at it, also after MADV_DONTNEED (the offset stays, the poison with it:
 * not file page 0), and at page 2, the poisoned file page's linear place.
 */
TEST(nonlinear_after_dontneed)
{
	struct rfp_area a;

	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&a, NL_PAGES, NL_PAGES, NL_PAGES,
				   PROT_READ | PROT_WRITE));
	RFP_FIRST_CHGPROT(goto out, a.m, PS, PROT_READ | PROT_WRITE, 2);
	ASSERT_EQ(0, rfp_try_store(a.m + RFP_OFF_W, rfp_byte(2, RFP_OFF_W, 0)));
	POISON(goto out, a.m);
	EXPECT_BUS(a.m, "after poisoning");
	ASSERT_EQ(0, madvise(a.m, PS, MADV_DONTNEED));
	EXPECT_BUS(a.m, "after MADV_DONTNEED");
	/* a write must not land in another file page either */
	EXPECT_EQ(-SIGBUS, rfp_try_store(a.m + RFP_OFF_W, 0xa5));
	EXPECT_EQ(0, rfp_pattern_bad_fd(a.fd, 0, 0)) TH_LOG("file page 0 written");
	EXPECT_BUS(a.m + 2 * PS, "file page 2 at its linear place");
	EXPECT_SHOWS(a.m + PS, 1);
	EXPECT_SHOWS(a.m + 3 * PS, 3);
out:
	rfp_area_close(&a);
}

/*
 * A poisoned page the protection does not let one write: the write gets
 * SIGSEGV SEGV_ACCERR, as it does on a read-only per-page mapping, which
 * checks its VMA before its entry; a read gets SIGBUS.  In the nonlinear
 * VMA, page 0 keeps its linear offset and the VMA's PROT_READ, so memory
 * failure leaves a plain hwpoison entry there (the fuzzer found a write
 * getting SIGBUS).
 */
TEST(refused_write_to_poisoned)
{
	int fd = rfp_memfd(NL_PAGES);
	struct rfp_area a;
	uint64_t v;
	char *p;

	rfp_catch();
	rfp_area_init(&a);
	ASSERT_LE(0, fd);
	p = mmap(NULL, PS, PROT_READ, MAP_SHARED, fd, 2 * PS);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, rfp_try_id(p, &v));
	POISON(goto out, p);
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(p + RFP_OFF_W, 0xa5))
		TH_LOG("per-page way: a write to the poisoned read-only page");
	EXPECT_BUS(p, "per-page way: a read");

	ASSERT_EQ(0, rfp_area_open(&a, NL_PAGES, NL_PAGES, NL_PAGES, PROT_READ));
	RFP_FIRST_CHGPROT(goto out, a.m + PS, PS, PROT_READ | PROT_WRITE, 3);
	ASSERT_EQ(0, rfp_try_id(a.m, &v));
	EXPECT_EQ(rfp_id(0, 0), v);
	POISON(goto out, a.m);
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(a.m + RFP_OFF_W, 0xa5))
		TH_LOG("nonlinear VMA: a write to the poisoned read-only page");
	EXPECT_BUS(a.m, "nonlinear VMA: a read");
	EXPECT_SHOWS(a.m + PS, 3);
out:
	rfp_area_close(&a);
	munmap(p, PS);
	close(fd);
}

/* The same, in a child forked after the poisoning, before and after DONTNEED. */
TEST(nonlinear_in_child)
{
	struct rfp_area a;
	int st, pfd[2], codes[2] = { 1, 1 };
	uint64_t ids[2] = { 0, 0 };
	pid_t pid;

	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&a, NL_PAGES, NL_PAGES, NL_PAGES,
				   PROT_READ | PROT_WRITE));
	RFP_FIRST_CHGPROT(goto out, a.m, PS, PROT_READ | PROT_WRITE, 2);
	ASSERT_EQ(0, rfp_try_store(a.m + RFP_OFF_W, rfp_byte(2, RFP_OFF_W, 0)));
	POISON(goto out, a.m);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		codes[0] = rfp_try_load64(a.m + RFP_OFF_ID, &ids[0]);
		madvise(a.m, PS, MADV_DONTNEED);
		codes[1] = rfp_try_load64(a.m + RFP_OFF_ID, &ids[1]);
		if (write(pfd[1], codes, sizeof(codes)) != sizeof(codes) ||
		    write(pfd[1], ids, sizeof(ids)) != sizeof(ids))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st);
	ASSERT_EQ(sizeof(codes), read(pfd[0], codes, sizeof(codes)));
	ASSERT_EQ(sizeof(ids), read(pfd[0], ids, sizeof(ids)));
	EXPECT_EQ(-SIGBUS, codes[0])
		TH_LOG("child: si_code %d, read %#llx (file page 0: %#llx)", codes[0],
		       (unsigned long long)ids[0], (unsigned long long)rfp_id(0, 0));
	EXPECT_EQ(-SIGBUS, codes[1])
		TH_LOG("child, after MADV_DONTNEED: si_code %d, read %#llx (file page 0: %#llx)",
		       codes[1], (unsigned long long)ids[1],
		       (unsigned long long)rfp_id(0, 0));
	EXPECT_BUS(a.m, "parent, after the child");
	close(pfd[0]);
	close(pfd[1]);
out:
	rfp_area_close(&a);
}

/*
 * Later MAP_CHGPROT calls over a poisoned nonlinear page, with its
 * poisoned entry in place or after MADV_DONTNEED: the poisoned file page
 * mapped at page 1 gives SIGBUS there; file page 3 mapped over page 0
 * reads page 3.  The kernel must not WARN (qemu/run fails the run on it),
 * also when the VMA goes (DEBUG_VM checks the reverse index then).
 */
FIXTURE(over) {
	struct rfp_area a;
};

FIXTURE_VARIANT(over) {
	bool dontneed;
};

FIXTURE_VARIANT_ADD(over, poisoned_entry) {
	.dontneed = false,
};

FIXTURE_VARIANT_ADD(over, after_dontneed) {
	.dontneed = true,
};

FIXTURE_SETUP(over)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NL_PAGES, NL_PAGES, NL_PAGES,
				   PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(over)
{
	rfp_area_close(&self->a);
}

TEST_F(over, remap_around_poisoned)
{
	char *m = self->a.m;

	RFP_FIRST_CHGPROT(return, m, PS, PROT_READ | PROT_WRITE, 2);
	ASSERT_EQ(0, rfp_try_store(m + RFP_OFF_W, rfp_byte(2, RFP_OFF_W, 0)));
	POISON(return, m);
	if (variant->dontneed) {
		ASSERT_EQ(0, madvise(m, PS, MADV_DONTNEED));
	}

	/* the poisoned file page elsewhere */
	EXPECT_EQ(0, rfp(m + PS, PS, PROT_READ | PROT_WRITE, 2, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	EXPECT_BUS(m + PS, "file page 2 remapped at page 1");
	/* another file page over the poisoned address */
	EXPECT_EQ(0, rfp(m, PS, PROT_READ | PROT_WRITE, 3, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	EXPECT_SHOWS(m, 3);
	EXPECT_BUS(m + PS, "file page 2 at page 1, after page 0 changed");
	/* and back */
	EXPECT_EQ(0, rfp(m, PS, PROT_READ, 2, MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	EXPECT_BUS(m, "file page 2 back at page 0");
	EXPECT_EQ(0, rfp(m, 2 * PS, PROT_READ | PROT_WRITE, 0, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	EXPECT_SHOWS(m, 0);
	EXPECT_SHOWS(m + PS, 1);
}

TEST_HARNESS_MAIN
