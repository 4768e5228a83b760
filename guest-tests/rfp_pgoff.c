// SPDX-License-Identifier: GPL-2.0
/*
 * File offsets at the edges:
 * - a remap_file_pages() call without MAP_CHGPROT keeps stock 6.1's
 *   answers for large offsets at every level: accepted while do_mmap()
 *   accepts the offset, EOVERFLOW past the largest file, EINVAL if
 *   pgoff + size wraps;
 * - MAP_CHGPROT accepts offsets up to what a non-present entry can hold
 *   (a power of two: the swap offset limit over the protection bits) and
 *   refuses the first one past it with EINVAL, changing nothing; the
 *   largest accepted offset maps the right file page;
 * - the reverse index names a nonlinear page by its distance from where
 *   the VMA started, in 31 bits: a nonlinear page 2^31 - 1 pages or more
 *   above it is refused with EINVAL, changing nothing, while a linear
 *   offset with its own protection is taken anywhere.
 */
#include "rfp.h"

#define NPAGES 4

FIXTURE(po) {
	struct rfp_area a;
};

FIXTURE_SETUP(po)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, NPAGES, NPAGES, PROT_READ | PROT_WRITE));
}

FIXTURE_TEARDOWN(po)
{
	rfp_area_close(&self->a);
}

TEST_F(po, legacy_large_offsets_as_stock)
{
	char *m = self->a.m;

	/* the 6.1 emulation maps it (the page is past EOF: no access) */
	EXPECT_EQ(0, rfp(m + PS, PS, 0, 1UL << 40, 0)) TH_LOG("%s", strerror(errno));
	errno = 0;
	EXPECT_EQ(-1, rfp(m + 2 * PS, PS, 0, 1UL << 56, 0));
	EXPECT_EQ(EOVERFLOW, errno);
	errno = 0;
	EXPECT_EQ(-1, rfp(m + 2 * PS, 2 * PS, 0, ~0UL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rfp_try(m + RFP_OFF_R, RFP_READ));
}

/* Whether MAP_CHGPROT takes page 0 to file page p. */
static bool takes(char *m, unsigned long p)
{
	return rfp(m, PS, PROT_READ, p, MAP_CHGPROT | MAP_NONBLOCK) == 0;
}

TEST_F(po, chgprot_offset_limit)
{
	unsigned long lo = NPAGES, hi = 1UL << 50, b;
	unsigned char page[4096];
	char *m = self->a.m;
	uint64_t v = 0;

	RFP_FIRST_CHGPROT(return, m, PS, PROT_READ, 1);
	ASSERT_FALSE(takes(m, hi));
	while (hi - lo > 1) {		/* takes(lo), !takes(hi) */
		unsigned long mid = lo + (hi - lo) / 2;

		if (takes(m, mid))
			lo = mid;
		else
			hi = mid;
	}
	b = hi;
	TH_LOG("first refused offset: %#lx", b);
	EXPECT_EQ(0, b & (b - 1));
	EXPECT_LE(1UL << 32, b);

	/* the largest accepted offset maps that file page (with 0x77's contents) */
	ASSERT_EQ(0, ftruncate(self->a.fd, (off_t)(b * PS)));
	rfp_pattern(page, 0x77, 0);
	ASSERT_EQ((ssize_t)PS, pwrite(self->a.fd, page, PS, (off_t)((b - 1) * PS)));
	ASSERT_EQ(0, rfp(m, PS, PROT_READ, b - 1, MAP_CHGPROT));
	ASSERT_EQ(0, rfp_try_id(m, &v));
	EXPECT_EQ(rfp_id(0x77, 0), v);

	/* refused: the limit itself, and a range across it; nothing changed */
	errno = 0;
	EXPECT_EQ(-1, rfp(m + PS, PS, PROT_READ, b, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, rfp(m + PS, 2 * PS, PROT_READ, b - 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rfp(m + 2 * PS, 2 * PS, PROT_READ, b - 2, MAP_CHGPROT | MAP_NONBLOCK));
	ASSERT_EQ(0, rfp_try_id(m + PS, &v));
	EXPECT_EQ(rfp_id(1, 0), v);
	EXPECT_EQ(0, rfp_try(m + PS + RFP_OFF_W, RFP_WRITE));
	ASSERT_EQ(0, rfp_try_id(m + 3 * PS, &v));
	EXPECT_EQ(rfp_id(0x77, 0), v);
}

/* A VMA just past what the reverse index can name (8 TiB with 4k pages). */
TEST(chgprot_address_limit)
{
	const unsigned long far = (1UL << 31) - 1, len = (far + 2) * PS;
	unsigned char v = 0;
	char *m, *p;
	int fd;

	rfp_catch();
	fd = memfd_create("rfp_far", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, (off_t)len));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		SKIP(return, "no room for a %lu GiB mapping: %s", len >> 30, strerror(errno));
	}
	p = m + far * PS;

	RFP_FIRST_CHGPROT(goto out, m + (far - 1) * PS, PS, PROT_READ, 0);
	/* the last page the index can name, and the first it cannot */
	errno = 0;
	EXPECT_EQ(-1, rfp(p, PS, PROT_READ, 0, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, rfp(p - PS, 2 * PS, PROT_READ, 1, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	/* nothing changed: linear and writable above, file page 0 below */
	EXPECT_EQ(0, rfp_try_store(p + RFP_OFF_W, 0x5a));
	ASSERT_EQ(0, rfp_try_load(p + RFP_OFF_W, &v));
	EXPECT_EQ(0x5a, v);
	ASSERT_EQ(0, rfp_try_load(p - PS + RFP_OFF_R, &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(SEGV_ACCERR, rfp_try(p - PS + RFP_OFF_W, RFP_WRITE));
	ASSERT_EQ(1, pwrite(fd, "\x33", 1, RFP_OFF_R));
	ASSERT_EQ(0, rfp_try_load(p - PS + RFP_OFF_R, &v));
	EXPECT_EQ(0x33, v);
	/* a linear offset is not indexed: taken at any distance */
	EXPECT_EQ(0, rfp(p, PS, PROT_READ, far, MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, rfp_try_load(p + RFP_OFF_W, &v));
	EXPECT_EQ(0x5a, v);
	EXPECT_EQ(SEGV_ACCERR, rfp_try(p + RFP_OFF_W, RFP_WRITE));
out:
	munmap(m, len);
	close(fd);
}

TEST_HARNESS_MAIN
