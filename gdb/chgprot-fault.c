// SPDX-License-Identifier: GPL-2.0
/*
 * The program the gdb tests and the README's worked example follow: it
 * maps 16 pages of a memfd at a fixed address, shows file page 7 read-only
 * at page 3 with remap_file_pages(MAP_CHGPROT), writes there (SIGSEGV,
 * SEGV_ACCERR), pages the range out (MADV_PAGEOUT: page 3 becomes a
 * SWP_FILE entry) and reads page 3 again (a fault on that entry).
 *
 * usage: chgprot-fault [SYNC_DIR]
 *
 * With SYNC_DIR it writes its pid to SYNC_DIR/ready once the mapping is
 * set up and waits for SYNC_DIR/go before the write, so that a debugger
 * can attach first.  Exit status 0 only if every step did what it should.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asm-generic/mman-common.h>	/* MAP_CHGPROT: the patched uapi */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define AREA	((char *)0x2000000000UL)	/* below UML's 512 GiB too */
#define NPAGES	16
#define PAGE	3
#define PGOFF	7

static sigjmp_buf env;
static volatile siginfo_t got;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	got = *si;
	siglongjmp(env, 1);
}

static int fail(const char *what)
{
	printf("chgprot-fault: FAIL: %s (%s)\n", what, strerror(errno));
	return 1;
}

static int present(const void *p)
{
	uint64_t ent = 0;
	long psz = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	if (pread(fd, &ent, 8, (uintptr_t)p / psz * 8) != 8)
		ent = 0;
	close(fd);
	return !!(ent >> 63);
}

static void wait_for(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (stat(path, &st))
		usleep(10000);
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *page = AREA + PAGE * psz;
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	int fd, i, tries;

	setvbuf(stdout, NULL, _IONBF, 0);
	fd = memfd_create("chgprot-fault", 0);
	if (fd < 0 || ftruncate(fd, NPAGES * psz))
		return fail("memfd");
	if (mmap(AREA, NPAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0) != AREA)
		return fail("mmap at 0x2000000000");
	for (i = 0; i < NPAGES; i++)
		memset(AREA + i * psz, 'a' + i, psz);
	if (remap_file_pages(page, psz, PROT_READ, PGOFF, MAP_CHGPROT))
		return fail("remap_file_pages(MAP_CHGPROT)");
	if (*page != 'a' + PGOFF)
		return fail("page 3 does not show file page 7");
	printf("chgprot-fault: pid %d: page 3 at %p shows file page %d read-only\n",
	       getpid(), page, PGOFF);

	if (argc > 1) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/ready", argv[1]);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			return fail("writing the ready file");
		wait_for(argv[1], "go");
	}

	sigaction(SIGSEGV, &sa, NULL);
	if (!sigsetjmp(env, 1)) {
		*(volatile char *)page = 'W';
		return fail("the write to the read-only page succeeded");
	}
	if (got.si_code != SEGV_ACCERR || got.si_addr != page)
		return fail("SIGSEGV without SEGV_ACCERR at page 3");
	printf("chgprot-fault: write: SIGSEGV SEGV_ACCERR at %p\n", got.si_addr);

	/* reclaim may leave a page in use by a racing access: try again */
	for (tries = 0; tries < 20 && present(page) != 0; tries++)
		if (madvise(AREA, NPAGES * psz, MADV_PAGEOUT))
			return fail("MADV_PAGEOUT");
	if (present(page) != 0)
		return fail("page 3 still present after MADV_PAGEOUT");
	printf("chgprot-fault: paged out after %d MADV_PAGEOUT\n", tries);

	if (*(volatile char *)page != 'a' + PGOFF)
		return fail("page 3 lost file page 7 after page-out");
	printf("chgprot-fault: read after page-out: file page %d, done\n", PGOFF);
	return 0;
}
