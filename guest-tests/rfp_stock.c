// SPDX-License-Identifier: GPL-2.0
/*
 * remap_file_pages() as stock 6.1 documents it (Documentation/mm/
 * remap_file_pages.rst): an emulation through do_mmap() that rearranges
 * pages of a shared mapping, takes prot == 0 only and refuses private
 * mappings.  This is the behaviour the series must keep without
 * MAP_CHGPROT and with manyprots=off.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define NPAGES 16

static long psz;

/* Count the lines of /proc/self/maps that cover [start, end). */
static int vmas_in(unsigned long start, unsigned long end)
{
	unsigned long s, e;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < end && e > start)
			n++;
	fclose(f);
	return n;
}

FIXTURE(shm)
{
	int fd;
	char *map;
};

/* A tmpfs file (memfd) whose page i holds the byte 'A' + i everywhere. */
FIXTURE_SETUP(shm)
{
	psz = sysconf(_SC_PAGESIZE);
	self->fd = memfd_create("rfp_stock", 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * psz));
	self->map = mmap(NULL, NPAGES * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	for (int i = 0; i < NPAGES; i++)
		memset(self->map + i * psz, 'A' + i, psz);
}

FIXTURE_TEARDOWN(shm)
{
	munmap(self->map, NPAGES * psz);
	close(self->fd);
}

TEST_F(shm, prot0_rearranges_pages)
{
	char *m = self->map;

	/* page 2 shows file page 9, page 3 shows file page 0 */
	ASSERT_EQ(0, remap_file_pages(m + 2 * psz, psz, 0, 9, 0));
	ASSERT_EQ(0, remap_file_pages(m + 3 * psz, psz, 0, 0, 0));
	EXPECT_EQ('A' + 9, m[2 * psz]);
	EXPECT_EQ('A' + 9, m[3 * psz - 1]);
	EXPECT_EQ('A' + 0, m[3 * psz]);
	EXPECT_EQ('A' + 1, m[1 * psz]);
	EXPECT_EQ('A' + 4, m[4 * psz]);

	/* both addresses of file page 9 see the same page */
	m[2 * psz + 7] = 'z';
	EXPECT_EQ('z', m[9 * psz + 7]);
	EXPECT_EQ(0, msync(m, NPAGES * psz, MS_SYNC));
	char c;

	ASSERT_EQ(1, pread(self->fd, &c, 1, 9 * psz + 7));
	EXPECT_EQ('z', c);

	/* stock 6.1 emulates with do_mmap(): the VMA is split around the page */
	EXPECT_LT(1, vmas_in((unsigned long)m, (unsigned long)m + NPAGES * psz));
}

TEST_F(shm, nonzero_prot_einval)
{
	int prots[] = { PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE, PROT_EXEC };

	for (unsigned int i = 0; i < sizeof(prots) / sizeof(prots[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, remap_file_pages(self->map, psz, prots[i], 5, 0));
		EXPECT_EQ(EINVAL, errno);
	}
	/* nothing changed */
	EXPECT_EQ('A', self->map[0]);
	EXPECT_EQ(1, vmas_in((unsigned long)self->map,
			     (unsigned long)self->map + NPAGES * psz));
}

TEST_F(shm, unknown_flags_ignored)
{
	errno = 0;
	/* 6.1 masks the flags to MAP_NONBLOCK, so unknown bits are ignored */
	EXPECT_EQ(0, remap_file_pages(self->map, psz, 0, 3, 0x20000000));
	EXPECT_EQ('A' + 3, self->map[0]);
}

TEST(private_mapping_einval)
{
	int fd = memfd_create("rfp_private", 0);
	char *m;

	psz = sysconf(_SC_PAGESIZE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 4 * psz));
	ASSERT_EQ(1, pwrite(fd, "x", 1, 2 * psz));
	m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	errno = 0;
	EXPECT_EQ(-1, remap_file_pages(m, psz, 0, 2, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, m[0]);	/* still file page 0 */
	munmap(m, 4 * psz);
	close(fd);
}

TEST(anonymous_private_einval)
{
	char *m;

	psz = sysconf(_SC_PAGESIZE);
	m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	errno = 0;
	EXPECT_EQ(-1, remap_file_pages(m, psz, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	munmap(m, 4 * psz);
}

TEST_HARNESS_MAIN
