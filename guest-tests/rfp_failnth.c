// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures inside MAP_CHGPROT calls and fork(), walked one
 * injection point at a time with the per-task /proc/thread-self/fail-nth
 * (CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC): N makes the Nth
 * fault-injection point the task meets from then on fail.  Slab and page
 * allocations that may sleep count too (ignore-gfp-wait N, min-order 0,
 * verbose 0 for the run, put back afterwards); user pages (highmem) are
 * left out, as by default.
 *
 * For each kind of call, N = 1, 2, 3... on a fresh copy of the same
 * starting state, until the call meets fewer than N points (fail-nth
 * reads back N - k > 0; 0 means the injection was consumed):
 * - a call whose injected failure it reports must return -1 with ENOMEM
 *   (or EINTR, EAGAIN) and have changed no page: each shows the same file
 *   page, whole, with the same protection (read, write and exec probes),
 *   presence aside; and the range is still one VMA with its bounds;
 * - a call that succeeds, with or without a failure it could live with,
 *   must have done all it should.
 * fork: a failed fork returns -1 and the parent's pages are as they were;
 * the child of a successful one sees the right pages.  The number of
 * injection points of each kind is logged.
 *
 * Only where fault injection is there: UML and kernels without it SKIP.
 */
#include "rfp.h"

#include <sys/mount.h>
#include <sys/wait.h>

#define N 1024		/* pages of the VMA: two PTE tables' worth */
#define F 1024		/* pages of its file */
#define TABLE 512	/* pages a PTE table maps */
#define RW (PROT_READ | PROT_WRITE)
#define RX (PROT_READ | PROT_EXEC)
#define MAX_NTH 3000	/* a bound: no kind comes near it */

struct pg {
	size_t pgoff;
	int prot;
};

/*
 * The nonlinear starting layout: pages 0..3 map file pages 16..19
 * shuffled, pages 4..11 the run 20..27, pages 12..15 file pages 28..31
 * shuffled, pages 508..511 (the end of the first PTE table) the run
 * 656..659, the end of a chunk of the reverse index (60 file pages to a
 * chunk); the protections cycle through all eight (page 0 PROT_READ).
 * The rest is linear with the VMA's protection, and the second PTE table
 * is not there yet.  Calls that need new chunks take file pages from 300
 * (chunk 5), 660 (chunk 11) and 700 (chunk 11).
 */
static const size_t nl_pgoff[16] = {
	17, 16, 19, 18, 20, 21, 22, 23, 24, 25, 26, 27, 30, 28, 31, 29,
};
#define END_RUN 508		/* pages 508..511 */
#define END_PGOFF 656

/* The pages checked after each call: where the kinds change something. */
static bool watched(size_t i)
{
	return i < 16 || (i >= END_RUN && i < TABLE + 16);
}

static void layout_linear(struct pg *l)
{
	for (size_t i = 0; i < N; i++)
		l[i] = (struct pg){ i, RW };
}

static void layout_nl(struct pg *l)
{
	layout_linear(l);
	for (size_t i = 0; i < 16; i++)
		l[i] = (struct pg){ nl_pgoff[i], rfp_scatter_prot(i) };
	for (size_t i = 0; i < 4; i++)
		l[END_RUN + i] = (struct pg){ END_PGOFF + i, rfp_scatter_prot(i + 3) };
}

enum start { LINEAR, NL, NL_SWAPPED, NL_SHARED };

static const char *const start_name[] = {
	"linear VMA, populated", "nonlinear, populated",
	"nonlinear, paged out", "nonlinear, index shared with a child",
};

/* A remap_file_pages() call: page first, npages, prot, pgoff, flags. */
struct call {
	size_t first, npages;
	int prot;
	size_t pgoff;
	int flags;
};

struct kind {
	enum start start;
	struct call c;
};

/* --- fault injection --- */

#define DBG "/sys/kernel/debug"

static const char *const knobs[] = {
	DBG "/failslab/ignore-gfp-wait", DBG "/failslab/verbose",
	DBG "/fail_page_alloc/ignore-gfp-wait", DBG "/fail_page_alloc/verbose",
	DBG "/fail_page_alloc/min-order",
};
static const char *const knob_run[] = { "N", "0", "N", "0", "0" };
#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

struct inj {
	int nth_fd;
	bool saved;
	char orig[NKNOBS][32];
	const char *skip;
};

/* Open fail-nth and set the knobs; inj->skip says why not. */
static void inj_setup(struct inj *j)
{
	const char *lvl = getenv("EXPECT_LEVEL");

	j->nth_fd = -1;
	/* never the machine the tests are built on: only in a guest */
	if (!lvl || (strcmp(lvl, "qemu") && strcmp(lvl, "uml"))) {
		j->skip = "fails allocations: guests only (EXPECT_LEVEL)";
		return;
	}
	j->nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (j->nth_fd < 0) {
		j->skip = "no /proc/thread-self/fail-nth (no CONFIG_FAULT_INJECTION)";
		return;
	}
	if (access(DBG "/failslab", F_OK))
		mount("debugfs", DBG, "debugfs", 0, NULL);
	for (size_t i = 0; i < NKNOBS; i++) {
		if (rfp_read_str(knobs[i], j->orig[i], sizeof(j->orig[i]))) {
			j->skip = "no failslab and fail_page_alloc in debugfs";
			return;
		}
	}
	j->saved = true;
	for (size_t i = 0; i < NKNOBS; i++) {
		if (rfp_write_str(knobs[i], knob_run[i])) {
			j->skip = "cannot set the fault-injection knobs";
			return;
		}
	}
}

static void inj_teardown(struct inj *j)
{
	if (j->nth_fd >= 0) {
		if (write(j->nth_fd, "0", 1) != 1)
			perror("fail-nth");
		close(j->nth_fd);
	}
	for (size_t i = 0; j->saved && i < NKNOBS; i++)
		rfp_write_str(knobs[i], j->orig[i]);
}

/* Arm fail-nth for the next call: 0 or -1. */
static int inj_arm(struct inj *j, unsigned int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	return pwrite(j->nth_fd, buf, len, 0) == len ? 0 : -1;
}

/* Disarm it; whether the injection was consumed (-1 if unreadable). */
static int inj_consumed(struct inj *j)
{
	char buf[16] = "";
	ssize_t r = pread(j->nth_fd, buf, sizeof(buf) - 1, 0);

	if (pwrite(j->nth_fd, "0", 1, 0) != 1 || r <= 0)
		return -1;
	return atoi(buf) == 0;
}

/* --- the area --- */

struct fstate {
	struct inj j;
	int fd, self_mem;
	char *m;
	unsigned int gen[F];	/* all 0: nothing here writes new data */
	pid_t holder;		/* NL_SHARED: the child holding the index */
	int holder_pipe;
};

static bool errno_ok(int err)
{
	return err == ENOMEM || err == EINTR || err == EAGAIN;
}

/* Make the starting state in a fresh mapping (the memfd stays). */
static void start_state(struct __test_metadata *_metadata, struct fstate *self,
			enum start s, struct pg *lay)
{
	int pfd[2];

	/* aligned: the second PTE table starts at page TABLE */
	self->m = rfp_map_shared(self->fd, N, RW, TABLE * PS);
	ASSERT_NE(MAP_FAILED, self->m);
	if (s == LINEAR) {
		layout_linear(lay);
	} else {
		layout_nl(lay);
		for (size_t i = 0; i < N; i++) {
			if (lay[i].pgoff == i && lay[i].prot == RW)
				continue;
			ASSERT_EQ(0, rfp(self->m + i * PS, PS, lay[i].prot, lay[i].pgoff,
					 MAP_CHGPROT)) TH_LOG("page %zu: %s", i, strerror(errno));
		}
	}
	for (size_t i = 0; i < TABLE; i++) {
		if (watched(i) && rfp_allows(lay[i].prot, RFP_READ)) {
			ASSERT_EQ(0, rfp_touch(self->m + i * PS, lay[i].prot, self->self_mem));
		}
	}
	if (s == NL_SWAPPED) {
		ASSERT_EQ(0, rfp_pageout(self->m, TABLE)) TH_LOG("pages stay present");
	}
	if (s == NL_SHARED) {
		ASSERT_EQ(0, pipe(pfd));
		self->holder = fork();
		ASSERT_LE(0, self->holder);
		if (!self->holder) {
			char c;

			close(pfd[1]);
			_exit(read(pfd[0], &c, 1) == 0 ? 0 : 1);
		}
		close(pfd[0]);
		self->holder_pipe = pfd[1];
	}
}

static void end_state(struct __test_metadata *_metadata, struct fstate *self)
{
	int st;

	if (self->holder > 0) {
		close(self->holder_pipe);
		EXPECT_EQ(self->holder, waitpid(self->holder, &st, 0));
		self->holder = 0;
	}
	if (self->m != MAP_FAILED) {
		EXPECT_EQ(0, munmap(self->m, N * PS));
	}
	self->m = MAP_FAILED;
}

/* Every page as lay says, and the range one VMA; problems into t. */
static void check_layout(char *m, const struct pg *lay, unsigned int *gen, int fd,
			 int self_mem, struct rfp_tally *t)
{
	unsigned long s = 0, e = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < N; i++)
		if (watched(i))
			rfp_check_page(t, m + i * PS, i, lay[i].pgoff, lay[i].prot,
				       &gen[lay[i].pgoff], false, fd, self_mem);
	if (rfp_vmas_in(m, N * PS) != 1 || rfp_vma_of(m, &s, &e, NULL) ||
	    s != (unsigned long)m || e != (unsigned long)m + N * PS)
		rfp_note(t, io_errors, "the range is not one VMA of %d pages any more "
			 "(%d maps lines)", N, rfp_vmas_in(m, N * PS));
}

/* The layout a call leaves (prot 0 without MAP_CHGPROT: the VMA's). */
static void apply(struct pg *lay, const struct call *c)
{
	for (size_t i = 0; i < c->npages; i++)
		lay[c->first + i] = (struct pg){
			c->pgoff + i, (c->flags & MAP_CHGPROT) ? c->prot : RW };
}

/* What a walk saw. */
struct walk {
	unsigned int points;		/* injection points the call met */
	unsigned int failed;		/* injections the call reported */
	unsigned int survived;		/* injections consumed, call succeeded */
	unsigned int bad_errno;		/* reported with another errno */
	unsigned int changed;		/* failed, and something changed */
	unsigned int spurious;		/* failed with no injection consumed */
	unsigned int wrong;		/* succeeded, and not as it should */
	char first[512];		/* the first problem */
	char at[200];			/* the fail-nth values of the problems */
	bool done;			/* reached a call with no injection */
};

static void note(struct walk *w, unsigned int nth, const char *what,
		 const char *detail)
{
	size_t len = strlen(w->at);

	if (len + 12 < sizeof(w->at))
		snprintf(w->at + len, sizeof(w->at) - len, "%s%u", len ? " " : "", nth);
	if (!w->first[0])
		snprintf(w->first, sizeof(w->first), "fail-nth %u: %s: %s", nth,
			 what, detail);
}

FIXTURE(fn) {
	struct fstate f;
};

FIXTURE_VARIANT(fn) {
	struct kind k;
	const char *what;
};

FIXTURE_VARIANT_ADD(fn, first_conversion) {
	.k = { LINEAR, { 2, 8, PROT_READ, 20, MAP_CHGPROT } },
	.what = "the first call on a VMA: pages 2..9 to file pages 20..27, r--",
};

FIXTURE_VARIANT_ADD(fn, first_conversion_new_table) {
	.k = { LINEAR, { TABLE + 4, 8, PROT_READ, 700, MAP_CHGPROT } },
	.what = "the first call on a VMA: pages 516..523, no PTE table yet, to 700..707, r--",
};

FIXTURE_VARIANT_ADD(fn, first_conversion_linear) {
	.k = { LINEAR, { 0, N, RW, 0, MAP_CHGPROT } },
	.what = "the first call on a VMA, its own offsets and protection",
};

FIXTURE_VARIANT_ADD(fn, new_offsets) {
	.k = { NL, { 4, 8, RX, 1, MAP_CHGPROT } },
	.what = "new offsets in an indexed chunk: pages 4..11 to file pages 1..8, r-x",
};

FIXTURE_VARIANT_ADD(fn, new_offsets_new_chunk) {
	.k = { NL, { 4, 8, RX, 300, MAP_CHGPROT } },
	.what = "new offsets in a new chunk: pages 4..11 to file pages 300..307, r-x",
};

FIXTURE_VARIANT_ADD(fn, new_offsets_new_table) {
	.k = { NL, { TABLE + 4, 8, RX, 700, MAP_CHGPROT } },
	.what = "new offsets, new chunk, no PTE table yet: pages 516..523 to 700..707, r-x",
};

FIXTURE_VARIANT_ADD(fn, new_offsets_swapped) {
	.k = { NL_SWAPPED, { 4, 8, RX, 300, MAP_CHGPROT } },
	.what = "new offsets in a new chunk over paged-out pages: 4..11 to 300..307, r-x",
};

FIXTURE_VARIANT_ADD(fn, new_offsets_shared_index) {
	.k = { NL_SHARED, { 4, 8, RX, 300, MAP_CHGPROT } },
	.what = "new offsets, the reverse index shared with a forked child: 4..11 to 300..307",
};

FIXTURE_VARIANT_ADD(fn, prot_in_place) {
	.k = { NL, { 4, 8, PROT_READ, 20, MAP_CHGPROT } },
	.what = "a protection change in place: pages 4..11 keep 20..27, r--",
};

FIXTURE_VARIANT_ADD(fn, prot_in_place_swapped) {
	.k = { NL_SWAPPED, { 4, 8, PROT_READ, 20, MAP_CHGPROT } },
	.what = "a protection change in place over paged-out pages",
};

FIXTURE_VARIANT_ADD(fn, in_place_then_new) {
	.k = { NL, { END_RUN, 8, RW, END_PGOFF, MAP_CHGPROT } },
	.what = "pages 508..511 keep 656..659 (rw-), pages 512..515 (no PTE table yet) "
		"get 660..663 (a new chunk)",
};

FIXTURE_VARIANT_ADD(fn, back_to_linear) {
	.k = { NL, { 0, N, RW, 0, MAP_CHGPROT } },
	.what = "back to the linear pages with the VMA's protection",
};

FIXTURE_VARIANT_ADD(fn, legacy_call) {
	.k = { NL, { 4, 4, 0, 300, 0 } },
	.what = "a legacy call (prot 0, no MAP_CHGPROT): pages 4..7 to 300..303",
};

static void fstate_setup(struct __test_metadata *_metadata, struct fstate *self)
{
	rfp_catch();
	self->m = MAP_FAILED;
	self->fd = self->self_mem = -1;
	inj_setup(&self->j);
	if (self->j.skip)
		return;		/* fstate_ready() SKIPs */
	self->fd = rfp_memfd(F);
	ASSERT_LE(0, self->fd);
	self->self_mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, self->self_mem);
}

static void fstate_teardown(struct __test_metadata *_metadata, struct fstate *self)
{
	end_state(_metadata, self);
	inj_teardown(&self->j);
	if (self->fd >= 0)
		close(self->fd);
	if (self->self_mem >= 0)
		close(self->self_mem);
}

/*
 * The feature first, outside any injection (RFP_FIRST_CHGPROT), and
 * injection there: false if SKIP()ped.
 */
static bool fstate_ready(struct __test_metadata *_metadata, struct fstate *self)
{
	bool ready = false;

	if (self->j.skip)
		SKIP(return false, "%s", self->j.skip);
	/* the probe page is gone either way: end_state() unmaps N pages */
	self->m = mmap(NULL, PS, RW, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->m);
	RFP_FIRST_CHGPROT(goto out, self->m, PS, PROT_READ, 5);
	ready = true;
out:
	ASSERT_EQ(0, munmap(self->m, PS));
	self->m = MAP_FAILED;
	return ready;
}

FIXTURE_SETUP(fn)
{
	fstate_setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(fn)
{
	fstate_teardown(_metadata, &self->f);
}

/* The harness forks each test: fail-nth is this task's own. */
TEST_F_TIMEOUT(fn, walk, 75)
{
	const struct call *c = &variant->k.c;
	enum start s = variant->k.start;
	struct fstate *f = &self->f;
	struct pg before[N], after[N];
	struct rfp_tally t;
	struct walk w;
	unsigned int nth;

	if (!fstate_ready(_metadata, f))
		return;
	if (s == NL_SWAPPED)
		RFP_NEED_SWAP();

	memset(&w, 0, sizeof(w));
	for (nth = 1; nth <= MAX_NTH && !w.done; nth++) {
		int err, consumed;
		long ret;

		start_state(_metadata, f, s, before);
		memcpy(after, before, sizeof(after));
		apply(after, c);

		ASSERT_EQ(0, inj_arm(&f->j, nth));
		errno = 0;
		ret = syscall(SYS_remap_file_pages, f->m + c->first * PS,
			      c->npages * PS, c->prot, c->pgoff, c->flags);
		err = errno;
		consumed = inj_consumed(&f->j);
		ASSERT_LE(0, consumed) TH_LOG("fail-nth unreadable");
		if (!consumed) {
			w.points = nth - 1;
			w.done = true;
		} else if (ret) {
			w.failed++;
		}

		if (!ret) {
			w.survived += consumed;
			check_layout(f->m, after, f->gen, f->fd, f->self_mem, &t);
			if (rfp_tally_problems(&t)) {
				w.wrong++;
				note(&w, nth, "succeeded, not as it should", t.first);
			}
		} else {
			char detail[400];

			if (!errno_ok(err)) {
				w.bad_errno++;
				note(&w, nth, "returned", strerror(err));
			}
			check_layout(f->m, before, f->gen, f->fd, f->self_mem, &t);
			if (rfp_tally_problems(&t)) {
				w.changed++;
				snprintf(detail, sizeof(detail),
					 "%s, and then %lu problems (%lu accesses denied "
					 "passed, %lu bad data), first: %s", strerror(err),
					 rfp_tally_problems(&t), t.denied_passed,
					 t.bad_data, t.first);
				note(&w, nth, "failed", detail);
			}
			if (!consumed) {
				w.spurious++;
				note(&w, nth, "failed without an injected failure",
				     strerror(err));
			}
		}
		end_state(_metadata, f);
	}

	TH_LOG("remap_file_pages(m + %zu pages, %zu pages, prot %#x, pgoff %zu, flags %#x)",
	       c->first, c->npages, c->prot, c->pgoff, c->flags);
	TH_LOG("%s (%s): %u injection points; %u reported (%u with another errno), "
	       "%u survived; %u failures changed pages, %u failed without one, "
	       "%u successes wrong%s%s%s%s", variant->what, start_name[s], w.points,
	       w.failed, w.bad_errno, w.survived, w.changed, w.spurious, w.wrong,
	       w.at[0] ? "; at fail-nth " : "", w.at,
	       w.first[0] ? "; first: " : "", w.first);
	EXPECT_TRUE(w.done) TH_LOG("still failing at fail-nth %d", MAX_NTH);
	EXPECT_EQ(0, w.bad_errno);
	EXPECT_EQ(0, w.changed);
	EXPECT_EQ(0, w.spurious);
	EXPECT_EQ(0, w.wrong);
}

/*
 * fork() of a process with a nonlinear VMA: the parent's pages as they
 * were whether it failed or not, the child's right when it runs.
 */
FIXTURE(fk) {
	struct fstate f;
};

FIXTURE_SETUP(fk)
{
	fstate_setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(fk)
{
	fstate_teardown(_metadata, &self->f);
}

TEST_F_TIMEOUT(fk, fork, 150)
{
	struct fstate *f = &self->f;
	struct pg lay[N];
	struct rfp_tally t;
	struct walk w;
	unsigned int nth;

	if (!fstate_ready(_metadata, f))
		return;
	memset(&w, 0, sizeof(w));
	for (nth = 1; nth <= MAX_NTH && !w.done; nth++) {
		int err, consumed, st;
		pid_t pid;

		start_state(_metadata, f, NL, lay);
		ASSERT_EQ(0, inj_arm(&f->j, nth));
		errno = 0;
		pid = fork();
		if (!pid) {
			int mem = open("/proc/self/mem", O_RDWR);

			check_layout(f->m, lay, f->gen, f->fd, mem, &t);
			if (rfp_tally_problems(&t))
				fprintf(stderr, "#  child at fail-nth %u: %s\n", nth, t.first);
			_exit(rfp_tally_problems(&t) ? 1 : 0);
		}
		err = errno;
		consumed = inj_consumed(&f->j);
		ASSERT_LE(0, consumed);
		if (!consumed) {
			w.points = nth - 1;
			w.done = true;
		} else if (pid < 0) {
			w.failed++;
		}
		if (pid > 0) {
			w.survived += consumed;
			ASSERT_EQ(pid, waitpid(pid, &st, 0));
			if (st) {
				w.wrong++;
				note(&w, nth, "the child saw other pages", "see its line");
			}
		} else if (!errno_ok(err)) {
			w.bad_errno++;
			note(&w, nth, "fork returned", strerror(err));
		}
		check_layout(f->m, lay, f->gen, f->fd, f->self_mem, &t);
		if (rfp_tally_problems(&t)) {
			w.changed++;
			note(&w, nth, pid < 0 ? "fork failed, parent changed" :
			     "fork worked, parent changed", t.first);
		}
		end_state(_metadata, f);
	}

	TH_LOG("fork (%s): %u injection points; %u failed (%u with another errno), "
	       "%u survived; %u left the parent changed, %u children saw wrong pages%s%s%s%s",
	       start_name[NL], w.points, w.failed, w.bad_errno, w.survived,
	       w.changed, w.wrong, w.at[0] ? "; at fail-nth " : "", w.at,
	       w.first[0] ? "; first: " : "", w.first);
	EXPECT_TRUE(w.done) TH_LOG("still failing at fail-nth %d", MAX_NTH);
	EXPECT_EQ(0, w.bad_errno);
	EXPECT_EQ(0, w.changed);
	EXPECT_EQ(0, w.wrong);
}

TEST_HARNESS_MAIN
