// SPDX-License-Identifier: GPL-2.0
/*
 * chgprot-example: per-page protections and file offsets inside one shared
 * mapping, with remap_file_pages(MAP_CHGPROT) (Documentation/mm/
 * remap_file_pages.rst in the patched tree).  Without it, each page that
 * gets its own protection (mprotect) or file page (mmap MAP_FIXED) splits
 * the mapping: one VMA per page.  With it,
 *
 *	remap_file_pages(addr, size, prot, pgoff, MAP_CHGPROT);
 *
 * gives page i of [addr, addr + size) file page pgoff + i and protection
 * prot inside the one VMA (MAP_SHARED mappings of tmpfs, memfd or shared
 * anonymous memory only).
 *
 * It maps 8 pages of a memfd read-write, makes page 1 read-only and page 2
 * PROT_NONE, shows file page 6 at page 3, reads, and writes to page 1:
 * SIGSEGV, SEGV_ACCERR.  Where MAP_CHGPROT fails with EINVAL (a stock
 * kernel, or manyprots=off) it sets the same pages with one mmap(MAP_FIXED)
 * each instead: the same behaviour, more VMAs.  Exit status 0 unless
 * something behaves unlike the documentation.
 *
 *	cc -O2 -Wall -static -isystem build/x86_64/usr/include \
 *		-o chgprot-example examples/chgprot-example.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <asm-generic/mman-common.h>	/* MAP_CHGPROT, in the patched uapi */
#ifndef MAP_CHGPROT
#define MAP_CHGPROT	0x200000	/* plain headers: the series' value */
#endif

#define NPAGES	8

static long psz;
static char *area;			/* the mapping, NPAGES pages */
static int fd;				/* the memfd behind it */
static int collapsed = -1;		/* MAP_CHGPROT worked: 1; EINVAL: 0 */
static int bad;				/* anything unlike the documentation */
static sigjmp_buf jmp;
static volatile int fault_code;
static void *volatile fault_addr;

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("UNEXPECTED: %s\n", what);
		bad = 1;
	}
}

/* Page @page of the mapping shows file page @pgoff with protection @prot. */
static void set_page(int page, int prot, long pgoff, const char *name)
{
	char *addr = area + page * psz;
	int err;

	if (collapsed) {
		if (!remap_file_pages(addr, psz, prot, pgoff, MAP_CHGPROT)) {
			collapsed = 1;
			printf("page %d: remap_file_pages(MAP_CHGPROT): %s, file page %ld\n",
			       page, name, pgoff);
			return;
		}
		err = errno;
		printf("remap_file_pages(MAP_CHGPROT): %s\n", strerror(err));
		/* only EINVAL at the first call means "no MAP_CHGPROT here" */
		if (collapsed > 0 || err != EINVAL) {
			expect(0, "MAP_CHGPROT failed");
			return;
		}
		printf("  not in this kernel (stock, or booted with manyprots=off):\n"
		       "  one mmap(MAP_FIXED) per page instead\n");
		collapsed = 0;
	}
	expect(mmap(addr, psz, prot, MAP_SHARED | MAP_FIXED, fd, pgoff * psz) == addr,
	       "mmap(MAP_FIXED) failed");
	printf("page %d: mmap(MAP_FIXED): %s, file page %ld\n", page, name, pgoff);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	fault_code = si->si_code;
	fault_addr = si->si_addr;
	siglongjmp(jmp, 1);		/* back into access_page() */
}

/*
 * Read page @page, or write @text to it.  The access must fault (SIGSEGV,
 * SEGV_ACCERR, at that address) if and only if @faults; else the page
 * must then hold @text.
 */
static void access_page(int page, int write, const char *text, int faults)
{
	const char *how = write ? "write" : "read ";
	char *p = area + page * psz;

	if (!sigsetjmp(jmp, 1)) {
		if (write) {
			*(volatile char *)p = *text;	/* faults here, or not */
			strcpy(p, text);
		} else {
			(void)*(volatile char *)p;
		}
		printf("%s page %d: \"%s\"\n", how, page, p);
		expect(!faults && !strcmp(p, text), "the access or what it saw");
		return;
	}
	printf("%s page %d: SIGSEGV, si_code %s, si_addr %p%s\n", how, page,
	       fault_code == SEGV_ACCERR ? "SEGV_ACCERR" : "not SEGV_ACCERR",
	       fault_addr, fault_addr == p ? "" : " (not the page)");
	expect(faults && fault_code == SEGV_ACCERR && fault_addr == p,
	       "SIGSEGV with SEGV_ACCERR at the page");
}

/* The VMAs that /proc/self/maps shows over the mapping. */
static int count_vmas(void)
{
	unsigned long lo, hi, start = (unsigned long)area;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    lo >= start && hi <= start + NPAGES * psz)
			n++;
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	char buf[32] = "";
	int i, n;

	setvbuf(stdout, NULL, _IONBF, 0);
	sigaction(SIGSEGV, &sa, NULL);
	psz = sysconf(_SC_PAGESIZE);
	fd = memfd_create("chgprot-example", 0);
	if (fd < 0 || ftruncate(fd, NPAGES * psz))
		area = MAP_FAILED;
	else
		area = mmap(NULL, NPAGES * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (area == MAP_FAILED) {
		perror("memfd, mmap");
		return 1;
	}
	for (i = 0; i < NPAGES; i++)	/* still linear: page i is file page i */
		sprintf(area + i * psz, "file page %d", i);
	printf("%d pages of a memfd, one shared read-write mapping at %p\n", NPAGES, area);

	/*
	 * The first call asks for a protection: a kernel without the feature
	 * ignores the unknown flag and takes prot 0 for "the VMA's own
	 * protection", so a first PROT_NONE call would succeed there.
	 */
	set_page(1, PROT_READ, 1, "PROT_READ");
	set_page(2, PROT_NONE, 2, "PROT_NONE");
	set_page(3, PROT_READ | PROT_WRITE, 6, "PROT_READ|PROT_WRITE");

	access_page(0, 0, "file page 0", 0);
	access_page(1, 0, "file page 1", 0);
	access_page(3, 0, "file page 6", 0);
	access_page(2, 0, NULL, 1);				/* PROT_NONE */
	access_page(3, 1, "written via page 3", 0);
	n = pread(fd, buf, sizeof(buf) - 1, 6 * psz);		/* the file's page 6 */
	printf("pread() of file page 6: \"%s\"\n", buf);
	expect(n > 0 && !strcmp(buf, "written via page 3"), "file page 6");
	access_page(1, 1, "written via page 1", 1);		/* read-only */

	/* collapsed: one VMA, "nl mp" (nonlinear, many prots) in smaps VmFlags */
	n = count_vmas();
	expect(!collapsed || n == 1, "one VMA");
	if (bad)
		printf("result: FAILED\n");
	else
		printf("result: %s: %d VMA%s for %d pages\n", collapsed ?
		       "collapsed, MAP_CHGPROT" : "per-page, mmap(MAP_FIXED) fallback",
		       n, n == 1 ? "" : "s", NPAGES);
	return bad;
}
