// SPDX-License-Identifier: GPL-2.0
/*
 * What remap_file_pages(MAP_CHGPROT) does when it works.
 * Pages of one shared shmem VMA show other file pages (nonlinear) with
 * their own protection, on a memfd, a tmpfs file and MAP_SHARED|
 * MAP_ANONYMOUS, while the VMA stays one VMA with its own default
 * protection.  Every protection combination is probed for read, write and
 * exec on a page with no page table entry yet, on one with a present entry
 * and on one whose entry MADV_DONTNEED dropped.
 *
 * Only EXPECT_MANYPROTS=on runs these; otherwise chgprot_unavailable
 * checks what the spec says for off and absent and the rest SKIP.
 */
#include "rfp.h"

#include <linux/magic.h>
#include <sys/statfs.h>

#define NPAGES 64	/* of the mapping and of its file */
/* what write probes store: never the byte at RFP_OFF_W of a file page here */
#define MARK 0xa5

static const char *const prot_name[8] = {
	"---", "r--", "-w-", "rw-", "--x", "r-x", "-wx", "rwx",
};

static const char *const access_name[] = { "read", "write", "exec" };
static const int access_off[] = { RFP_OFF_R, RFP_OFF_W, RFP_OFF_X };

/* A byte that must be readable; a fault fails the test instead of killing it. */
static unsigned char ld(struct __test_metadata *_metadata, const void *p)
{
	unsigned char v = 0;

	EXPECT_EQ(0, rfp_try_load(p, &v)) TH_LOG("load from %p faulted", p);
	return v;
}

static void st(struct __test_metadata *_metadata, void *p, unsigned char v)
{
	EXPECT_EQ(0, rfp_try_store(p, v)) TH_LOG("store to %p faulted", p);
}

/* The page at p is readable and holds file page pgoff's data. */
static void expect_shows(struct __test_metadata *_metadata, const void *p,
			 size_t pgoff)
{
	size_t bad = 0;
	int code = rfp_try_check(p, pgoff, 0, &bad);

	EXPECT_EQ(0, code) TH_LOG("page %p (file page %zu) is not readable", p, pgoff);
	if (code)
		return;
	EXPECT_EQ(0, bad)
		TH_LOG("page %p: %zu words not file page %zu's; word 0 %#llx, its %#llx",
		       p, bad, pgoff, (unsigned long long)*(const uint64_t *)p,
		       (unsigned long long)rfp_word(pgoff, 0, 0));
}

/*
 * Probe access a at p (a 'ret' must be there for exec) in a page whose
 * protection is prot: it works, or it is a SIGSEGV SEGV_ACCERR at p itself.
 */
static bool expect_access(struct __test_metadata *_metadata, void *p,
			  enum rfp_access a, int prot)
{
	bool allowed = rfp_allows_here(prot, a);
	int code = a == RFP_WRITE ? rfp_try_store(p, MARK) : rfp_try(p, a);

	if (allowed) {
		EXPECT_EQ(0, code)
			TH_LOG("%s at %p, prot %s: si_code %d, expected no fault",
			       access_name[a], p, prot_name[prot], code);
	} else {
		EXPECT_EQ(SEGV_ACCERR, code)
			TH_LOG("%s at %p, prot %s: si_code %d, expected SEGV_ACCERR",
			       access_name[a], p, prot_name[prot], code);
		if (code) {
			EXPECT_EQ(p, (void *)rfp_fault_addr)
				TH_LOG("%s at %p, prot %s", access_name[a], p,
				       prot_name[prot]);
		}
	}
	return allowed;
}

/* The /proc/self/maps permissions of a MAP_SHARED VMA mapped with prot. */
static void maps_perms(int prot, char perms[5])
{
	snprintf(perms, 5, "%c%c%cs", prot & PROT_READ ? 'r' : '-',
		 prot & PROT_WRITE ? 'w' : '-', prot & PROT_EXEC ? 'x' : '-');
}

/* [m, m + npages pages) is exactly one VMA with these permissions. */
static void expect_one_vma(struct __test_metadata *_metadata, char *m,
			   size_t npages, int prot)
{
	unsigned long s = 0, e = 0;
	char perms[5] = "", want[5];

	maps_perms(prot, want);
	EXPECT_EQ(1, rfp_vmas_in(m, npages * PS));
	ASSERT_EQ(0, rfp_vma_of(m, &s, &e, perms));
	EXPECT_EQ((unsigned long)m, s);
	EXPECT_EQ((unsigned long)m + npages * PS, e);
	EXPECT_STREQ(want, perms);
}

enum backing { MEMFD, TMPFS, SHARED_ANON };

/*
 * A read-write MAP_SHARED mapping of npages whose page i holds file page
 * i's data, without page table entries.  *fd is its file, -1 for
 * MAP_SHARED|MAP_ANONYMOUS.
 */
static char *map_backing(struct __test_metadata *_metadata, enum backing b,
			 size_t npages, int *fd)
{
	char path[] = "/dev/shm/rfp_semantics.XXXXXX";
	struct statfs sfs;
	char *m;

	*fd = -1;
	if (b == MEMFD) {
		*fd = rfp_memfd(npages);
		ASSERT_LE(0, *fd);
	} else if (b == TMPFS) {
		*fd = mkstemp(path);
		ASSERT_LE(0, *fd) TH_LOG("mkstemp in /dev/shm: %s", strerror(errno));
		unlink(path);
		ASSERT_EQ(0, fstatfs(*fd, &sfs));
		ASSERT_EQ(TMPFS_MAGIC, sfs.f_type) TH_LOG("/dev/shm is not a tmpfs");
		ASSERT_EQ(0, rfp_pattern_file(*fd, npages));
	}
	m = mmap(NULL, npages * PS, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (b == SHARED_ANON ? MAP_ANONYMOUS : 0), *fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	if (b == SHARED_ANON) {
		rfp_pattern_mem(m, 0, npages, 0);
		/* the data stays in the shmem object, the entries go */
		ASSERT_EQ(0, madvise(m, npages * PS, MADV_DONTNEED));
	}
	return m;
}

/*
 * File page pgoff's byte at off, through the file when there is one (fd >= 0)
 * and through the mapping m's linear page pgoff, never remapped (m != NULL).
 */
static void expect_file_byte(struct __test_metadata *_metadata, int fd,
			     const char *m, size_t pgoff, size_t off,
			     unsigned char want)
{
	unsigned char c = 0;

	if (fd >= 0) {
		ASSERT_EQ(1, pread(fd, &c, 1, pgoff * PS + off));
		EXPECT_EQ(want, c) TH_LOG("file page %zu byte %#zx", pgoff, off);
	}
	if (m) {
		EXPECT_EQ(want, ld(_metadata, m + pgoff * PS + off))
			TH_LOG("linear view of file page %zu byte %#zx", pgoff, off);
	}
}

/* What the spec says without the feature, so that off and absent are tested. */
TEST(chgprot_unavailable)
{
	const char *mode = getenv("EXPECT_MANYPROTS");
	bool off;
	char *m;
	int fd;

	ASSERT_NE(NULL, mode) TH_LOG("the runner must set EXPECT_MANYPROTS");
	if (!strcmp(mode, "on"))
		SKIP(return, "EXPECT_MANYPROTS=on: the other tests check MAP_CHGPROT");
	off = !strcmp(mode, "off");
	ASSERT_TRUE(off || !strcmp(mode, "absent"))
		TH_LOG("EXPECT_MANYPROTS=%s: must be on, off or absent", mode);

	rfp_catch();
	m = map_backing(_metadata, MEMFD, 8, &fd);
	errno = 0;
	EXPECT_EQ(-1, rfp(m + PS, PS, PROT_READ, 5, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	expect_shows(_metadata, m + PS, 1);
	EXPECT_EQ(1, rfp_vmas_in(m, 8 * PS));
	EXPECT_EQ(0, rfp_vmflag(m, "nl"));
	EXPECT_EQ(0, rfp_vmflag(m, "mp"));

	errno = 0;
	if (off) {
		/* manyprots=off refuses the flag whatever prot is */
		EXPECT_EQ(-1, rfp(m + PS, PS, PROT_NONE, 5, MAP_CHGPROT));
		EXPECT_EQ(EINVAL, errno);
		expect_shows(_metadata, m + PS, 1);
		EXPECT_EQ(1, rfp_vmas_in(m, 8 * PS));
	} else {
		/* stock 6.1 ignores the flag: prot 0 is its do_mmap() emulation */
		EXPECT_EQ(0, rfp(m + PS, PS, PROT_NONE, 5, MAP_CHGPROT))
			TH_LOG("%s", strerror(errno));
		expect_shows(_metadata, m + PS, 5);
		EXPECT_EQ(3, rfp_vmas_in(m, 8 * PS));
	}
	EXPECT_EQ(0, rfp_vmflag(m + PS, "nl"));
	EXPECT_EQ(0, rfp_vmflag(m + PS, "mp"));
	munmap(m, 8 * PS);
	close(fd);
}

FIXTURE(shm) {
	int fd;
	char *m;
};

FIXTURE_VARIANT(shm) {
	enum backing b;
};

FIXTURE_VARIANT_ADD(shm, memfd) {
	.b = MEMFD,
};

FIXTURE_VARIANT_ADD(shm, tmpfs) {
	.b = TMPFS,
};

FIXTURE_VARIANT_ADD(shm, shared_anon) {
	.b = SHARED_ANON,
};

FIXTURE_SETUP(shm)
{
	rfp_catch();
	self->m = map_backing(_metadata, variant->b, NPAGES, &self->fd);
}

FIXTURE_TEARDOWN(shm)
{
	munmap(self->m, NPAGES * PS);
	if (self->fd >= 0)
		close(self->fd);
}

/* Page 5 shows file page 40; a multi-page call maps consecutive file pages. */
TEST_F(shm, nonlinear_contents)
{
	char *m = self->m;

	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, rfp(m + 5 * PS, PS, PROT_READ | PROT_WRITE, 40, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	expect_shows(_metadata, m + 5 * PS, 40);
	expect_shows(_metadata, m + 4 * PS, 4);
	expect_shows(_metadata, m + 6 * PS, 6);

	ASSERT_EQ(0, rfp(m + 10 * PS, 3 * PS, PROT_READ, 50, MAP_CHGPROT));
	for (size_t i = 0; i < 3; i++)
		expect_shows(_metadata, m + (10 + i) * PS, 50 + i);
	expect_shows(_metadata, m + 13 * PS, 13);

	/* the size is rounded up to whole pages */
	ASSERT_EQ(0, rfp(m + 20 * PS, PS + 1, PROT_READ, 30, MAP_CHGPROT));
	expect_shows(_metadata, m + 20 * PS, 30);
	expect_shows(_metadata, m + 21 * PS, 31);
	expect_shows(_metadata, m + 22 * PS, 22);
	expect_one_vma(_metadata, m, NPAGES, PROT_READ | PROT_WRITE);
}

/* Two addresses of file page 40 and its linear page are the same memory. */
TEST_F(shm, coherent_aliases)
{
	char *a = self->m + 5 * PS, *b = self->m + 7 * PS, *lin = self->m + 40 * PS;

	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, rfp(a, PS, PROT_READ | PROT_WRITE, 40, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, rfp(b, PS, PROT_READ | PROT_WRITE, 40, MAP_CHGPROT));

	st(_metadata, a + 100, 'A');
	EXPECT_EQ('A', ld(_metadata, b + 100));
	expect_file_byte(_metadata, self->fd, self->m, 40, 100, 'A');
	st(_metadata, b + 200, 'B');
	EXPECT_EQ('B', ld(_metadata, a + 200));
	st(_metadata, lin + 300, 'L');
	EXPECT_EQ('L', ld(_metadata, a + 300));
	EXPECT_EQ('L', ld(_metadata, b + 300));
	if (self->fd >= 0) {
		ASSERT_EQ(1, pwrite(self->fd, "P", 1, 40 * PS + 400));
		EXPECT_EQ('P', ld(_metadata, a + 400));
		EXPECT_EQ('P', ld(_metadata, b + 400));
	}

	/* still the same page once a's entry is gone */
	ASSERT_EQ(0, madvise(a, PS, MADV_DONTNEED));
	st(_metadata, b + 500, 'D');
	EXPECT_EQ('D', ld(_metadata, a + 500));
	st(_metadata, a + 600, 'E');
	EXPECT_EQ('E', ld(_metadata, b + 600));
	expect_file_byte(_metadata, self->fd, self->m, 40, 600, 'E');
}

/* Back to the linear page and the VMA's protection, with and without the flag. */
TEST_F(shm, back_to_linear)
{
	char *p5 = self->m + 5 * PS, *p6 = self->m + 6 * PS, *p7 = self->m + 7 * PS;

	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, rfp(p5, PS, PROT_READ, 40, MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	expect_shows(_metadata, p5, 40);
	expect_access(_metadata, p5 + RFP_OFF_W, RFP_WRITE, PROT_READ);

	ASSERT_EQ(0, rfp(p5, PS, PROT_READ | PROT_WRITE, 5, MAP_CHGPROT));
	expect_shows(_metadata, p5, 5);
	expect_access(_metadata, p5 + RFP_OFF_W, RFP_WRITE, PROT_READ | PROT_WRITE);
	expect_file_byte(_metadata, self->fd, self->m, 5, RFP_OFF_W, MARK);
	expect_access(_metadata, p5 + RFP_OFF_X, RFP_EXEC, PROT_READ | PROT_WRITE);

	/* without MAP_CHGPROT, prot 0: the page gets the VMA's rw, in place */
	ASSERT_EQ(0, rfp(p6, PS, PROT_NONE, 41, MAP_CHGPROT));
	expect_access(_metadata, p6 + RFP_OFF_R, RFP_READ, PROT_NONE);
	ASSERT_EQ(0, rfp(p6, PS, 0, 6, 0)) TH_LOG("%s", strerror(errno));
	expect_shows(_metadata, p6, 6);
	expect_access(_metadata, p6 + RFP_OFF_W, RFP_WRITE, PROT_READ | PROT_WRITE);
	ASSERT_EQ(0, rfp(p7, PS, 0, 42, 0));
	expect_shows(_metadata, p7, 42);
	expect_access(_metadata, p7 + RFP_OFF_W, RFP_WRITE, PROT_READ | PROT_WRITE);
	expect_file_byte(_metadata, self->fd, self->m, 42, RFP_OFF_W, MARK);
	expect_one_vma(_metadata, self->m, NPAGES, PROT_READ | PROT_WRITE);
}

/* "nl" and "mp" appear with the first MAP_CHGPROT; maps keeps the default. */
TEST_F(shm, vmflags_after_first_chgprot)
{
	char *m = self->m;

	RFP_NEED_MANYPROTS(return);
	EXPECT_EQ(0, rfp_vmflag(m, "nl"));
	EXPECT_EQ(0, rfp_vmflag(m, "mp"));
	ASSERT_EQ(0, rfp(m + 3 * PS, PS, PROT_NONE, 3, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, rfp_vmflag(m, "nl"));
	EXPECT_EQ(1, rfp_vmflag(m, "mp"));
	EXPECT_EQ(1, rfp_vmflag(m + 3 * PS, "nl"));
	EXPECT_EQ(1, rfp_vmflag(m + 3 * PS, "mp"));
	expect_one_vma(_metadata, m, NPAGES, PROT_READ | PROT_WRITE);
}

/* 128 single-page remaps with every protection: still one VMA, right data. */
TEST_F(shm, no_vma_split)
{
	char *m = self->m;

	RFP_NEED_MANYPROTS(return);
	for (size_t round = 0; round < 2; round++) {
		for (size_t i = 0; i < NPAGES; i++) {
			/* 37 is odd: a permutation of the file pages */
			size_t pgoff = (i * 37 + 11 + round * 5) % NPAGES;
			int prot = (i + round) % 8;

			ASSERT_EQ(0, rfp(m + i * PS, PS, prot, pgoff, MAP_CHGPROT))
				TH_LOG("page %zu: %s", i, strerror(errno));
			ASSERT_EQ(1, rfp_vmas_in(m, NPAGES * PS))
				TH_LOG("after remapping page %zu", i);
		}
	}
	expect_one_vma(_metadata, m, NPAGES, PROT_READ | PROT_WRITE);
	for (size_t i = 0; i < NPAGES; i++) {
		size_t pgoff = (i * 37 + 16) % NPAGES;
		int prot = (i + 1) % 8;

		if (rfp_allows_here(prot, RFP_READ))
			expect_shows(_metadata, m + i * PS, pgoff);
		else
			expect_access(_metadata, m + i * PS + RFP_OFF_R, RFP_READ, prot);
	}
}

/* mincore follows the nonlinear file page, also once its entry is dropped. */
TEST(mincore_nonlinear)
{
	unsigned char vec[NPAGES];
	struct rfp_area a;
	char *m;

	RFP_NEED_MANYPROTS(return);
	rfp_catch();
	/* only file page 40 has data: the linear page 5 is a hole */
	ASSERT_EQ(0, rfp_area_open(&a, NPAGES, NPAGES, 0, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, rfp_pattern_fd(a.fd, 40, 1, 0));
	m = a.m;

	ASSERT_EQ(0, rfp(m + 5 * PS, PS, PROT_READ, 40, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	expect_shows(_metadata, m + 5 * PS, 40);
	ASSERT_EQ(0, mincore(m, NPAGES * PS, vec));
	EXPECT_EQ(1, vec[5] & 1);
	EXPECT_EQ(0, vec[6] & 1);	/* a hole, never touched */
	EXPECT_EQ(1, vec[40] & 1);	/* in the page cache, no entry */

	ASSERT_EQ(0, madvise(m + 5 * PS, PS, MADV_DONTNEED));
	ASSERT_EQ(0, mincore(m, NPAGES * PS, vec));
	EXPECT_EQ(1, vec[5] & 1) TH_LOG("file page 40 is still in memory");
	rfp_area_close(&a);
}

/*
 * The VMA's own protection for the pages never remapped, and the remapped
 * ones with theirs: a read-write and a read-only VMA of an O_RDWR memfd, and
 * a PROT_NONE one whose first two pages become read-write.
 */
FIXTURE(vma_default) {
	struct rfp_area a;
};

FIXTURE_VARIANT(vma_default) {
	int vma_prot;
	int remap_prot;
};

FIXTURE_VARIANT_ADD(vma_default, rw_vma) {
	.vma_prot = PROT_READ | PROT_WRITE,
	.remap_prot = PROT_READ,
};

FIXTURE_VARIANT_ADD(vma_default, r_vma) {
	.vma_prot = PROT_READ,
	.remap_prot = PROT_READ | PROT_WRITE,
};

FIXTURE_VARIANT_ADD(vma_default, none_vma) {
	.vma_prot = PROT_NONE,
	.remap_prot = PROT_READ | PROT_WRITE,
};

FIXTURE_SETUP(vma_default)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, 8, 16, 16, variant->vma_prot));
}

FIXTURE_TEARDOWN(vma_default)
{
	rfp_area_close(&self->a);
}

TEST_F(vma_default, never_remapped_pages)
{
	char *m = self->a.m;
	enum rfp_access a;

	RFP_NEED_MANYPROTS(return);
	/* pages 0 and 1 show file pages 9 and 10 with remap_prot */
	ASSERT_EQ(0, rfp(m, 2 * PS, variant->remap_prot, 9, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	for (a = RFP_READ; a <= RFP_EXEC; a++)
		expect_access(_metadata, m + access_off[a], a, variant->remap_prot);
	expect_shows(_metadata, m + PS, 10);
	expect_file_byte(_metadata, self->a.fd, NULL, 9, RFP_OFF_W,
			 rfp_allows_here(variant->remap_prot, RFP_WRITE) ?
			 MARK : rfp_byte(9, RFP_OFF_W, 0));

	/* pages 2-4: each access first on an untouched page; 5: all, in turn */
	for (a = RFP_READ; a <= RFP_EXEC; a++) {
		expect_access(_metadata, m + (2 + a) * PS + access_off[a], a,
			      variant->vma_prot);
		expect_access(_metadata, m + 5 * PS + access_off[a], a,
			      variant->vma_prot);
	}
	if (rfp_allows_here(variant->vma_prot, RFP_READ))
		expect_shows(_metadata, m + 2 * PS, 2);
	expect_one_vma(_metadata, m, 8, variant->vma_prot);
}

/*
 * Every protection on its own page, set with MAP_CHGPROT and probed for
 * read, write and exec, each access on a page of its own.  The pages show
 * file pages 40-47 (one per protection) while the linear pages 40-47 stay as
 * they are: a write must reach the file page.  What the page table holds
 * when the probe comes:
 *   UNTOUCHED: nothing, the probe is the first access;
 *   PRESENT:   the linear page had a present writable entry before the
 *              remap, and a read after it populated the page if it may;
 *   DONTNEED:  that read, then MADV_DONTNEED: only a non-present entry.
 */
enum pte_state { UNTOUCHED, PRESENT, DONTNEED };

FIXTURE(pp) {
	int fd;
	char *m;
};

FIXTURE_VARIANT(pp) {
	enum backing b;
	enum pte_state st;
};

#define PP_VARIANT(name, backing, state)				\
	FIXTURE_VARIANT_ADD(pp, name) { .b = backing, .st = state }

PP_VARIANT(memfd_untouched, MEMFD, UNTOUCHED);
PP_VARIANT(memfd_present, MEMFD, PRESENT);
PP_VARIANT(memfd_dontneed, MEMFD, DONTNEED);
PP_VARIANT(tmpfs_untouched, TMPFS, UNTOUCHED);
PP_VARIANT(tmpfs_present, TMPFS, PRESENT);
PP_VARIANT(tmpfs_dontneed, TMPFS, DONTNEED);
PP_VARIANT(shared_anon_untouched, SHARED_ANON, UNTOUCHED);
PP_VARIANT(shared_anon_present, SHARED_ANON, PRESENT);
PP_VARIANT(shared_anon_dontneed, SHARED_ANON, DONTNEED);

FIXTURE_SETUP(pp)
{
	rfp_catch();
	self->m = map_backing(_metadata, variant->b, NPAGES, &self->fd);
}

FIXTURE_TEARDOWN(pp)
{
	munmap(self->m, NPAGES * PS);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(pp, every_prot)
{
	RFP_NEED_MANYPROTS(return);
	for (int prot = 0; prot < 8; prot++) {
		size_t pgoff = 40 + prot;

		for (enum rfp_access a = RFP_READ; a <= RFP_EXEC; a++) {
			char *page = self->m + (2 + 3 * prot + a) * PS;
			char *p = page + access_off[a];
			unsigned char v = 0;

			if (variant->st == PRESENT) {
				/* a present, writable entry for the linear page */
				v = ld(_metadata, page);
				st(_metadata, page, v);
			}
			ASSERT_EQ(0, rfp(page, PS, prot, pgoff, MAP_CHGPROT))
				TH_LOG("prot %s: %s", prot_name[prot], strerror(errno));
			if (variant->st != UNTOUCHED && rfp_allows_here(prot, RFP_READ))
				EXPECT_EQ(0, rfp_try_load(page, &v));
			if (variant->st == DONTNEED)
				ASSERT_EQ(0, madvise(page, PS, MADV_DONTNEED));

			if (!expect_access(_metadata, p, a, prot)) {
				if (a == RFP_WRITE)
					expect_file_byte(_metadata, self->fd, self->m,
							 pgoff, RFP_OFF_W,
							 rfp_byte(pgoff, RFP_OFF_W, 0));
				continue;
			}
			if (a == RFP_READ)
				expect_shows(_metadata, page, pgoff);
			if (a == RFP_WRITE) {
				expect_file_byte(_metadata, self->fd, self->m, pgoff,
						 RFP_OFF_W, MARK);
				st(_metadata, p, rfp_byte(pgoff, RFP_OFF_W, 0));
			}
		}
	}
	expect_one_vma(_metadata, self->m, NPAGES, PROT_READ | PROT_WRITE);
}

TEST_HARNESS_MAIN
