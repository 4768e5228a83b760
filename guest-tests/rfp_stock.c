// SPDX-License-Identifier: GPL-2.0
/*
 * remap_file_pages() as stock 6.1 documents it (Documentation/mm/
 * remap_file_pages.rst): an emulation through do_mmap() that rearranges
 * pages of a shared mapping, takes prot == 0 only and refuses private
 * mappings.  This is the behaviour the series must keep without
 * MAP_CHGPROT and with manyprots=off.
 */
#include "rfp.h"

#define NPAGES 16

/*
 * The memfd, whose page i holds file page i's contents, written through
 * the mapping (so every page is mapped when a test starts).
 */
FIXTURE(shm)
{
	struct rfp_area a;
};

FIXTURE_SETUP(shm)
{
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, NPAGES, 0,
				   PROT_READ | PROT_WRITE));
	rfp_pattern_mem(self->a.m, 0, NPAGES, 0);
}

FIXTURE_TEARDOWN(shm)
{
	rfp_area_close(&self->a);
}

/* Does the page at p show file page pgoff, from its first byte to its last? */
static bool shows(const char *p, size_t pgoff)
{
	return !rfp_pattern_bad(p, pgoff, 0);
}

TEST_F(shm, prot0_rearranges_pages)
{
	char *m = self->a.m;

	/* page 2 shows file page 9, page 3 shows file page 0 */
	ASSERT_EQ(0, remap_file_pages(m + 2 * PS, PS, 0, 9, 0));
	ASSERT_EQ(0, remap_file_pages(m + 3 * PS, PS, 0, 0, 0));
	EXPECT_TRUE(shows(m + 2 * PS, 9));
	EXPECT_TRUE(shows(m + 3 * PS, 0));
	EXPECT_TRUE(shows(m + 1 * PS, 1));
	EXPECT_TRUE(shows(m + 4 * PS, 4));

	/* both addresses of file page 9 see the same page */
	m[2 * PS + 7] = 'z';
	EXPECT_EQ('z', m[9 * PS + 7]);
	EXPECT_EQ(0, msync(m, NPAGES * PS, MS_SYNC));
	char c;

	ASSERT_EQ(1, pread(self->a.fd, &c, 1, 9 * PS + 7));
	EXPECT_EQ('z', c);

	/* stock 6.1 emulates with do_mmap(): the VMA is split around the page */
	EXPECT_LT(1, rfp_vmas_in(m, NPAGES * PS));
}

TEST_F(shm, nonzero_prot_einval)
{
	int prots[] = { PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE, PROT_EXEC };

	for (unsigned int i = 0; i < ARRAY_SIZE(prots); i++) {
		errno = 0;
		EXPECT_EQ(-1, remap_file_pages(self->a.m, PS, prots[i], 5, 0));
		EXPECT_EQ(EINVAL, errno);
	}
	/* nothing changed */
	EXPECT_TRUE(shows(self->a.m, 0));
	EXPECT_EQ(1, rfp_vmas_in(self->a.m, NPAGES * PS));
}

TEST_F(shm, unknown_flags_ignored)
{
	errno = 0;
	/* 6.1 masks the flags to MAP_NONBLOCK, so unknown bits are ignored */
	EXPECT_EQ(0, remap_file_pages(self->a.m, PS, 0, 3, 0x20000000));
	EXPECT_TRUE(shows(self->a.m, 3));
}

TEST(private_mapping_einval)
{
	int fd = rfp_memfd(4);
	char *m;

	ASSERT_LE(0, fd);
	m = mmap(NULL, 4 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	errno = 0;
	EXPECT_EQ(-1, remap_file_pages(m, PS, 0, 2, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(shows(m, 0));	/* still file page 0 */
	munmap(m, 4 * PS);
	close(fd);
}

TEST(anonymous_private_einval)
{
	char *m;

	m = mmap(NULL, 4 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	errno = 0;
	EXPECT_EQ(-1, remap_file_pages(m, PS, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	munmap(m, 4 * PS);
}

TEST_HARNESS_MAIN
