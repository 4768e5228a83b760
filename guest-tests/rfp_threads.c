// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing with MAP_CHGPROT.  Re-applying a page's very
 * same (pgoff, prot) zaps and reinstalls its entry, and MADV_DONTNEED zaps
 * it; an access racing with either must fault the page back in with its
 * pgoff and protection, never fail one the page allows, never pass one it
 * denies, never show another file page.  Four accessor threads probe while
 * one remapper thread keeps doing that to the "stable" pages and remaps the
 * "churn" pages (interleaved with them, so their entries share page tables)
 * to random protections and file pages.
 */
#include "rfp.h"

#include <pthread.h>
#include <time.h>

#define NSTABLE 6
#define NCHURN 6
#define NPAGES (NSTABLE + NCHURN)	/* stable at even pages, churn at odd */
#define FPAGES 64
#define CHURN_PGOFF 48		/* churn pages show [48, 64), stable never do */
#define NACCESSORS 4
#define RUN_MS 4000		/* of about 5 s for the test, emulated guest */
#define RW (PROT_READ | PROT_WRITE)
#define MARK 0xeeeeeeeeeeeeeeeeULL	/* what accessors store on churn pages */

/* The first has prot != 0, for RFP_FIRST_CHGPROT. */
static const struct {
	unsigned long pgoff;
	int prot;
} stable[NSTABLE] = {
	{ 43, PROT_READ },
	{ 40, PROT_NONE },
	{ 45, RW },
	{ 41, PROT_EXEC },	/* rx */
	{ 44, PROT_WRITE },	/* rw */
	{ 42, PROT_NONE },
};

static const int churn_prots[] = {
	PROT_NONE, PROT_READ, PROT_WRITE, RW, PROT_EXEC, PROT_READ | PROT_EXEC,
	PROT_WRITE | PROT_EXEC, RW | PROT_EXEC,
};

static char *map;
static int stop;

static char *stable_page(size_t s)
{
	return map + 2 * s * PS;
}

static char *churn_page(size_t c)
{
	return map + (2 * c + 1) * PS;
}

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

struct accessor {
	pthread_t th;
	uint64_t seed;
	unsigned long allowed, allowed_faults, bad_data;
	unsigned long denied, denied_passed, wrong_code, wrong_addr;
	unsigned long churn, churn_faults, churn_bad;
};

/*
 * A word access (w: which word) on stable page s, which must go exactly
 * as its prot says; a write stores the word that is there.
 */
static void access_stable(struct accessor *st, size_t s, size_t w, bool write)
{
	char *a = stable_page(s) + w * 8;
	uint64_t want = rfp_word(stable[s].pgoff, w, 0), v = want;
	int code = write ? rfp_try_store64(a, want) : rfp_try_load64(a, &v);

	if (rfp_allows(stable[s].prot, write ? RFP_WRITE : RFP_READ)) {
		st->allowed++;
		if (code)
			st->allowed_faults++;
		else if (v != want)
			st->bad_data++;
	} else {
		st->denied++;
		if (!code)
			st->denied_passed++;
		else if (code != SEGV_ACCERR)
			st->wrong_code++;
		else if (rfp_fault_addr != a)
			st->wrong_addr++;
	}
}

/*
 * A word access on churn page c: it may fault, with SEGV_ACCERR only, and
 * may show only a churn file page (its word at its place, or the MARK
 * that accessors store).
 */
static void access_churn(struct accessor *st, size_t c, size_t w, bool write)
{
	char *a = churn_page(c) + w * 8;
	uint64_t v = MARK, pgoff;
	int code = write ? rfp_try_store64(a, v) : rfp_try_load64(a, &v);

	pgoff = v >> 32;
	st->churn++;
	if (code == SEGV_ACCERR && rfp_fault_addr == a)
		st->churn_faults++;
	else if (code || (v != MARK &&
			  (pgoff < CHURN_PGOFF || pgoff >= FPAGES ||
			   v != rfp_word(pgoff, w, 0))))
		st->churn_bad++;
}

static void *accessor(void *arg)
{
	struct accessor *st = arg;
	uint64_t x = st->seed;

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);
		size_t w = (r >> 16) % RFP_WORDS;
		bool write = r & 1;

		if (r & 6)	/* three in four on stable pages */
			access_stable(st, (r >> 3) % NSTABLE, w, write);
		else
			access_churn(st, (r >> 3) % NCHURN, w, write);
	}
	return NULL;
}

struct remapper {
	pthread_t th;
	unsigned long reapplied, dontneeds, churned, errors;
	int first_errno;
};

static void remap_check(struct remapper *st, long ret)
{
	if (ret && !st->errors++)
		st->first_errno = errno;
}

static void *remapper(void *arg)
{
	struct remapper *st = arg;
	uint64_t x = 0x9e3779b97f4a7c15;

	while (!stopped()) {
		uint64_t r = rfp_rand(&x);

		for (size_t s = 0; s < NSTABLE; s++) {
			remap_check(st, rfp(stable_page(s), PS, stable[s].prot,
					    stable[s].pgoff, MAP_CHGPROT));
			st->reapplied++;
		}
		if (r % 8 == 0)
			remap_check(st, madvise(map, NPAGES * PS, MADV_DONTNEED));
		else
			remap_check(st, madvise(stable_page(r % NSTABLE), PS,
						MADV_DONTNEED));
		st->dontneeds++;
		for (int i = 0; i < 4; i++) {
			r = rfp_rand(&x);
			remap_check(st, rfp(churn_page(r % NCHURN), PS,
					    churn_prots[(r >> 8) % ARRAY_SIZE(churn_prots)],
					    CHURN_PGOFF + (r >> 16) % (FPAGES - CHURN_PGOFF),
					    MAP_CHGPROT));
			st->churned++;
		}
	}
	return NULL;
}

TEST(stable_pages_under_remap)
{
	struct timespec run = { RUN_MS / 1000, RUN_MS % 1000 * 1000000L };
	struct accessor acc[NACCESSORS] = {}, sum = {};
	struct remapper rem = {};
	struct rfp_area area;

	ASSERT_EQ(0, rfp_area_open(&area, NPAGES, FPAGES, FPAGES, RW));
	map = area.m;
	RFP_FIRST_CHGPROT(return, stable_page(0), PS, stable[0].prot,
			  stable[0].pgoff);
	for (size_t s = 1; s < NSTABLE; s++)
		ASSERT_EQ(0, rfp(stable_page(s), PS, stable[s].prot,
				 stable[s].pgoff, MAP_CHGPROT));
	for (size_t c = 0; c < NCHURN; c++)
		ASSERT_EQ(0, rfp(churn_page(c), PS, RW, CHURN_PGOFF + c,
				 MAP_CHGPROT));
	rfp_catch();

	for (int i = 0; i < NACCESSORS; i++) {
		acc[i].seed = 0x2545f4914f6cdd1dULL * (i + 1);
		ASSERT_EQ(0, pthread_create(&acc[i].th, NULL, accessor, &acc[i]));
	}
	ASSERT_EQ(0, pthread_create(&rem.th, NULL, remapper, &rem));
	nanosleep(&run, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(rem.th, NULL));
	for (int i = 0; i < NACCESSORS; i++) {
		ASSERT_EQ(0, pthread_join(acc[i].th, NULL));
		sum.allowed += acc[i].allowed;
		sum.allowed_faults += acc[i].allowed_faults;
		sum.bad_data += acc[i].bad_data;
		sum.denied += acc[i].denied;
		sum.denied_passed += acc[i].denied_passed;
		sum.wrong_code += acc[i].wrong_code;
		sum.wrong_addr += acc[i].wrong_addr;
		sum.churn += acc[i].churn;
		sum.churn_faults += acc[i].churn_faults;
		sum.churn_bad += acc[i].churn_bad;
	}

	TH_LOG("remapper: %lu re-applied, %lu MADV_DONTNEED, %lu churn remaps, %lu errors",
	       rem.reapplied, rem.dontneeds, rem.churned, rem.errors);
	TH_LOG("allowed: %lu, %lu faulted, %lu wrong data",
	       sum.allowed, sum.allowed_faults, sum.bad_data);
	TH_LOG("denied: %lu, %lu did not fault, %lu not SEGV_ACCERR, %lu wrong si_addr",
	       sum.denied, sum.denied_passed, sum.wrong_code, sum.wrong_addr);
	TH_LOG("churn: %lu accesses, %lu SEGV_ACCERR, %lu wrong",
	       sum.churn, sum.churn_faults, sum.churn_bad);

	EXPECT_EQ(0, rem.errors) TH_LOG("first error: %s", strerror(rem.first_errno));
	EXPECT_EQ(0, sum.allowed_faults);
	EXPECT_EQ(0, sum.bad_data);
	EXPECT_EQ(0, sum.denied_passed);
	EXPECT_EQ(0, sum.wrong_code);
	EXPECT_EQ(0, sum.wrong_addr);
	EXPECT_EQ(0, sum.churn_bad);
	/* and the race was run at all */
	EXPECT_LT(0, rem.reapplied);
	EXPECT_LT(0, rem.churned);
	EXPECT_LT(0, sum.allowed);
	EXPECT_LT(0, sum.denied);
	EXPECT_LT(0, sum.churn_faults);

	/* after the race, every stable page once more at a spread of offsets */
	for (size_t s = 0; s < NSTABLE; s++) {
		struct accessor one = {};

		for (size_t off = 0; off < PS; off += 509) {
			access_stable(&one, s, off / 8, false);
			access_stable(&one, s, off / 8, true);
		}
		EXPECT_EQ(0, one.allowed_faults + one.bad_data + one.denied_passed +
			     one.wrong_code + one.wrong_addr) TH_LOG("stable page %zu", s);
	}
	rfp_area_close(&area);
}

TEST_HARNESS_MAIN
