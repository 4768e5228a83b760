/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the UML workload programs (uml-touch, uml-bigfork) share: the
 * clock, the shuffled page order that keeps UML from mapping neighbours
 * with one host call, and the wait for the sampler outside UML.  Each
 * program is built alone (bench/run: one static binary per .c file).
 */
#ifndef UML_WORKLOAD_H
#define UML_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* 0..n-1 in a shuffled order, the same each run (xorshift64); NULL if out of memory */
static inline size_t *shuffled_order(size_t n)
{
	size_t *order = malloc(n * sizeof(*order));
	unsigned long long x = 88172645463325252ull;

	if (!order)
		return NULL;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

/* the number in FILE (the sampler's count of samples); -1 if unreadable */
static inline long read_count(const char *file)
{
	FILE *f = fopen(file, "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* until the sampler (its count in FILE) has taken two more samples, at most 120 s */
static inline void wait_two_samples(const char *file)
{
	struct timespec tick = { 0, 100000000 };
	long first = read_count(file);

	for (int i = 0; i < 1200 && first >= 0 && read_count(file) < first + 2; i++)
		nanosleep(&tick, NULL);
}

#endif
