// SPDX-License-Identifier: GPL-2.0
/*
 * UML workload: map ARG1 MiB of anonymous memory, touch its pages in a
 * shuffled order (so UML maps them into its host process one by one, in
 * no mergeable order), print how long the touching took, then hold the
 * pages HOLD_MS milliseconds so the sampler outside UML sees them all, and
 * with COUNTFILE (the sampler's count of samples, through hostfs) until it
 * has taken two more samples, at most 120 s.
 *
 * usage: uml-touch MIB [HOLD_MS [COUNTFILE]]   prints "touch_ms=T pages=N"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uml-workload.h"

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	unsigned long hold = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	long psz = sysconf(_SC_PAGESIZE);
	size_t n = mib * 1024 * 1024 / psz, *order;
	struct timespec ts = { hold / 1000, hold % 1000 * 1000000 };
	double t0;
	char *m;

	if (argc < 2 || argc > 4 || !n) {
		fprintf(stderr, "usage: uml-touch MIB [HOLD_MS [COUNTFILE]]\n");
		return 2;
	}
	order = shuffled_order(n);
	m = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!order || m == MAP_FAILED) {
		perror("uml-touch");
		return 1;
	}
	t0 = now_ms();
	for (size_t i = 0; i < n; i++)
		m[order[i] * psz] = 1;
	printf("touch_ms=%.0f pages=%zu\n", now_ms() - t0, n);
	fflush(stdout);
	nanosleep(&ts, NULL);
	if (argc > 3)
		wait_two_samples(argv[3]);
	return 0;
}
