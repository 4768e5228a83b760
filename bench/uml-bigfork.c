// SPDX-License-Identifier: GPL-2.0
/*
 * UML workload (bigfork): a process grows to each MIB of the list in turn
 * (one private anonymous area, populated page by page in shuffled order
 * with MADV_POPULATE_WRITE, which takes no guest fault per page; in
 * address order, the pages would get consecutive frames of UML's physical
 * memory, and UML would map runs of them with one host call and, in the
 * per-page mode, one host VMA, as a long-lived process rarely has them)
 * and at each size forks CHILDREN children
 * one after another, each writing one page and exiting.  UML maps every
 * present page of the parent again into a child's host process when it
 * first runs, and unmaps them all at its exit, so a child's fork + exit +
 * waitpid() grows with the parent's size, by one host mapping call per
 * page run and, in the per-page mode, one host VMA per page.  Each size
 * is announced in PHASEFILE ("bigfork-MIB", for the sampler outside UML,
 * through hostfs), and at each size the parent then waits until the
 * sampler (its count of samples: COUNTFILE) has taken two more samples.
 *
 * usage: uml-bigfork CHILDREN PHASEFILE COUNTFILE MIB...
 * prints one line per MIB: "bigfork-MIB fork_ms=SUM fork_us=MEDIAN populate_ms=P"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uml-workload.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void phase(const char *file, const char *mib)
{
	FILE *f = fopen(file, "w");

	if (f) {
		fprintf(f, "bigfork-%s\n", mib);
		fclose(f);
	}
}

/* MADV_POPULATE_WRITE each of the N pages at P once, in shuffled order */
static int populate_shuffled(char *p, size_t n, long psz)
{
	size_t *order = shuffled_order(n);

	if (!order) {
		perror("uml-bigfork");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (madvise(p + order[i] * psz, psz, MADV_POPULATE_WRITE)) {
			perror("uml-bigfork: MADV_POPULATE_WRITE");
			free(order);
			return 1;
		}
	}
	free(order);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE), children = argc > 1 ? atol(argv[1]) : 0;
	size_t max = 0, done = 0;
	double *t;
	char *m;

	for (int i = 4; i < argc; i++) {
		size_t mib = strtoul(argv[i], NULL, 0);

		if (!mib || mib * 1024 * 1024 < done) {
			children = 0;
			break;
		}
		done = max = mib * 1024 * 1024;
	}
	if (argc < 5 || children <= 0) {
		fprintf(stderr, "usage: uml-bigfork CHILDREN PHASEFILE COUNTFILE MIB... "
			"(MIB ascending)\n");
		return 2;
	}
	t = calloc(children, sizeof(*t));
	m = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t || m == MAP_FAILED) {
		perror("uml-bigfork");
		return 1;
	}
	done = 0;
	for (int a = 4; a < argc; a++) {
		size_t size = strtoul(argv[a], NULL, 0) * 1024 * 1024;
		double t0, sum = 0, pop;

		phase(argv[2], argv[a]);
		t0 = now_ms();
		if (size > done && populate_shuffled(m + done, (size - done) / psz, psz))
			return 1;
		done = size;
		pop = now_ms() - t0;
		for (long i = 0; i < children; i++) {
			int st;
			pid_t pid;

			t0 = now_ms();
			pid = fork();
			if (pid < 0) {
				perror("uml-bigfork: fork");
				return 1;
			}
			if (pid == 0) {
				m[(size_t)i * 7919 * psz % size] = 2;
				_exit(0);
			}
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "uml-bigfork: child %ld failed (%#x)\n", i, st);
				return 1;
			}
			t[i] = now_ms() - t0;
			sum += t[i];
		}
		qsort(t, children, sizeof(*t), cmp_double);
		printf("bigfork-%s fork_ms=%.0f fork_us=%.0f populate_ms=%.0f\n", argv[a], sum,
		       (children % 2 ? t[children / 2] :
			(t[children / 2 - 1] + t[children / 2]) / 2) * 1e3, pop);
		fflush(stdout);
		wait_two_samples(argv[3]);
	}
	return 0;
}
