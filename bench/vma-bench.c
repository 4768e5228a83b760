// SPDX-License-Identifier: GPL-2.0
/*
 * One measurement of N single-page mappings of a memfd, made one of two
 * ways, printed as one CSV row:
 *
 *   perpage    one mmap(MAP_SHARED | MAP_FIXED) per page: one VMA per page
 *   collapsed  one PROT_NONE MAP_SHARED VMA of the whole file, and one
 *              remap_file_pages(MAP_CHGPROT | MAP_NONBLOCK) per page
 *
 * Page i maps file page perm[i] (a seeded shuffle of 0..N-1) with
 * protection PROTS[i % 3] (read, read-write, read-exec), so that no two
 * neighbouring pages could share a VMA.  Measured in this order:
 *
 *   setup     making the N mappings, pages not populated
 *   vmas      VMAs inside the range (/proc/self/maps)
 *   memory    vm_area_struct and maple_node slab bytes (the VMAs and
 *             their tree), radix_tree_node and manyprots_rmap_chunk
 *             (collapsed: the reverse index of the pages at nonlinear
 *             addresses) from /proc/slabinfo,
 *             the Slab: line of /proc/meminfo, all as the change since
 *             before the set-up; VmPTE after the set-up and after fault-in
 *   fault     touching the first P pages (-p; all N by default) in
 *             address order: a write to read-write pages, a read elsewhere;
 *             with what may explain a slow run: the CPU it started on,
 *             the share of the pages that came from NUMA node 1 (every
 *             16th page, move_pages()), and spin_ns, a fixed loop of
 *             arithmetic timed just before (under TCG: how fast the vCPU
 *             ran then); and syscall_ns, one bare syscall (getppid(),
 *             averaged over 10,000), the cost every per-page call of
 *             set-up and protection change pays before its own work
 *   prot      giving every page the next protection of the cycle:
 *             mprotect() per page, or MAP_CHGPROT | MAP_NONBLOCK per page
 *             (which leaves the page to be faulted in again on next use)
 *   fork      fork() of a child that _exit()s at once, until waitpid()
 *   teardown  munmap() of the whole range
 *
 * Times are in nanoseconds (CLOCK_MONOTONIC), whole operation.  Where the
 * per-page way reaches vm.max_map_count, the row has status "limit",
 * `mapped` says how many mmap() calls succeeded and the later fields
 * are -1; the exit status is then 3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_CHGPROT
#define MAP_CHGPROT 0x200000	/* remap_file_pages(): set prot per page */
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1U
#endif

#define EXIT_LIMIT 3

static const int prots[3] = {
	PROT_READ, PROT_READ | PROT_WRITE, PROT_READ | PROT_EXEC
};

static const char *const csv_header =
	"way,n,run,status,mapped,populated,vmas,"
	"vma_slab_b,maple_slab_b,rindex_slab_b,slab_kb,pte_setup_kb,pte_kb,"
	"setup_ns,fault_ns,prot_ns,fork_ns,teardown_ns,max_map_count,"
	"fault_cpu,fault_node1_pct,spin_ns,syscall_ns";

static const char *prog = "vma-bench";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s [-p PAGES] [-r RUN] [-s SEED] perpage|collapsed N\n"
		"       %s -H      (print the CSV header)\n"
		"  N          number of single-page mappings (1..2^28)\n"
		"  -p PAGES   fault in only the first PAGES pages (default N)\n"
		"  -r RUN     run number written to the row (default 0)\n"
		"  -s SEED    seed of the offset shuffle (default 1)\n"
		"One CSV row on stdout; exit 0, or 3 where the per-page way\n"
		"reached vm.max_map_count (the row says how far it got).\n",
		prog, prog);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned long parse_ulong(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		die("bad %s: %s", what, s);
	return v;
}

/* xorshift64*: a reproducible shuffle without libc's rand() */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static long read_long_file(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* the value of "KEY: value kB" in a /proc file, or -1 */
static long proc_kb(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

enum { SLAB_VMA, SLAB_MAPLE, SLAB_RINDEX, NR_SLABS };
static const struct {
	const char *name;
	int slab;
} slab_caches[] = {
	{ "vm_area_struct", SLAB_VMA },
	{ "maple_node", SLAB_MAPLE },
	/* the reverse index: xarray nodes and its chunks of slots */
	{ "radix_tree_node", SLAB_RINDEX },
	{ "manyprots_rmap_chunk", SLAB_RINDEX },
};

/* active_objs * objsize of each cache; -1 without /proc/slabinfo */
static void read_slabs(long long bytes[NR_SLABS])
{
	char line[512], name[64];
	long long active, total, size;
	FILE *f = fopen("/proc/slabinfo", "r");
	int i;

	for (i = 0; i < NR_SLABS; i++)
		bytes[i] = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &total,
			   &size) != 4)
			continue;
		for (i = 0; i < (int)(sizeof(slab_caches) / sizeof(slab_caches[0])); i++) {
			int s = slab_caches[i].slab;

			if (strcmp(name, slab_caches[i].name))
				continue;
			bytes[s] = (bytes[s] < 0 ? 0 : bytes[s]) + active * size;
		}
	}
	fclose(f);
}

/* VMAs of this process that lie inside [start, end) */
static long count_vmas(unsigned long start, unsigned long end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	long n = 0;

	if (!f)
		die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo >= start &&
		    hi <= end)
			n++;
		/* a line longer than the buffer: skip the rest of it */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
	return n;
}

/* a fixed amount of arithmetic, no memory: its time is the CPU's speed */
static uint64_t spin(void)
{
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ull, t0 = now_ns();

	for (int i = 0; i < 1 << 22; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
	(void)sink;
	return now_ns() - t0;
}

/* one bare syscall, ns: averaged over 10,000 getppid() */
static uint64_t syscall_cost(void)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < 10000; i++)
		syscall(SYS_getppid);
	return (now_ns() - t0) / 10000;
}

/* percent of every 16th of the first n pages at base that are on node 1; -1 if unknown */
static int node1_pct(volatile char *base, unsigned long n, long psz)
{
	unsigned long k = (n + 15) / 16, on1 = 0, known = 0, i;
	void **pages = malloc(k * sizeof(*pages));
	int *status = malloc(k * sizeof(*status));

	if (!pages || !status || !k)
		goto fail;
	for (i = 0; i < k; i++)
		pages[i] = (char *)base + i * 16 * psz;
	if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0))
		goto fail;
	for (i = 0; i < k; i++) {
		known += status[i] >= 0;
		on1 += status[i] == 1;
	}
	free(pages);
	free(status);
	return known ? (int)(on1 * 100 / known) : -1;
fail:
	free(pages);
	free(status);
	return -1;
}

static long rfp(void *addr, size_t size, int prot, unsigned long pgoff,
		int flags)
{
	return syscall(SYS_remap_file_pages, addr, size, prot, pgoff, flags);
}

int main(int argc, char **argv)
{
	unsigned long n, populate = ~0ul, run = 0, seed = 1, mapped = 0, i;
	long long slabs0[NR_SLABS], slabs1[NR_SLABS], delta[NR_SLABS];
	long psz = sysconf(_SC_PAGESIZE), slab0, slab1, pte_setup = -1;
	long pte = -1, vmas, max_map_count;
	uint64_t t_setup = 0, t_fault = -1, t_prot = -1, t_fork = -1, t_down;
	uint64_t t_spin = -1, t_sys = -1;
	int fault_cpu = -1, node1 = -1;
	const char *status = "ok";
	int opt, collapsed, fd;
	unsigned long *perm;
	volatile char *base;
	size_t len;

	while ((opt = getopt(argc, argv, "Hp:r:s:h")) != -1) {
		switch (opt) {
		case 'H':
			puts(csv_header);
			return 0;
		case 'p':
			populate = parse_ulong(optarg, "page count");
			break;
		case 'r':
			run = parse_ulong(optarg, "run number");
			break;
		case 's':
			seed = parse_ulong(optarg, "seed");
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (!strcmp(argv[optind], "perpage"))
		collapsed = 0;
	else if (!strcmp(argv[optind], "collapsed"))
		collapsed = 1;
	else
		usage();
	n = parse_ulong(argv[optind + 1], "N");
	if (n < 1 || n > 1ul << 28)
		die("N must be 1..%lu", 1ul << 28);
	if (populate > n)
		populate = n;
	len = n * psz;

	perm = malloc(n * sizeof(*perm));
	if (!perm)
		die("no memory for %lu offsets", n);
	for (i = 0; i < n; i++)
		perm[i] = i;
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	for (i = n - 1; i > 0; i--) {
		unsigned long j = rng_next() % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	max_map_count = read_long_file("/proc/sys/vm/max_map_count");

	fd = memfd_create("vma-bench", MFD_CLOEXEC);
	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, len))
		die("ftruncate(%zu): %s", len, strerror(errno));

	/* a free hole of len bytes for the per-page way to map into */
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		die("mmap of %zu bytes: %s", len, strerror(errno));
	if (munmap((void *)base, len))
		die("munmap: %s", strerror(errno));

	read_slabs(slabs0);
	slab0 = proc_kb("/proc/meminfo", "Slab");

	if (collapsed) {
		uint64_t t0 = now_ns();
		void *p = mmap((void *)base, len, PROT_NONE,
			       MAP_SHARED | MAP_FIXED, fd, 0);

		if (p == MAP_FAILED)
			die("mmap of the whole file: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			if (rfp((char *)base + i * psz, psz, prots[i % 3],
				perm[i], MAP_CHGPROT | MAP_NONBLOCK))
				die("remap_file_pages(MAP_CHGPROT) of page %lu: %s",
				    i, strerror(errno));
		}
		t_setup = now_ns() - t0;
		mapped = n;
	} else {
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++) {
			void *want = (char *)base + i * psz;
			void *p = mmap(want, psz, prots[i % 3],
				       MAP_SHARED | MAP_FIXED, fd,
				       (off_t)perm[i] * psz);

			if (p == MAP_FAILED) {
				if (errno != ENOMEM)
					die("mmap of page %lu: %s", i,
					    strerror(errno));
				status = "limit";
				break;
			}
		}
		t_setup = now_ns() - t0;
		mapped = i;
	}

	read_slabs(slabs1);
	slab1 = proc_kb("/proc/meminfo", "Slab");
	for (i = 0; i < NR_SLABS; i++)
		delta[i] = slabs0[i] < 0 || slabs1[i] < 0 ? -1 :
			   slabs1[i] - slabs0[i];
	pte_setup = proc_kb("/proc/self/status", "VmPTE");
	vmas = count_vmas((unsigned long)base, (unsigned long)base + len);

	if (mapped < n) {
		munmap((void *)base, len);
		populate = 0;
		t_setup = -1;
		t_down = -1;
		goto out;
	}

	{
		uint64_t t0;
		unsigned long sum = 0;

		t_spin = spin();
		t_sys = syscall_cost();
		fault_cpu = sched_getcpu();
		t0 = now_ns();
		for (i = 0; i < populate; i++) {
			if (prots[i % 3] & PROT_WRITE)
				base[i * psz] = 1;
			else
				sum += base[i * psz];
		}
		t_fault = now_ns() - t0;
		if (sum)	/* read-only pages were never written */
			die("a page read back %lu", sum);
		node1 = node1_pct(base, populate, psz);
	}
	pte = proc_kb("/proc/self/status", "VmPTE");

	{
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++) {
			char *p = (char *)base + i * psz;
			int prot = prots[(i + 1) % 3];

			if (collapsed ? rfp(p, psz, prot, perm[i],
					    MAP_CHGPROT | MAP_NONBLOCK) :
					mprotect(p, psz, prot))
				die("%s of page %lu: %s", collapsed ?
				    "remap_file_pages(MAP_CHGPROT)" : "mprotect",
				    i, strerror(errno));
		}
		t_prot = now_ns() - t0;
	}

	{
		uint64_t t0 = now_ns();
		int wstatus;
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid)
			_exit(0);
		if (waitpid(pid, &wstatus, 0) != pid)
			die("waitpid: %s", strerror(errno));
		t_fork = now_ns() - t0;
		if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus))
			die("the forked child ended with status %#x", wstatus);
	}

	{
		uint64_t t0 = now_ns();

		if (munmap((void *)base, len))
			die("munmap: %s", strerror(errno));
		t_down = now_ns() - t0;
	}
out:
	printf("%s,%lu,%lu,%s,%lu,%lu,%ld,%lld,%lld,%lld,%ld,%ld,%ld,"
	       "%lld,%lld,%lld,%lld,%lld,%ld,%d,%d,%lld,%lld\n",
	       collapsed ? "collapsed" : "perpage", n, run, status, mapped,
	       populate, vmas, delta[SLAB_VMA], delta[SLAB_MAPLE],
	       delta[SLAB_RINDEX], slab0 < 0 || slab1 < 0 ? -1 : slab1 - slab0,
	       pte_setup, pte, (long long)t_setup, (long long)t_fault,
	       (long long)t_prot, (long long)t_fork, (long long)t_down,
	       max_map_count, fault_cpu, node1, (long long)t_spin, (long long)t_sys);
	close(fd);
	free(perm);
	return strcmp(status, "ok") ? EXIT_LIMIT : 0;
}
