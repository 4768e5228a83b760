// SPDX-License-Identifier: GPL-2.0
/*
 * The offset limit of SWP_FILE entries against a concurrent mmap().
 *
 * MAP_CHGPROT refuses offsets a non-present entry cannot hold (on x86 the
 * L1TF limit: a user-chosen offset must never look like a page frame),
 * except for a call that gives every page its linear offset and the
 * VMA's own protection, which stores no entry.  The syscall decides that
 * with mmap_lock held for reading, then takes it for writing: whatever
 * it decided must still hold for the VMA it then changes.
 *
 * Here a VMA maps a memfd from an offset A beyond the limit, so that a
 * call with pgoff A and the VMA's protection is exempt; while the call runs,
 * another thread maps the same range again with mmap(MAP_FIXED) from
 * offset 0.  Afterwards the range belongs to that mapping, whose linear
 * offsets are 0..NR-1: whatever the interleaving, page i must show file
 * page i.  A page showing file page A + i holds an entry with an offset
 * beyond the limit; so does one showing file page WRAP + i: A is the
 * limit plus WRAP, and where the limit is what the entry's offset field
 * holds (no L1TF limit below it), the offset stored loses its high bits.
 * /proc/self/pagemap is scanned as well where it shows SWP_FILE entries
 * (swap type and offset).
 *
 * Bounded by iterations; the outcomes of the racing calls (0 or EINVAL)
 * are logged, never asserted: they depend on timing.
 */
#include "rfp.h"

#include <pthread.h>
#include <sched.h>

#define NR 4			/* pages of the racing range */
/*
 * Iterations: UML has one CPU and runs its kernel without preemption, so
 * the two threads hardly interleave there; fewer rounds suffice.
 */
#define ITERATIONS 2000
#define ITERATIONS_UML 300
#define RW (PROT_READ | PROT_WRITE)
#define WRAP 16			/* A = the limit + WRAP */

#define PM_SWP_OFFSET(e) (((e) >> 5) & ((1ULL << 50) - 1))

/*
 * The pagemap swap type of SWP_FILE entries, from a page known to hold
 * one (file page 1, PROT_READ, not present): -1 if pagemap does not show
 * them as swap entries.
 */
static int swp_file_type(char *m, uint64_t *seen)
{
	uint64_t e = 0;

	if (rfp(m, PS, PROT_READ, 1, MAP_CHGPROT | MAP_NONBLOCK) ||
	    madvise(m, PS, MADV_DONTNEED) || rfp_pagemap(m, 1, &e))
		return -1;
	*seen = e;
	if (!(e & RFP_PM_SWAP) || (e & RFP_PM_PRESENT) ||
	    PM_SWP_OFFSET(e) != (1 << 3 | PROT_READ))
		return -1;
	return RFP_PM_SWAPTYPE(e);
}

static struct {
	char *m;
	int fd;
	int go, done, stop;	/* iteration handshake */
	long remap_failed;
} rc;

/* A spin of random length, 0 to 2^14 - 1 rounds, spread over scales. */
static void jitter(uint64_t *x)
{
	uint64_t r = rfp_rand(x);
	volatile unsigned long n = r & ((1UL << (r >> 60 & 15)) - 1);

	while (n)
		n--;
}

/* Each iteration: map the range again from offset 0, over the call. */
static void *remapper(void *arg)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int seen = 0, g;

	(void)arg;
	for (;;) {
		while ((g = __atomic_load_n(&rc.go, __ATOMIC_ACQUIRE)) == seen) {
			if (__atomic_load_n(&rc.stop, __ATOMIC_ACQUIRE))
				return NULL;
			sched_yield();	/* one CPU (UML): let the other thread run */
		}
		seen = g;
		jitter(&x);
		if (mmap(rc.m, NR * PS, RW, MAP_SHARED | MAP_FIXED, rc.fd, 0) != rc.m)
			rc.remap_failed++;
		__atomic_store_n(&rc.done, g, __ATOMIC_RELEASE);
	}
}

/* No fixture data: a fixture only for TEST_F_TIMEOUT(). */
FIXTURE(race) {
	int unused;
};

FIXTURE_SETUP(race)
{
}

FIXTURE_TEARDOWN(race)
{
}

TEST_F_TIMEOUT(race, exempt_call_vs_mmap, 600)
{
	long ok = 0, einval = 0, other = 0, other_errno = 0, bad = 0;
	unsigned long limit, a;
	int type, first_bad_page = -1;
	uint64_t x = 0x9e3779b97f4a7c15ULL, seen = 0, bad_id = 0;
	uint64_t pm[NR];
	long pm_beyond = 0;
	pthread_t th;
	char *probe;
	const char *lvl = getenv("EXPECT_LEVEL");
	int k, iterations = lvl && !strcmp(lvl, "uml") ? ITERATIONS_UML : ITERATIONS;

	rfp_catch();
	memset(&rc, 0, sizeof(rc));
	rc.fd = memfd_create("rfp_race_cap", 0);
	ASSERT_LE(0, rc.fd);
	ASSERT_EQ(0, ftruncate(rc.fd, 2 * PS));
	probe = mmap(NULL, PS, RW, MAP_SHARED, rc.fd, 0);
	ASSERT_NE(MAP_FAILED, probe);
	RFP_FIRST_CHGPROT(return, probe, PS, PROT_READ, 1);
	limit = rfp_offset_limit(probe);
	ASSERT_NE(0, limit) TH_LOG("no offset refused up to 2^50");
	type = swp_file_type(probe, &seen);
	TH_LOG("offset limit: %#lx pages; SWP_FILE in pagemap: %s (entry %#llx)", limit,
	       type < 0 ? "not shown" : "swap type", (unsigned long long)seen);
	if (type >= 0)
		TH_LOG("SWP_FILE swap type %d", type);
	munmap(probe, PS);

	a = limit + WRAP;
	if ((a + NR) * PS / PS != a + NR || (long)((a + NR) * PS) < 0)
		SKIP(return, "offset limit %#lx: beyond a file's size", a);
	ASSERT_EQ(0, ftruncate(rc.fd, (off_t)((a + NR) * PS)));
	ASSERT_EQ(0, rfp_pattern_fd(rc.fd, 0, NR, 0));
	ASSERT_EQ(0, rfp_pattern_fd(rc.fd, WRAP, NR, 0));
	ASSERT_EQ(0, rfp_pattern_fd(rc.fd, a, NR, 0));
	rc.m = mmap(NULL, NR * PS, RW, MAP_SHARED, rc.fd, (off_t)(a * PS));
	ASSERT_NE(MAP_FAILED, rc.m);
	/* the exempt call is taken, a nonlinear one at A refused */
	ASSERT_EQ(0, rfp(rc.m, NR * PS, RW, a, MAP_CHGPROT | MAP_NONBLOCK))
		TH_LOG("exempt call: %s", strerror(errno));
	errno = 0;
	ASSERT_EQ(-1, rfp(rc.m, NR * PS, PROT_READ, a, MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(EINVAL, errno);

	ASSERT_EQ(0, pthread_create(&th, NULL, remapper, NULL));
	for (k = 1; k <= iterations && !bad; k++) {
		long ret;

		ASSERT_EQ(rc.m, mmap(rc.m, NR * PS, RW, MAP_SHARED | MAP_FIXED, rc.fd,
				     (off_t)(a * PS)));
		__atomic_store_n(&rc.go, k, __ATOMIC_RELEASE);
		jitter(&x);
		errno = 0;
		ret = rfp(rc.m, NR * PS, RW, a, MAP_CHGPROT | MAP_NONBLOCK);
		if (!ret)
			ok++;
		else if (errno == EINVAL)
			einval++;
		else if (!other++)
			other_errno = errno;
		while (__atomic_load_n(&rc.done, __ATOMIC_ACQUIRE) != k)
			sched_yield();
		/* the range is the mapping from offset 0 now */
		if (type >= 0 && !rfp_pagemap(rc.m, NR, pm))
			for (int i = 0; i < NR; i++)
				if ((pm[i] & RFP_PM_SWAP) && RFP_PM_SWAPTYPE(pm[i]) == (unsigned int)type &&
				    PM_SWP_OFFSET(pm[i]) >> 3 >= limit)
					pm_beyond++;
		for (int i = 0; i < NR; i++) {
			uint64_t v = 0;

			if (rfp_try_id(rc.m + i * PS, &v) || v != rfp_id(i, 0)) {
				if (!bad++) {
					first_bad_page = i;
					bad_id = v;
				}
			}
		}
	}
	__atomic_store_n(&rc.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));

	TH_LOG("%d iterations: the exempt call returned 0 %ld times, EINVAL %ld, "
	       "other errors %ld (first: %s)", k - 1, ok, einval, other,
	       other ? strerror(other_errno) : "none");
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, rc.remap_failed);
	EXPECT_EQ(0, pm_beyond) TH_LOG("pagemap: SWP_FILE entries at or beyond the limit");
	EXPECT_EQ(0, bad)
		TH_LOG("iteration %d: page %d shows %#llx, not file page %d (%#llx); "
		       "file page %#lx, beyond the limit, is %#llx, file page %d %#llx",
		       k - 1, first_bad_page, (unsigned long long)bad_id, first_bad_page,
		       (unsigned long long)rfp_id(first_bad_page, 0),
		       a + first_bad_page, (unsigned long long)rfp_id(a + first_bad_page, 0),
		       WRAP + first_bad_page,
		       (unsigned long long)rfp_id(WRAP + first_bad_page, 0));
	munmap(rc.m, NR * PS);
	close(rc.fd);
}

TEST_HARNESS_MAIN
