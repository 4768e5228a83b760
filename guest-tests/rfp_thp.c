// SPDX-License-Identifier: GPL-2.0
/*
 * The first MAP_CHGPROT on a VMA that maps a tmpfs huge page with a PMD
 * (shmem_enabled=advise and MADV_HUGEPAGE): the call must take the huge
 * mapping down before it builds page tables there, succeed, and leave
 * every page with its own contents and protection.
 */
#include "rfp.h"
#include "kselftest_harness.h"

#define HPAGE (2UL << 20)
#define NPAGES (2 * HPAGE / 4096)

static const char knob[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

/* kB of key ("ShmemPmdMapped") in the smaps entry containing addr, -1 if none */
static long smaps_kb(const void *addr, const char *key)
{
	unsigned long s, e, a = (unsigned long)addr;
	size_t len = strlen(key);
	char line[512];
	bool in = false;
	long v = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = s <= a && a < e;
			continue;
		}
		if (in && !strncmp(line, key, len) && line[len] == ':')
			v = atol(line + len + 1);
	}
	if (f)
		fclose(f);
	return v;
}

FIXTURE(thp) {
	char old[32];
	int fd;
	char *raw, *m;
};

FIXTURE_SETUP(thp)
{
	char line[128], *b, *e;
	FILE *f = fopen(knob, "r");

	self->old[0] = 0;
	self->fd = -1;
	self->raw = MAP_FAILED;
	/*
	 * No knob, no shmem THP (UML): the test SKIP()s on the empty
	 * self->old, as 6.1's harness runs the test after a setup SKIP().
	 */
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	/* the current value is the one in brackets: "always [never] ..." */
	b = strchr(line, '[');
	e = b ? strchr(b, ']') : NULL;
	ASSERT_TRUE(b && e && e - b - 1 < (long)sizeof(self->old));
	memcpy(self->old, b + 1, e - b - 1);
	self->old[e - b - 1] = 0;
	ASSERT_EQ(0, rfp_write_str(knob, "advise"));
}

FIXTURE_TEARDOWN(thp)
{
	if (self->raw != MAP_FAILED)
		munmap(self->raw, 3 * HPAGE);
	if (self->fd >= 0)
		close(self->fd);
	if (self->old[0])
		rfp_write_str(knob, self->old);
}

TEST_F(thp, first_chgprot_over_huge_pmd)
{
	long pmd_kb;

	if (!self->old[0])
		SKIP(return, "no %s: no shmem THP here", knob);
	rfp_catch();
	self->fd = memfd_create("rfp-thp", 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, 2 * HPAGE));
	self->raw = mmap(NULL, 3 * HPAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->raw);
	self->m = (char *)(((unsigned long)self->raw + HPAGE - 1) & ~(HPAGE - 1));
	ASSERT_EQ(self->m, mmap(self->m, 2 * HPAGE, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_FIXED, self->fd, 0));
	ASSERT_EQ(0, madvise(self->m, 2 * HPAGE, MADV_HUGEPAGE));
	/* the first write faults in a huge page and maps it with a PMD */
	rfp_fill_mem(self->m, NPAGES);
	pmd_kb = smaps_kb(self->m, "ShmemPmdMapped");
	TH_LOG("ShmemPmdMapped before MAP_CHGPROT: %ld kB", pmd_kb);
	if (pmd_kb < (long)(HPAGE >> 10))
		SKIP(return, "no PMD-mapped shmem huge page (ShmemPmdMapped %ld kB)", pmd_kb);

	/* page 5 of the first huge page shows file page 700, read-only */
	RFP_FIRST_CHGPROT(return, self->m + 5 * PS, PS, PROT_READ, 700);
	EXPECT_EQ(0, smaps_kb(self->m, "ShmemPmdMapped"));
	EXPECT_EQ(1, rfp_vmflag(self->m, "nl"));
	for (size_t i = 0; i < NPAGES; i++) {
		size_t want = i == 5 ? 700 : i;
		unsigned char v = 0;

		ASSERT_EQ(0, rfp_try_load(self->m + i * PS + RFP_OFF_R, &v));
		ASSERT_EQ(rfp_fill(want), v) TH_LOG("page %zu", i);
	}
	EXPECT_EQ(SEGV_ACCERR, rfp_try(self->m + 5 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(0, rfp_try(self->m + 6 * PS + RFP_OFF_W, RFP_WRITE));
	EXPECT_EQ(0, rfp_try(self->m + 600 * PS + RFP_OFF_W, RFP_WRITE));
}

TEST_HARNESS_MAIN
