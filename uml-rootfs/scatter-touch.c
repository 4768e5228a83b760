// SPDX-License-Identifier: GPL-2.0
/*
 * Workload run inside UML for uml-rootfs/hostmm-check, which watches UML's
 * host processes from the QEMU guest while this runs.
 *
 * usage: scatter-touch N READY DONE [WAIT_SECONDS]
 *
 * First three probe pages: one read-only page holding a marker string
 * (written, then mprotect(PROT_READ)), one PROT_NONE page (written, then
 * mprotect(PROT_NONE)) and one page written now and munmap()ed once the
 * rest is done.  The host must refuse to write the first and to read the
 * other two.
 *
 * Then N anonymous pages, each written once in a shuffled order: UML maps
 * them into its host process one by one, in no order the host could merge
 * into fewer VMAs.  Per-page host memory needs one host VMA each (and UML
 * kills this process past the host's vm.max_map_count: the progress lines
 * on stdout say how far it got); collapsed host memory needs none.
 *
 * Then it writes "ready PID RO_ADDR NONE_ADDR GONE_ADDR N MARKER" to READY
 * (atomically, by rename) and waits until the file DONE exists, at most
 * WAIT_SECONDS (default 300), so that the checker can look at the host
 * process in the meantime.  Exit status: 0 once DONE appeared, 1 on a
 * usage or set-up error, 2 if the N pages could not be mapped, 3 if DONE
 * did not appear in time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_EVERY 10000

static uint64_t rng_state;

/* xorshift64*: cheap, and the order only has to defeat VMA merging */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned long n, wait_s, i;
	char marker[128], line[512], tmp[4096];
	uint32_t *order;
	volatile char *m;	/* every write must happen */
	char *probe;
	FILE *f;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: scatter-touch N READY DONE [WAIT_SECONDS]\n");
		return 1;
	}
	n = strtoul(argv[1], NULL, 0);
	wait_s = argc > 4 ? strtoul(argv[4], NULL, 0) : 300;
	if (n == 0 || n > UINT32_MAX) {
		fprintf(stderr, "scatter-touch: N must be 1 to %u\n", UINT32_MAX);
		return 1;
	}
	rng_state = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	/* unique, so that only this process's host process holds it */
	snprintf(marker, sizeof(marker), "hostmm marker pid %d token %016llx",
		 getpid(), (unsigned long long)rng());

	probe = mmap(NULL, 3 * psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED) {
		perror("scatter-touch: mmap of the probe pages");
		return 1;
	}
	strcpy(probe, marker);
	memset(probe + psz, 0x5a, psz);
	memset(probe + 2 * psz, 0xa5, psz);
	if (mprotect(probe, psz, PROT_READ) || mprotect(probe + psz, psz, PROT_NONE)) {
		perror("scatter-touch: mprotect of the probe pages");
		return 1;
	}

	order = malloc(n * sizeof(*order));
	if (!order) {
		fprintf(stderr, "scatter-touch: no memory for the order of %lu pages\n", n);
		return 1;
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		unsigned long j = rng() % (i + 1);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	m = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if ((void *)m == MAP_FAILED) {
		printf("scatter-touch: mmap of %lu pages failed: %s; nothing touched\n",
		       n, strerror(errno));
		return 2;
	}
	printf("scatter-touch: pid %d touching %lu pages in shuffled order\n", getpid(), n);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		m[(size_t)order[i] * psz] = 1;
		if ((i + 1) % PROGRESS_EVERY == 0) {
			printf("scatter-touch: touched %lu of %lu\n", i + 1, n);
			fflush(stdout);
		}
	}
	printf("scatter-touch: all %lu pages touched\n", n);

	/*
	 * Unmapped only now, when nothing else will be mapped, so that no
	 * later mapping can take its place; a read keeps the marker page
	 * mapped on the host side.
	 */
	if (munmap(probe + 2 * psz, psz)) {
		perror("scatter-touch: munmap of the third probe page");
		return 1;
	}
	if (strcmp(probe, marker)) {
		printf("scatter-touch: the read-only page lost its marker\n");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
	snprintf(line, sizeof(line), "ready %d %p %p %p %lu %s\n", getpid(),
		 (void *)probe, (void *)(probe + psz), (void *)(probe + 2 * psz), n, marker);
	f = fopen(tmp, "w");
	if (!f || fputs(line, f) == EOF || fclose(f) || rename(tmp, argv[2])) {
		perror("scatter-touch: writing the ready file");
		return 1;
	}
	printf("scatter-touch: %s", line);
	fflush(stdout);

	for (i = 0; i < wait_s * 5; i++) {
		if (access(argv[3], F_OK) == 0) {
			printf("scatter-touch: done\n");
			return 0;
		}
		sleep_ms(200);
	}
	printf("scatter-touch: %s did not appear within %lus\n", argv[3], wait_s);
	return 3;
}
