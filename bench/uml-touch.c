// SPDX-License-Identifier: GPL-2.0
/*
 * Workload for the UML VMA count: map ARG1 MiB of anonymous memory, touch
 * its pages in a shuffled order (so UML maps them into its host process one
 * by one, in no mergeable order), then hold them for ARG2 seconds while the
 * guest samples /proc/PID/maps of UML's host processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 16;
	unsigned int hold = argc > 2 ? strtoul(argv[2], NULL, 0) : 3;
	long psz = sysconf(_SC_PAGESIZE);
	size_t n = mib * 1024 * 1024 / psz;
	size_t *order = malloc(n * sizeof(*order));
	char *m = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!order || m == MAP_FAILED) {
		perror("uml-touch");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	srand(1);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rand() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		m[order[i] * psz] = 1;
	printf("uml-touch: %zu pages touched, holding %us\n", n, hold);
	fflush(stdout);
	sleep(hold);
	return 0;
}
