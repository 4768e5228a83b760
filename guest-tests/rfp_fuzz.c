// SPDX-License-Identifier: GPL-2.0
/*
 * A differential fuzzer of remap_file_pages(MAP_CHGPROT) (fuzz/fuzz.h
 * says how it works).  Without arguments it is a kselftest binary like
 * the other guest tests: fixed seeds and fixed operation budgets, so a
 * run is the same every time.  With arguments it is the soak and replay
 * tool (make fuzz, scripts/fuzz):
 *
 *   rfp_fuzz --seed S (--ops N | --seconds T) [--mode single|threads]
 *            [--layout small|far|mixed] [--hwpoison N] [--verbose]
 *
 * It prints its seed first.  On a mismatch it prints the seed, the
 * operation, the operations before it and the command line that replays
 * it (single mode replays exactly), and exits 1.
 */
#include "rfp.h"
#include "fuzz/fuzz.h"

#include <getopt.h>
#include <time.h>

/*
 * The harness tests: fixed seeds, fixed operation budgets.  The same
 * budget costs far more in UML (every fault and signal of the probes is a
 * round trip through the UML kernel, all of it under TCG here), so each
 * level has its own, each well under two minutes under TCG.
 */
struct budget {
	long small_ops, far_ops, thread_remaps;
};

static const struct budget qemu_budget = { 2000, 2000, 5000 };
static const struct budget uml_budget = { 40, 0, 200 };

static const struct budget *budget(void)
{
	return fz_uml() ? &uml_budget : &qemu_budget;
}

/*
 * single_small's runs: each seed makes its own VMAs (their protection,
 * linear offsets, files); MADV_HWPOISON (QEMU only: each call poisons a
 * page frame on each side for the rest of the boot) in all of them.
 * With the QEMU budget they reach, between them, every kind of operation,
 * and what caught defects of an earlier version of the series: seed 6
 * drops a poisoned nonlinear page (MADV_DONTNEED, op 33), seed 7 makes a
 * page PROT_READ in the first MAP_CHGPROT after clear_refs (op 54).
 */
static const struct {
	uint64_t seed;
	int hwpoison;
} small_runs[] = {
	{ 5, 2 }, { 6, 2 }, { 7, 2 },
};

/*
 * The spec's first MAP_CHGPROT, on a scratch mapping: must work with
 * EXPECT_MANYPROTS=on, else fail with EINVAL and the test SKIPs.
 */
#define NEED_CHGPROT() do {						\
	char *__m = fz_scratch_page();					\
									\
	ASSERT_NE(MAP_FAILED, __m);					\
	RFP_FIRST_CHGPROT(return, __m, PS, PROT_READ, 0);		\
	munmap(__m, PS);						\
} while (0)

FIXTURE(fuzz) {
	struct fz_stats st;
};

FIXTURE_SETUP(fuzz)
{
	memset(&self->st, 0, sizeof(self->st));
}

FIXTURE_TEARDOWN(fuzz)
{
}

/*
 * The oracle on a small VMA: a few seeds, each with its own VMA
 * protection and linear offset, every kind of operation.
 */
TEST_F_TIMEOUT(fuzz, single_small, 300)
{
	struct fz_opts o = {
		.ops = budget()->small_ops, .mode = FZ_SINGLE, .layout = FZ_SMALL,
		.tag = "# ",
	};
	struct fz_stats sum = {};
	long ops = o.ops * ARRAY_SIZE(small_runs);
	bool found = false;

	NEED_CHGPROT();
	/* every run, even after one found something: each may find another */
	for (size_t r = 0; r < ARRAY_SIZE(small_runs); r++) {
		int ret;

		o.seed = small_runs[r].seed;
		o.hwpoison = small_runs[r].hwpoison;
		memset(&self->st, 0, sizeof(self->st));
		ret = fz_single(&o, &self->st);
		EXPECT_EQ(FZ_PASS, ret)
			TH_LOG("seed %llu: see the mismatch above", (unsigned long long)o.seed);
		found |= ret != FZ_PASS;
		sum.remaps += self->st.remaps;
		sum.refused += self->st.refused;
		sum.denied += self->st.denied;
		sum.kernel += self->st.kernel;
		sum.forks += self->st.forks;
		sum.hwpoisons += self->st.hwpoisons;
	}
	if (found)
		return;
	/*
	 * And the runs did what a fuzzer must, between them (UML's budget
	 * is small): remaps, refusals, faults, kernel accesses.
	 */
	EXPECT_LT(ops / 10, sum.remaps);
	EXPECT_LT(ops / 50, sum.refused);
	EXPECT_LT(ops / 10, sum.denied);
	EXPECT_LT(0, sum.kernel);
	EXPECT_LT(0, sum.forks);
	if (!fz_uml())		/* QEMU only: no MEMORY_FAILURE in UML */
		EXPECT_LT(0, sum.hwpoisons);
}

/*
 * The oracle on an 8 TiB VMA, its tracked pages across the last page the
 * reverse index can name.  Seed 10 (op 3) makes a call refused by the
 * 8 TiB rule whose first page it could change in place: an earlier
 * version of the series changed it.  No room for it in UML.
 */
TEST_F_TIMEOUT(fuzz, single_far, 200)
{
	struct fz_opts o = {
		.seed = 10, .ops = budget()->far_ops, .mode = FZ_SINGLE,
		.layout = FZ_FAR, .tag = "# ",
	};
	int ret;

	NEED_CHGPROT();
	if (!o.ops)
		SKIP(return, "no room for an 8 TiB mapping at this level");
	ret = fz_single(&o, &self->st);
	if (ret == FZ_NOROOM)
		SKIP(return, "no room for an 8 TiB mapping here");
	ASSERT_EQ(FZ_PASS, ret) TH_LOG("see the mismatch above");
	EXPECT_LT(o.ops / 10, self->st.remaps);
	EXPECT_LT(0, self->st.far_refused);
	EXPECT_LT(o.ops / 10, self->st.denied);
}

/* No oracle: threads and processes at once, invariants only. */
TEST_F_TIMEOUT(fuzz, threads, 200)
{
	struct fz_opts o = {
		.seed = 3, .ops = budget()->thread_remaps, .mode = FZ_THREADS,
		.tag = "# ",
	};

	NEED_CHGPROT();
	ASSERT_EQ(FZ_PASS, fz_threads(&o, &self->st)) TH_LOG("see above");
	EXPECT_EQ(0, self->st.violations);
	EXPECT_EQ(o.ops, self->st.remaps);
	EXPECT_LT(0, self->st.forks);
}

/* --- the command line --- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rfp_fuzz                  the kselftest tests (fixed seeds and budgets)\n"
		"       rfp_fuzz [--seed S] (--ops N | --seconds T) [--mode single|threads]\n"
		"                [--layout small|far|mixed] [--hwpoison N] [--verbose]\n"
		"  --seed S      the sequence (default: from the clock; printed first)\n"
		"  --ops N       operations (single mode: N replays exactly; threads:\n"
		"                remap calls while the others run)\n"
		"  --seconds T   run for T seconds instead\n"
		"  --mode        single: the oracle (default); threads: invariants only\n"
		"  --layout      small VMAs, the 8 TiB one, or both (default mixed)\n"
		"  --hwpoison N  MADV_HWPOISON calls allowed (QEMU, root; default 3);\n"
		"                each poisons a page frame for the rest of the boot\n"
		"  --verbose     print every operation\n"
		"  --skip LIST   draw but do not make these operations (N, or N.M: the\n"
		"                child's M-th at fork N), to minimise a mismatch\n"
		"  --lenient     NOTEs (undocumented differences that leave both sides\n"
		"                the same; they never stop a run) do not make it fail\n"
		"  --workers L   threads mode: only these besides the remapper (accessor,\n"
		"                madviser, filer, vma, forker, kernel), to narrow down\n"
		"Environment: EXPECT_MANYPROTS=on|off|absent, EXPECT_LEVEL=qemu|uml.\n"
		"Exit: 0 nothing found, 1 a mismatch or broken invariant, 2 cannot run,\n"
		"      3 hung (--seconds only), 4 the layout does not fit here.\n");
}

static void on_alarm(int sig)
{
	static const char msg[] = "rfp_fuzz: HANG: still running long after the budget\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

/* 0 if MAP_CHGPROT works here, 1 if refused as EXPECT_MANYPROTS says, 2 else. */
static int feature(void)
{
	const char *e = rfp_expect_mode();
	bool off = !strcmp(e, "off") || !strcmp(e, "absent");
	char *m = fz_scratch_page();
	long r;
	int err;

	if (m == MAP_FAILED)
		return 2;
	errno = 0;
	r = rfp(m, PS, PROT_READ, 0, MAP_CHGPROT);
	err = errno;
	munmap(m, PS);
	if (!r && off) {
		printf("rfp_fuzz: MAP_CHGPROT works, but EXPECT_MANYPROTS=%s\n", e);
		return 2;
	}
	if (r && off && err == EINVAL) {
		printf("rfp_fuzz: MAP_CHGPROT refused with EINVAL, as EXPECT_MANYPROTS=%s "
		       "says: nothing to fuzz\n", e);
		return 1;
	}
	if (r) {
		printf("rfp_fuzz: MAP_CHGPROT refused: %s (EXPECT_MANYPROTS=%s)\n",
		       strerror(err), e);
		return 2;
	}
	return 0;
}

static int cli(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' },
		{ "layout", required_argument, NULL, 'l' },
		{ "hwpoison", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "skip", required_argument, NULL, 'k' },
		{ "lenient", no_argument, NULL, 'L' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct fz_opts o = { .mode = FZ_SINGLE, .layout = FZ_MIXED, .hwpoison = 3, .tag = "" };
	struct fz_stats st = {};
	struct timespec now;
	bool seeded = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:n:t:m:l:p:vk:Lw:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'n':
			o.ops = strtol(optarg, NULL, 0);
			break;
		case 't':
			o.seconds = strtol(optarg, NULL, 0);
			break;
		case 'm':
			if (!strcmp(optarg, "threads"))
				o.mode = FZ_THREADS;
			else if (strcmp(optarg, "single"))
				goto bad;
			break;
		case 'l':
			if (!strcmp(optarg, "small"))
				o.layout = FZ_SMALL;
			else if (!strcmp(optarg, "far"))
				o.layout = FZ_FAR;
			else if (strcmp(optarg, "mixed"))
				goto bad;
			break;
		case 'p':
			o.hwpoison = atoi(optarg);
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'k':
			o.skip = optarg;
			break;
		case 'L':
			o.lenient = true;
			break;
		case 'w':
			o.workers = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || o.ops < 0 || o.seconds < 0 || (!o.ops && !o.seconds))
		goto bad;
	if (!seeded) {
		clock_gettime(CLOCK_REALTIME, &now);
		o.seed = (uint64_t)now.tv_sec * 1000003 ^ now.tv_nsec ^ getpid();
	}
	printf("rfp_fuzz: seed %#llx, %s mode, %s layout, budget %ld %s, level %s\n",
	       (unsigned long long)o.seed, o.mode == FZ_THREADS ? "threads" : "single",
	       o.layout == FZ_FAR ? "far" : o.layout == FZ_SMALL ? "small" : "mixed",
	       o.ops ? o.ops : o.seconds, o.ops ? "ops" : "seconds",
	       fz_uml() ? "uml" : "qemu");
	fflush(stdout);
	ret = feature();
	if (ret)
		return ret == 1 ? 0 : 2;
	if (!o.ops) {
		signal(SIGALRM, on_alarm);
		alarm(o.seconds + 600);
	}
	ret = o.mode == FZ_THREADS ? fz_threads(&o, &st) : fz_single(&o, &st);
	alarm(0);
	switch (ret) {
	case FZ_PASS:
		printf("rfp_fuzz: seed %#llx: nothing found\n", (unsigned long long)o.seed);
		return 0;
	case FZ_FOUND:
		printf("rfp_fuzz: seed %#llx: FOUND (see above)\n", (unsigned long long)o.seed);
		return 1;
	case FZ_NOROOM:
		return 4;
	default:
		return 2;
	}
bad:
	usage(stderr);
	return 2;
}

/*
 * What TEST_HARNESS_MAIN does, with the command line in front: 6.1's
 * harness needs this constructor to learn the order the tests were
 * registered in; since 6.9's (FIXTURE_TEARDOWN_PARENT) it finds that itself.
 */
#ifndef FIXTURE_TEARDOWN_PARENT
static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}
#endif

int main(int argc, char **argv)
{
	if (argc > 1)
		return cli(argc, argv);
	return test_harness_run(argc, argv);
}
