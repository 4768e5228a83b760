// SPDX-License-Identifier: GPL-2.0
/*
 * Second part, THP collapse: collapsing a shmem file into a huge page for
 * a linear mapping of it (MADV_COLLAPSE, then khugepaged itself) unmaps
 * the file's small pages from every mapping, a nonlinear one included,
 * and retracts the page tables of the mappings it can map with a PMD.  The
 * page table of a converted VMA holds per-page offsets and protections:
 * it must never be retracted, and after the collapse every one of its
 * addresses must map the same file page, now part of the huge page, with
 * the same protection.
 */
#include "rfp.h"

#include "kselftest_harness.h"

#define NPAGES 1024			/* two PMDs' worth: 4 MiB */
#define PMD_SZ (2UL << 20)
#define HALF (NPAGES / 2)
#define RW (PROT_READ | PROT_WRITE)
#define THP "/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED_WAIT 60		/* seconds */
#define COLLAPSE_TRIES 5
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25		/* 6.1 uapi; glibc 2.36 lacks it */
#endif

/* a permutation of [0, NPAGES) without fixed points, mixing both halves */
static size_t lay_pgoff(size_t i)
{
	return (i * 389 + 7) & (NPAGES - 1);
}

static int lay_prot(size_t i)
{
	return rfp_prots[(i * 3 + i / 8 + 1) % 8];
}

/* Read a sysfs file into buf (trailing newline dropped); 0 or -1. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* "always [advise] never" -> "advise" */
static void sysfs_choice(char *s)
{
	char *l = strchr(s, '['), *r = l ? strchr(l, ']') : NULL;

	if (l && r) {
		memmove(s, l + 1, r - l - 1);
		s[r - l - 1] = 0;
	}
}

/* kB of an smaps field (e.g. "ShmemPmdMapped") of the VMA at addr, or -1. */
static long smaps_kb(const void *addr, const char *key)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long s, e, a = (unsigned long)addr;
	char line[1024], p[5];
	bool in = false;
	long kb = -1;
	size_t kl = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) == 3) {
			in = s <= a && a < e;
			continue;
		}
		if (in && !strncmp(line, key, kl) && line[kl] == ':') {
			kb = strtol(line + kl + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* A shared mapping of fd's first NPAGES pages at a PMD-aligned address. */
static char *map_aligned(int fd)
{
	size_t len = NPAGES * PS;
	char *r = mmap(NULL, len + PMD_SZ, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (r == MAP_FAILED)
		return r;
	a = (char *)(((uintptr_t)r + PMD_SZ - 1) & ~(PMD_SZ - 1));
	if (a > r)
		munmap(r, a - r);
	munmap(a + len, r + len + PMD_SZ - (a + len));
	return mmap(a, len, RW, MAP_SHARED | MAP_FIXED, fd, 0);
}

FIXTURE(co) {
	int fd, self_mem;
	char *nl, *lin;
	unsigned int gen[NPAGES];
	char shmem_enabled[64], scan_sleep[32];
};

FIXTURE_SETUP(co)
{
	self->nl = self->lin = MAP_FAILED;
	self->shmem_enabled[0] = self->scan_sleep[0] = 0;
	memset(self->gen, 0, sizeof(self->gen));
	self->fd = memfd_create("rfp_collapse", 0);
	ASSERT_LE(0, self->fd);
	self->self_mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, self->self_mem);
	rfp_catch_si();
}

FIXTURE_TEARDOWN(co)
{
	if (self->shmem_enabled[0])
		sysfs_write(THP "shmem_enabled", self->shmem_enabled);
	if (self->scan_sleep[0])
		sysfs_write(THP "khugepaged/scan_sleep_millisecs", self->scan_sleep);
	if (self->nl != MAP_FAILED)
		munmap(self->nl, NPAGES * PS);
	if (self->lin != MAP_FAILED)
		munmap(self->lin, NPAGES * PS);
	close(self->fd);
	close(self->self_mem);
}

static void check_nl(FIXTURE_DATA(co) *self, struct rfp_tally *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < NPAGES; i++)
		rfp_check_page(t, self->nl + i * PS, i, lay_pgoff(i), lay_prot(i),
			       &self->gen[lay_pgoff(i)], false, self->fd,
			       self->self_mem);
}

/*
 * Every page of the nonlinear VMA present (check_nl() touched them all)
 * and at the PFN of its file page in the linear mapping: the same page,
 * after the collapse a subpage of the huge page.  Counts mismatches.
 */
static long pfn_mismatches(FIXTURE_DATA(co) *self, size_t *first)
{
	static uint64_t pn[NPAGES], pl[NPAGES];
	long bad = 0;

	for (size_t i = 0; i < NPAGES; i++)
		(void)*(volatile char *)(self->lin + i * PS);
	if (rfp_pagemap(self->nl, NPAGES, pn) || rfp_pagemap(self->lin, NPAGES, pl))
		return -1;
	for (size_t i = 0; i < NPAGES; i++) {
		uint64_t l = pl[lay_pgoff(i)];

		if (!(pn[i] & RFP_PM_PRESENT) || !(l & RFP_PM_PRESENT) ||
		    RFP_PM_PFN(pn[i]) != RFP_PM_PFN(l)) {
			if (!bad++)
				*first = i;
		}
	}
	return bad;
}

/*
 * After a collapse: every page of the nonlinear VMA has its data and
 * protection, and sits at its file page's PFN.
 */
static void expect_intact(struct __test_metadata *_metadata,
			  FIXTURE_DATA(co) *self, const char *what)
{
	struct rfp_tally t;
	size_t first = 0;
	long bad;

	check_nl(self, &t);
	RFP_EXPECT_CLEAN(&t, what);
	bad = pfn_mismatches(self, &first);
	EXPECT_EQ(0, bad) TH_LOG("%s: %ld pages not at their file page's PFN, first %zu",
				 what, bad, first);
}

TEST_F_TIMEOUT(co, collapse_keeps_nonlinear, 180)
{
	char path[] = THP "shmem_enabled", buf[64];
	struct rfp_tally t;
	long pmd_kb;
	int waited, tries, ret;

	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PS));
	ASSERT_EQ(0, rfp_pattern_fd(self->fd, 0, NPAGES, 0));

	/* the converted VMA, PMD-aligned so a retraction could reach it */
	self->nl = map_aligned(self->fd);
	ASSERT_NE(MAP_FAILED, self->nl);
	RFP_FIRST_CHGPROT(return, self->nl, PS, lay_prot(0), lay_pgoff(0));
	for (size_t i = 1; i < NPAGES; i++) {
		ASSERT_EQ(0, rfp(self->nl + i * PS, PS, lay_prot(i), lay_pgoff(i),
				 MAP_CHGPROT)) TH_LOG("page %zu: %s", i, strerror(errno));
	}
	check_nl(self, &t);
	RFP_EXPECT_CLEAN(&t, "before the collapse");

	if (sysfs_read(path, self->shmem_enabled, sizeof(self->shmem_enabled)))
		SKIP(return, "no %s: this kernel has no transparent huge pages", path);
	sysfs_choice(self->shmem_enabled);
	ASSERT_EQ(0, sysfs_write(path, "advise")) TH_LOG("%s: %s", path, strerror(errno));

	/* the linear mapping that gets the huge pages */
	self->lin = map_aligned(self->fd);
	ASSERT_NE(MAP_FAILED, self->lin);
	for (size_t i = 0; i < NPAGES; i++)
		(void)*(volatile char *)(self->lin + i * PS);

	/*
	 * 1. MADV_COLLAPSE of the first PMD of the file.  It needs no
	 * MADV_HUGEPAGE; without one khugepaged cannot be collapsing the
	 * same pages at the same time, which makes MADV_COLLAPSE fail with
	 * EAGAIN (a locked page, an extra reference).  EAGAIN is retried a
	 * few times all the same: a nonlinear page the unmap missed would
	 * fail every time.
	 */
	for (tries = 1; ; tries++) {
		ret = madvise(self->lin, HALF * PS, MADV_COLLAPSE);
		if (!ret || errno != EAGAIN || tries == COLLAPSE_TRIES)
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, ret) TH_LOG("MADV_COLLAPSE, try %d: %s", tries, strerror(errno));
	if (tries > 1)
		TH_LOG("MADV_COLLAPSE: EAGAIN %d times", tries - 1);
	pmd_kb = smaps_kb(self->lin, "ShmemPmdMapped");
	EXPECT_LE((long)(PMD_SZ / 1024), pmd_kb) TH_LOG("no PMD mapping after MADV_COLLAPSE");
	EXPECT_EQ(1, rfp_vmflag(self->nl, "nl"));
	expect_intact(_metadata, self, "after MADV_COLLAPSE");

	/*
	 * Twice: 6.1's hugepage_madvise() asks shmem_is_huge() before the
	 * VMA has VM_HUGEPAGE, so with shmem_enabled=advise only the second
	 * call registers the mm with khugepaged.
	 */
	ASSERT_EQ(0, madvise(self->lin, NPAGES * PS, MADV_HUGEPAGE));
	ASSERT_EQ(0, madvise(self->lin, NPAGES * PS, MADV_HUGEPAGE));

	/* 2. khugepaged collapses the second PMD on its own */
	ASSERT_EQ(0, sysfs_read(THP "khugepaged/scan_sleep_millisecs", buf, sizeof(buf)));
	strcpy(self->scan_sleep, buf);
	ASSERT_EQ(0, sysfs_write(THP "khugepaged/scan_sleep_millisecs", "10"));
	for (waited = 0; waited < KHUGEPAGED_WAIT * 10; waited++) {
		for (size_t i = HALF; i < NPAGES; i++)
			(void)*(volatile char *)(self->lin + i * PS);
		pmd_kb = smaps_kb(self->lin, "ShmemPmdMapped");
		if (pmd_kb >= (long)(2 * PMD_SZ / 1024))
			break;
		usleep(100000);
	}
	TH_LOG("khugepaged: ShmemPmdMapped %ld kB after %.1f s", pmd_kb, waited / 10.0);
	ASSERT_LE((long)(2 * PMD_SZ / 1024), pmd_kb)
		TH_LOG("khugepaged did not collapse the second PMD in %d s", KHUGEPAGED_WAIT);
	EXPECT_EQ(0, smaps_kb(self->nl, "ShmemPmdMapped"));
	EXPECT_EQ(1, rfp_vmflag(self->nl, "mp"));
	expect_intact(_metadata, self, "after khugepaged");
}

TEST_HARNESS_MAIN
