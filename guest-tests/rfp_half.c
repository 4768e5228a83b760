// SPDX-License-Identifier: GPL-2.0
/*
 * A MAP_CHGPROT call that fails changes no page: every page keeps its
 * offset, protection and data (the errors table of the spec), also when
 * the first pages of the range could be done on their own and only a
 * later part of the range is refused:
 * - the reverse index names nonlinear pages up to 2^31 - 2 pages above
 *   where the VMA started: a call whose first page (at index 2^31 - 2)
 *   keeps its offset and only its second page lies past that limit fails
 *   with EINVAL, and the first page keeps its old protection;
 * - a range running past the end of the VMA (into nothing, or into the
 *   next VMA of the same file): EINVAL;
 * - a range whose end crosses the offset limit of a SWP_FILE entry: EINVAL;
 * - a protection the mapping may never have (a read-only file
 *   descriptor): EACCES.
 * In each, the pages the call would have left at their offsets are
 * checked first by data and by read, write and exec probes.
 */
#include "rfp.h"

#define RW (PROT_READ | PROT_WRITE)
#define MARK 0xa5

/* What a page shows: its identity word (/proc/self/mem) and its probes. */
struct pstate {
	uint64_t id;
	int code[3];
};

static const char *const access_name[] = { "read", "write", "exec" };

/*
 * Probes that change nothing: a write stores the byte already there;
 * exec only where the data has its 'ret' (exec must be probed: asked
 * with want_exec, a page of zeros would run off).
 */
static void pstate_take(char *p, bool want_exec, struct pstate *s)
{
	unsigned char b = 0;

	memset(s, 0, sizeof(*s));
	if (rfp_mem_read(p + RFP_OFF_ID, &s->id, sizeof(s->id)) != sizeof(s->id))
		s->id = ~0ULL;
	s->code[RFP_READ] = rfp_try(p + RFP_OFF_R, RFP_READ);
	if (rfp_mem_read(p + RFP_OFF_W, &b, 1) != 1)
		b = 0;
	s->code[RFP_WRITE] = rfp_try_store(p + RFP_OFF_W, b);
	s->code[RFP_EXEC] = want_exec ? rfp_try(p + RFP_OFF_X, RFP_EXEC) : -1;
}

static void expect_same(struct __test_metadata *_metadata, char *p, size_t idx,
			bool want_exec, const struct pstate *before)
{
	struct pstate now;

	pstate_take(p, want_exec, &now);
	EXPECT_EQ(before->id, now.id)
		TH_LOG("page %zu: shows another file page now", idx);
	for (int k = RFP_READ; k <= RFP_EXEC; k++) {
		EXPECT_EQ(before->code[k], now.code[k])
			TH_LOG("page %zu: %s probe gave %d, now %d", idx,
			       access_name[k], before->code[k], now.code[k]);
	}
}

/*
 * The VMA: 8 TiB and 16 pages of a memfd as large.  LAST is the last
 * page the reverse index can name (2^31 - 2 pages above the start);
 * variants: whether the pages before the limit are present when the
 * failing call comes, and how many of them the call covers.
 */
#define LAST ((1UL << 31) - 2)
#define BIG_PAGES ((1UL << 31) + 16)

FIXTURE(lim) {
	int fd;
	char *m;
	bool no_room;
};

FIXTURE_VARIANT(lim) {
	bool present;
	int before;	/* pages before the limit in the failing call */
};

FIXTURE_VARIANT_ADD(lim, one_present) {
	.present = true,
	.before = 1,
};

FIXTURE_VARIANT_ADD(lim, one_not_present) {
	.present = false,
	.before = 1,
};

FIXTURE_VARIANT_ADD(lim, two_present) {
	.present = true,
	.before = 2,
};

FIXTURE_SETUP(lim)
{
	rfp_catch();
	self->m = MAP_FAILED;
	self->fd = memfd_create("rfp_half", 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(BIG_PAGES * PS)));
	ASSERT_EQ(0, rfp_pattern_fd(self->fd, 0, 16, 0));
	self->m = mmap(NULL, BIG_PAGES * PS, RW, MAP_SHARED | MAP_NORESERVE,
		       self->fd, 0);
	self->no_room = self->m == MAP_FAILED;
}

FIXTURE_TEARDOWN(lim)
{
	if (self->m != MAP_FAILED)
		munmap(self->m, BIG_PAGES * PS);
	close(self->fd);
}

/*
 * Page LAST maps file page 2 read-only (and, with two pages, page LAST - 1
 * file page 1 PROT_NONE); then a call for the same offsets read-write,
 * one page longer, reaching page LAST + 1: EINVAL, and the pages before
 * the limit as they were.  The same pages with the same offsets, the
 * call ending at LAST, then works.
 */
TEST_F_TIMEOUT(lim, offsets_kept_before_limit, 60)
{
	char *last = self->m + LAST * PS;
	char *first = last - (variant->before - 1) * PS;
	size_t n = variant->before;
	struct pstate before[2], past;
	unsigned char v = 0xff;
	uint64_t id = 0;
	long ret;
	int err;

	if (self->no_room)
		SKIP(return, "no room for an 8 TiB mapping");
	RFP_FIRST_CHGPROT(return, last, PS, PROT_READ, 2);
	if (n == 2) {
		ASSERT_EQ(0, rfp(first, PS, PROT_NONE, 1, MAP_CHGPROT));
	}
	ASSERT_EQ(0, rfp_try_id(last, &id));
	ASSERT_EQ(rfp_id(2, 0), id);
	for (size_t i = 0; i < n; i++)
		pstate_take(first + i * PS, true, &before[i]);
	ASSERT_EQ(SEGV_ACCERR, before[n - 1].code[RFP_WRITE]);
	pstate_take(last + PS, false, &past);
	ASSERT_EQ(0, past.code[RFP_WRITE]);
	/* the probes made them present; SWP_FILE entries otherwise */
	if (!variant->present) {
		ASSERT_EQ(0, madvise(first, n * PS, MADV_DONTNEED));
	}
	ASSERT_EQ(variant->present ? 1 : 0, rfp_present(last, 1));

	errno = 0;
	ret = rfp(first, (n + 1) * PS, RW, 3 - n, MAP_CHGPROT);
	err = errno;
	EXPECT_EQ(-1, ret) TH_LOG("a nonlinear page at index 2^31 - 1 accepted");
	EXPECT_EQ(EINVAL, err) TH_LOG("%s", strerror(err));

	/* the offending write first: it would land in file page 2 */
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(last + RFP_OFF_W, MARK))
		TH_LOG("page 2^31 - 2 became writable");
	EXPECT_EQ(0, rfp_pattern_bad_fd(self->fd, 2, 0)) TH_LOG("file page 2 changed");
	for (size_t i = 0; i < n; i++)
		expect_same(_metadata, first + i * PS, LAST - (n - 1) + i, true,
			    &before[i]);
	expect_same(_metadata, last + PS, LAST + 1, false, &past);
	EXPECT_EQ(0, rfp_try_load(last + PS + RFP_OFF_R, &v));
	EXPECT_EQ(0, v) TH_LOG("page 2^31 - 1 (a hole of the file) not zero");
	EXPECT_EQ(0, rfp_try_id(self->m, &id));
	EXPECT_EQ(rfp_id(0, 0), id);

	/* the same call, not crossing the limit */
	ASSERT_EQ(0, rfp(first, n * PS, RW, 3 - n, MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, rfp_try_store(last + RFP_OFF_W, rfp_byte(2, RFP_OFF_W, 0)));
	EXPECT_EQ(0, rfp_try_id(last, &id));
	EXPECT_EQ(rfp_id(2, 0), id);
}

/*
 * A 16-page VMA of a 32-page memfd, with another mapping after it; pages
 * 4..7 map file pages 10..13 read-only (7: PROT_NONE) and the rest stay
 * linear read-write.
 */
#define NPG 16
#define FPG 32

FIXTURE(rng) {
	int fd;
	char *base;	/* NPG pages, then NPG more for what follows */
	char *m;
	struct pstate before[NPG];
};

FIXTURE_SETUP(rng)
{
	rfp_catch();
	self->fd = rfp_memfd(FPG);
	ASSERT_LE(0, self->fd);
	self->base = mmap(NULL, 2 * NPG * PS, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->base);
	self->m = self->base;
	ASSERT_EQ(self->m, mmap(self->m, NPG * PS, RW, MAP_SHARED | MAP_FIXED,
				self->fd, 0));
}

FIXTURE_TEARDOWN(rng)
{
	munmap(self->base, 2 * NPG * PS);
	close(self->fd);
}

/* Lay pages 4..7 out; false if SKIP()ped. */
static bool rng_build(struct __test_metadata *_metadata, FIXTURE_DATA(rng) *self)
{
	RFP_FIRST_CHGPROT(return false, self->m + 4 * PS, 3 * PS, PROT_READ, 10);
	ASSERT_EQ(0, rfp(self->m + 7 * PS, PS, PROT_NONE, 13, MAP_CHGPROT));
	for (size_t i = 0; i < NPG; i++)
		pstate_take(self->m + i * PS, true, &self->before[i]);
	EXPECT_EQ(rfp_id(10, 0), self->before[4].id);
	EXPECT_EQ(SEGV_ACCERR, self->before[4].code[RFP_WRITE]);
	EXPECT_EQ(SEGV_ACCERR, self->before[7].code[RFP_READ]);
	return true;
}

static void rng_expect_same(struct __test_metadata *_metadata,
			    FIXTURE_DATA(rng) *self)
{
	for (size_t i = 0; i < NPG; i++)
		expect_same(_metadata, self->m + i * PS, i, true, &self->before[i]);
	EXPECT_EQ(0, rfp_pattern_bad_fd(self->fd, 10, 0));
	EXPECT_EQ(1, rfp_vmas_in(self->m, NPG * PS));
}

#define EXPECT_FAILS(want, call) do {					\
	long __ret;							\
	int __err;							\
									\
	errno = 0;							\
	__ret = (call);							\
	__err = errno;							\
	EXPECT_EQ(-1, __ret) TH_LOG("%s succeeded", #call);		\
	EXPECT_EQ(want, __err) TH_LOG("%s: %s", #call, strerror(__err)); \
} while (0)

/* Pages 4..7 keep offsets 10..13, the range runs 2 pages past the VMA. */
TEST_F(rng, past_vma_end)
{
	if (!rng_build(_metadata, self))
		return;
	/* make room after the VMA: nothing there */
	ASSERT_EQ(0, munmap(self->m + NPG * PS, NPG * PS));
	EXPECT_FAILS(EINVAL, rfp(self->m + 4 * PS, (NPG - 4 + 2) * PS, RW, 10,
				 MAP_CHGPROT));
	rng_expect_same(_metadata, self);
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(self->m + 4 * PS + RFP_OFF_W, MARK));
}

/* The same into the next VMA, a mapping of the same file. */
TEST_F(rng, into_next_vma)
{
	char *next = self->m + NPG * PS;

	if (!rng_build(_metadata, self))
		return;
	ASSERT_EQ(next, mmap(next, NPG * PS, PROT_READ, MAP_SHARED | MAP_FIXED,
			     self->fd, NPG * PS));
	EXPECT_FAILS(EINVAL, rfp(self->m + 4 * PS, (NPG - 4 + 2) * PS, RW, 10,
				 MAP_CHGPROT));
	rng_expect_same(_metadata, self);
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(self->m + 4 * PS + RFP_OFF_W, MARK));
}

/*
 * Pages 0 and 1 map the last two offsets a SWP_FILE entry can hold
 * (read-only, PROT_NONE); a call giving them the same offsets read-write
 * and a third page beyond: EINVAL, and they are as they were.
 */
TEST_F(rng, across_offset_limit)
{
	unsigned long b;

	if (!rng_build(_metadata, self))
		return;
	b = rfp_offset_limit(self->m);
	ASSERT_LT(2, b) TH_LOG("no offset refused");
	/* page 0 held offsets on the way: back to linear, as before */
	ASSERT_EQ(0, rfp(self->m, PS, RW, 0, MAP_CHGPROT));
	TH_LOG("first refused offset: %#lx", b);
	if ((b - 2) * PS / PS != b - 2 || (b + 1) * PS / PS != b + 1)
		SKIP(return, "offset limit %#lx: beyond a file's size", b);
	ASSERT_EQ(0, ftruncate(self->fd, (off_t)(b * PS)));
	ASSERT_EQ(0, rfp_pattern_fd(self->fd, b - 2, 2, 0));
	ASSERT_EQ(0, rfp(self->m, PS, PROT_READ, b - 2, MAP_CHGPROT));
	ASSERT_EQ(0, rfp(self->m + PS, PS, PROT_NONE, b - 1, MAP_CHGPROT));
	pstate_take(self->m, true, &self->before[0]);
	pstate_take(self->m + PS, true, &self->before[1]);
	EXPECT_EQ(rfp_id(b - 2, 0), self->before[0].id);
	EXPECT_EQ(rfp_id(b - 1, 0), self->before[1].id);

	EXPECT_FAILS(EINVAL, rfp(self->m, 3 * PS, RW, b - 2, MAP_CHGPROT));
	rng_expect_same(_metadata, self);
	EXPECT_EQ(SEGV_ACCERR, rfp_try_store(self->m + RFP_OFF_W, MARK));
	EXPECT_EQ(0, rfp_pattern_bad_fd(self->fd, b - 2, 0));
}

/*
 * A mapping of a read-only descriptor: pages 0..3 map file pages 4..7
 * PROT_NONE; giving them the same offsets with write is refused with
 * EACCES, and they stay unreadable.
 */
TEST(rdonly_fd)
{
	struct pstate before[4];
	char path[64];
	int fd, ro;
	char *m;

	rfp_catch();
	fd = rfp_memfd(8);
	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	ASSERT_LE(0, ro);
	m = mmap(NULL, 8 * PS, PROT_READ, MAP_SHARED, ro, 0);
	ASSERT_NE(MAP_FAILED, m);
	RFP_FIRST_CHGPROT(goto out, m, PS, PROT_READ, 4);
	ASSERT_EQ(0, rfp(m, 4 * PS, PROT_NONE, 4, MAP_CHGPROT));
	for (size_t i = 0; i < 4; i++)
		pstate_take(m + i * PS, true, &before[i]);
	EXPECT_EQ(SEGV_ACCERR, before[0].code[RFP_READ]);
	EXPECT_EQ(rfp_id(4, 0), before[0].id);

	EXPECT_FAILS(EACCES, rfp(m, 4 * PS, RW, 4, MAP_CHGPROT));
	EXPECT_FAILS(EACCES, rfp(m, 4 * PS, PROT_WRITE, 4, MAP_CHGPROT));
	for (size_t i = 0; i < 4; i++)
		expect_same(_metadata, m + i * PS, i, true, &before[i]);
	/* allowed: the same offsets readable */
	EXPECT_EQ(0, rfp(m, 4 * PS, PROT_READ, 4, MAP_CHGPROT));
	EXPECT_EQ(0, rfp_try(m + RFP_OFF_R, RFP_READ));
out:
	munmap(m, 8 * PS);
	close(ro);
	close(fd);
}

TEST_HARNESS_MAIN
