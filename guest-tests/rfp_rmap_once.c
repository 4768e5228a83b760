// SPDX-License-Identifier: GPL-2.0
/*
 * rmap over nonlinear VMAs hands each address that maps a page of a folio
 * to reclaim and migration once per walk, however the addresses lie: a
 * file page at its linear address and at several nonlinear ones (the
 * VMA-wide scan must not see the linear one again), and pages of one
 * tmpfs huge page swapped around inside the huge page's own linear range
 * (an address there is both "linear address of page j" and "the index's
 * address of page k").  The guest kernel's DEBUG_VM check in the walker
 * warns on a second visit, and the console check fails the run; here each
 * page must also come back with its own contents and protection.  Reclaim
 * must weigh such a page as it weighs one mapped the stock way.
 */
#include "rfp.h"

#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define HPAGE (2UL << 20)
#define HPAGES (HPAGE / 4096)

static const char knob[] = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

/*
 * move_pages() of n pages to node, shared ones too (MPOL_MF_MOVE_ALL,
 * root); how many ended there, -1 on error
 */
static long move_to(char **pages, size_t n, int node)
{
	int nodes[8], status[8];
	size_t i;
	long on = 0;

	for (i = 0; i < n; i++)
		nodes[i] = node;
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status,
		    MPOL_MF_MOVE_ALL) < 0)
		return -1;
	for (i = 0; i < n; i++)
		on += status[i] == node;
	return on;
}

FIXTURE(once) {
	struct rfp_area a;
	char old[32];
};

FIXTURE_SETUP(once)
{
	rfp_area_init(&self->a);
	self->old[0] = 0;
	rfp_catch();
}

FIXTURE_TEARDOWN(once)
{
	rfp_area_close(&self->a);
	if (self->old[0])
		rfp_write_str(knob, self->old);
}

/*
 * File page 3 at its linear address 3 and at 9 and 12: the index counts
 * two nonlinear addresses, so rmap scans the VMA, outside page 3.
 */
TEST_F_TIMEOUT(once, linear_and_two_nonlinear, 120)
{
	struct rfp_tally t = { 0 };
	char *m, *pages[3];
	long moved;

	ASSERT_EQ(0, rfp_area_open(&self->a, 16, 16, 16, PROT_READ | PROT_WRITE));
	m = self->a.m;
	RFP_FIRST_CHGPROT(return, m + 9 * PS, PS, PROT_READ, 3);
	ASSERT_EQ(0, rfp(m + 12 * PS, PS, PROT_READ | PROT_WRITE, 3, MAP_CHGPROT));
	pages[0] = m + 3 * PS;
	pages[1] = m + 9 * PS;
	pages[2] = m + 12 * PS;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, rfp_try(pages[i] + RFP_OFF_R, RFP_READ));

	if (!access("/sys/devices/system/node/node1", F_OK)) {
		int status[3] = { -1, -1, -1 }, i;

		/* two walks (unmap, map again) over the three addresses */
		moved = move_to(pages, 1, 1);
		ASSERT_LE(0, moved) TH_LOG("move_pages: %s", strerror(errno));
		EXPECT_EQ(1, moved);
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, rfp_try(pages[i] + RFP_OFF_R, RFP_READ));
		ASSERT_EQ(0, syscall(SYS_move_pages, 0, 3, pages, NULL, status, 0));
		for (i = 0; i < 3; i++)
			EXPECT_EQ(1, status[i]) TH_LOG("address %d", i);
	}
	if (rfp_meminfo_kb("SwapTotal") > 0) {
		/*
		 * MADV_PAGEOUT leaves pages mapped more than once alone: keep
		 * it at its linear address only, while 9 and 12 keep its
		 * offset, so the index still counts two nonlinear addresses
		 */
		ASSERT_EQ(0, madvise(m + 9 * PS, PS, MADV_DONTNEED));
		ASSERT_EQ(0, madvise(m + 12 * PS, PS, MADV_DONTNEED));
		EXPECT_EQ(0, rfp_pageout(m + 3 * PS, 1));
	}
	rfp_check_page(&t, m + 3 * PS, 3, 3, PROT_READ | PROT_WRITE,
		       &self->a.gen[3], false, self->a.fd, self->a.self_mem);
	rfp_check_page(&t, m + 9 * PS, 9, 3, PROT_READ, &self->a.gen[3],
		       false, self->a.fd, self->a.self_mem);
	rfp_check_page(&t, m + 12 * PS, 12, 3, PROT_READ | PROT_WRITE,
		       &self->a.gen[3], false, self->a.fd, self->a.self_mem);
	RFP_EXPECT_CLEAN(&t, "file page 3 at three addresses");
}

/*
 * One tmpfs huge page mapped by PTEs: inside its linear range pages 3 and
 * 5 swap file pages, page 8 shows file page 600 (another page of the same
 * huge page), and page 520, outside the range, shows file page 7.
 */
TEST_F_TIMEOUT(once, huge_page_swapped_inside, 180)
{
	struct rfp_tally t = { 0 };
	static const size_t at[] = { 3, 5, 8, 520 }, pg[] = { 5, 3, 600, 7 };
	char line[128], *m, *pages[1];
	long moved;

	RFP_NEED_MANYPROTS(return);
	if (rfp_read_str(knob, line, sizeof(line)))
		SKIP(return, "no %s: no shmem THP here", knob);
	ASSERT_TRUE(rfp_choice(line) && strlen(line) < sizeof(self->old));
	strcpy(self->old, line);
	ASSERT_EQ(0, rfp_write_str(knob, "advise"));
	ASSERT_EQ(0, rfp_area_open(&self->a, 0, 2 * HPAGES, 0, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, rfp_area_map(&self->a, 2 * HPAGES, PROT_READ | PROT_WRITE, HPAGE));
	m = self->a.m;
	ASSERT_EQ(0, madvise(m, 2 * HPAGE, MADV_HUGEPAGE));
	rfp_pattern_mem(m, 0, 2 * HPAGES, 0);
	if (rfp_smaps_kb(m, "ShmemPmdMapped") < (long)(HPAGE >> 10))
		SKIP(return, "no shmem huge page");
	for (size_t i = 0; i < ARRAY_SIZE(at); i++)
		ASSERT_EQ(0, rfp(m + at[i] * PS, PS, PROT_READ, pg[i], MAP_CHGPROT));
	for (size_t i = 0; i < 2 * HPAGES; i++)
		ASSERT_EQ(0, rfp_try(m + i * PS + RFP_OFF_R, RFP_READ));

	if (rfp_meminfo_kb("SwapTotal") > 0)
		ASSERT_EQ(0, madvise(m, 2 * HPAGE, MADV_PAGEOUT));
	if (!access("/sys/devices/system/node/node1", F_OK)) {
		for (size_t i = 0; i < 2 * HPAGES; i++)
			ASSERT_EQ(0, rfp_try(m + i * PS + RFP_OFF_R, RFP_READ));
		pages[0] = m + 3 * PS;
		moved = move_to(pages, 1, 1);
		ASSERT_LE(0, moved) TH_LOG("move_pages: %s", strerror(errno));
		EXPECT_EQ(1, moved);
	}
	for (size_t i = 0; i < 2 * HPAGES; i++) {
		size_t pgoff = i, j;
		int prot = PROT_READ | PROT_WRITE;

		for (j = 0; j < ARRAY_SIZE(at); j++)
			if (at[j] == i)
				pgoff = pg[j], prot = PROT_READ;
		rfp_check_page(&t, m + i * PS, i, pgoff, prot,
			       &self->a.gen[pgoff], false, self->a.fd,
			       self->a.self_mem);
	}
	RFP_EXPECT_CLEAN(&t, "a huge page with pages swapped inside");
}

/* --- reclaim_weighs_each_address_once --- */

#define CG_ROOT "/sys/fs/cgroup"
#define RW (PROT_READ | PROT_WRITE)
#define FILLER_PAGES 1024
#define MAX_STEPS 32
/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define KPF_REFERENCED 2
#define KPF_LRU 5
#define KPF_ACTIVE 6

enum fate { UNSCANNED, KEPT, ACTIVATED, PAGED_OUT };
static const char *const fate_name[] = {
	"not scanned", "kept inactive (one reference)",
	"activated (two references)", "paged out (no reference)",
};

/*
 * The kpageflags of the page mapped at addr: 0, -1 if nothing is mapped
 * there, -2 if /proc/kpageflags cannot tell (UML: see rfp_mlocked()),
 * -3 on a read error.
 */
static int page_flags(const void *addr, uint64_t *flags)
{
	uint64_t pm;
	ssize_t n;
	int fd;

	if (rfp_pagemap(addr, 1, &pm))
		return -3;
	if (!(pm & RFP_PM_PRESENT))
		return -1;
	if (!RFP_PM_PFN(pm))
		return -3;
	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0)
		return -2;
	n = pread(fd, flags, sizeof(*flags), (off_t)(RFP_PM_PFN(pm) * sizeof(*flags)));
	close(fd);
	return n == sizeof(*flags) ? 0 : n == 0 ? -2 : -3;
}

/* What the first scan of folio_check_references() left of a page. */
static int fate_of(int rc, uint64_t flags)
{
	if (rc == -1)
		return PAGED_OUT;
	if (flags & (1ULL << KPF_ACTIVE))
		return ACTIVATED;
	if (flags & (1ULL << KPF_REFERENCED))
		return KEPT;
	return UNSCANNED;
}

/* What the child reports, in a shared page; [0] the test page, [1] the control. */
struct weigh_report {
	int failed, err;	/* the setup step that failed, its errno */
	int rc[2];		/* page_flags() before reclaim */
	uint64_t before[2], after[2];
	int fate[2], step[2];	/* the first change, and in which step */
	int steps, reclaim_err;
};

#define CHILD_FAIL(rep, n) do {						\
	(rep)->failed = (n);						\
	(rep)->err = errno;						\
	_exit(2);							\
} while (0)

/*
 * In a fresh memory cgroup, pinned to one CPU so that the LRU batches it
 * fills are the ones reclaim drains (lru_add_drain() is per CPU): the test
 * page, file page 0 of a nonlinear VMA at its linear address and at one
 * nonlinear address, with one more nonlinear address holding its offset
 * unmapped, so the reverse index counts it at several and rmap scans the
 * VMA; the control page, mapped by two plain shared mappings.  Each of
 * the four addresses is written once.  Then unreferenced filler pages,
 * which reclaim takes in its steps, behind the two pages on the LRU.
 */
static void __attribute__((noreturn))
weigh_child(const char *cg, struct weigh_report *rep)
{
	volatile char *m, *k1, *k2;
	char path[256], *addr[2];
	uint64_t pm[2], pm2[2];
	cpu_set_t cpus;
	int t, k, f, cpu, rc;

	cpu = sched_getcpu();
	CPU_ZERO(&cpus);
	CPU_SET(cpu < 0 ? 0 : cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		CHILD_FAIL(rep, 1);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (rfp_write_str(path, "0"))
		CHILD_FAIL(rep, 2);

	t = memfd_create("rfp_weigh", 0);
	k = memfd_create("rfp_weigh_control", 0);
	f = memfd_create("rfp_weigh_filler", 0);
	if (t < 0 || k < 0 || f < 0 || ftruncate(t, 16 * PS) || ftruncate(k, PS))
		CHILD_FAIL(rep, 3);
	m = mmap(NULL, 16 * PS, RW, MAP_SHARED, t, 0);
	k1 = mmap(NULL, PS, RW, MAP_SHARED, k, 0);
	k2 = mmap(NULL, PS, RW, MAP_SHARED, k, 0);
	if (m == MAP_FAILED || k1 == MAP_FAILED || k2 == MAP_FAILED)
		CHILD_FAIL(rep, 4);
	/* before any page exists: populating would mark the page accessed */
	if (rfp((char *)m + 5 * PS, PS, RW, 0, MAP_CHGPROT | MAP_NONBLOCK) ||
	    rfp((char *)m + 9 * PS, PS, RW, 0, MAP_CHGPROT | MAP_NONBLOCK))
		CHILD_FAIL(rep, 5);
	m[0] = 1;
	m[5 * PS] = 1;
	k1[0] = 1;
	k2[0] = 1;
	if (fallocate(f, 0, 0, FILLER_PAGES * PS))
		CHILD_FAIL(rep, 6);

	/* the same page at both addresses of each, and nothing at m + 9 */
	if (rfp_pagemap((char *)m, 1, &pm[0]) || rfp_pagemap((char *)m + 5 * PS, 1, &pm2[0]) ||
	    rfp_pagemap((char *)k1, 1, &pm[1]) || rfp_pagemap((char *)k2, 1, &pm2[1]) ||
	    rfp_present((char *)m + 9 * PS, 1) != 0)
		CHILD_FAIL(rep, 7);
	for (int i = 0; i < 2; i++)
		if (!(pm[i] & RFP_PM_PRESENT) || RFP_PM_PFN(pm[i]) != RFP_PM_PFN(pm2[i]))
			CHILD_FAIL(rep, 8);

	addr[0] = (char *)m;
	addr[1] = (char *)k1;
	for (int i = 0; i < 2; i++) {
		rep->rc[i] = page_flags(addr[i], &rep->before[i]);
		if (rep->rc[i])
			_exit(0);	/* the parent tells why */
	}

	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	for (rep->steps = 1; rep->steps <= MAX_STEPS; rep->steps++) {
		/* 32 pages, reclaim's own batch: taken from the fillers */
		if (rfp_write_str(path, "131072"))
			rep->reclaim_err = errno;
		for (int i = 0; i < 2; i++) {
			if (rep->step[i])
				continue;
			rep->after[i] = 0;
			rc = page_flags(addr[i], &rep->after[i]);
			if (rc < -1)
				CHILD_FAIL(rep, 9);
			rep->fate[i] = fate_of(rc, rep->after[i]);
			if (rep->fate[i] != UNSCANNED)
				rep->step[i] = rep->steps;
		}
		if (rep->step[0] && rep->step[1])
			break;
	}
	_exit(0);
}

/*
 * Reclaim's first look at a page mapped at two addresses, both young,
 * activates it (two references): the test page, whose second address is
 * in the same nonlinear VMA, must fare as the control page does.  rmap
 * that visits its linear address twice spends folio_referenced()'s
 * mapcount there (the second visit finds the young bit already cleared)
 * and never reaches the other address: one reference, kept inactive.
 */
TEST_F_TIMEOUT(once, reclaim_weighs_each_address_once, 120)
{
	struct weigh_report *rep;
	char cg[128], path[256], knob_val[32];
	long pgactivate, pgdeactivate, pgscan;
	static const char *const what[] = { "test page", "control page" };
	int st = -1;
	pid_t pid;

	ASSERT_EQ(0, rfp_area_open(&self->a, 2, 2, 2, RW));
	RFP_FIRST_CHGPROT(return, self->a.m, PS, PROT_READ, 1);
	rfp_area_close(&self->a);
	RFP_NEED_SWAP();
	/* a huge control page would take one reference for both addresses */
	if (!rfp_read_str(knob, knob_val, sizeof(knob_val)) && rfp_choice(knob_val) &&
	    (!strcmp(knob_val, "always") || !strcmp(knob_val, "force")))
		SKIP(return, "shmem_enabled=%s: memfd pages may be huge", knob_val);
	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2 at " CG_ROOT ": %s", strerror(errno));
	if (!rfp_has_word(CG_ROOT "/cgroup.controllers", "memory"))
		SKIP(return, "no memory controller in " CG_ROOT "/cgroup.controllers");
	if (!rfp_has_word(CG_ROOT "/cgroup.subtree_control", "memory")) {
		ASSERT_EQ(0, rfp_write_str(CG_ROOT "/cgroup.subtree_control", "+memory"))
			TH_LOG("enable memory: %s", strerror(errno));
	}
	snprintf(cg, sizeof(cg), CG_ROOT "/rfp_rmap_once.%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755)) TH_LOG("mkdir %s: %s", cg, strerror(errno));
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	if (access(path, W_OK)) {
		rmdir(cg);
		SKIP(return, "no memory.reclaim in this kernel");
	}

	rep = mmap(NULL, PS, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid = rep == MAP_FAILED ? -1 : fork();
	if (pid == 0)
		weigh_child(cg, rep);
	if (pid > 0)
		waitpid(pid, &st, 0);
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	pgactivate = rfp_keyed(path, "pgactivate", ' ');
	pgdeactivate = rfp_keyed(path, "pgdeactivate", ' ');
	pgscan = rfp_keyed(path, "pgscan", ' ');
	EXPECT_EQ(0, rmdir(cg)) TH_LOG("rmdir %s: %s", cg, strerror(errno));
	ASSERT_LT(0, pid) TH_LOG("mmap or fork: %s", strerror(errno));
	ASSERT_EQ(0, st) TH_LOG("child status %#x, setup step %d: %s",
				st, rep->failed, strerror(rep->err));

	for (int i = 0; i < 2; i++) {
		if (rep->rc[i] == -2)
			SKIP(return, "/proc/kpageflags does not list the %s", what[i]);
		ASSERT_EQ(0, rep->rc[i]) TH_LOG("%s: no page flags", what[i]);
	}
	TH_LOG("memcg: pgscan %ld, pgactivate %ld, pgdeactivate %ld; %d steps, last error %s",
	       pgscan, pgactivate, pgdeactivate, rep->steps,
	       rep->reclaim_err ? strerror(rep->reclaim_err) : "none");
	for (int i = 0; i < 2; i++) {
		/* on the inactive list and unreferenced, or the first scan tells nothing */
		ASSERT_EQ(1ULL << KPF_LRU, rep->before[i] &
			  ((1ULL << KPF_LRU) | (1ULL << KPF_ACTIVE) | (1ULL << KPF_REFERENCED)))
			TH_LOG("%s before reclaim: kpageflags %#llx", what[i],
			       (unsigned long long)rep->before[i]);
		ASSERT_NE(0, rep->step[i])
			TH_LOG("%s: not scanned in %d reclaim steps", what[i], MAX_STEPS);
		TH_LOG("%s: %s in step %d (kpageflags %#llx)", what[i],
		       fate_name[rep->fate[i]], rep->step[i],
		       (unsigned long long)rep->after[i]);
	}
	EXPECT_EQ(rep->fate[1], rep->fate[0])
		TH_LOG("the test page was %s, the control page %s",
		       fate_name[rep->fate[0]], fate_name[rep->fate[1]]);
	munmap(rep, PS);
}

TEST_HARNESS_MAIN
