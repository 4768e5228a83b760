// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: the files under the mappings: pwrite(), hole
 * punching and truncation, the same on both files.
 */
#include "single.h"

bool op_file_write(struct fz *z)
{
	unsigned long p = interest(z);
	unsigned int g = rnd(z, 8);
	ssize_t r[2];
	int e[2];

	note(z, "pwrite file page %#lx, generation %u", p, g);
	rfp_pattern(z->buf[SA], p, g);
	for (int s = SA; s <= SB; s++) {
		errno = 0;
		r[s] = pwrite(z->fd[s], z->buf[SA], PS, (off_t)(p * PS));
		e[s] = errno;
	}
	if (r[SA] != r[SB] || (r[SA] < 0 && e[SA] != e[SB]))
		return fail(z, "pwrite of file page %#lx: A %zd (%s), B %zd (%s)", p,
			    r[SA], strerror(e[SA]), r[SB], strerror(e[SB]));
	return check_some(z, 0, z->n, 2);
}

bool op_punch(struct fz *z)
{
	unsigned long p = interest(z), k = 1 + rnd(z, 3);
	int r[2], e[2];

	note(z, "punch file pages %#lx-%#lx", p, p + k - 1);
	for (int s = SA; s <= SB; s++) {
		errno = 0;
		r[s] = fallocate(z->fd[s], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 (off_t)(p * PS), (off_t)(k * PS));
		e[s] = errno;
	}
	if (r[SA] != r[SB] || (r[SA] && e[SA] != e[SB]))
		return fail(z, "punch: A %d (%s), B %d (%s)", r[SA], strerror(e[SA]),
			    r[SB], strerror(e[SB]));
	if (!r[SA])
		forget_poisoned(z, p, p + k);
	return check_some(z, 0, z->n, 3);
}

bool op_truncate(struct fz *z)
{
	unsigned long cur = file_pages_now(z), to;
	int r[2], e[2];

	if (cur < z->fpages && chance(z, 50))
		to = z->fpages;
	else if (z->layout == FZ_FAR)
		to = chance(z, 50) ? rnd(z, FAR_LOW) : z->lin0 + rnd(z, z->n);
	else
		to = rnd(z, z->fpages);
	note(z, "ftruncate to %#lx pages (from %#lx)", to, cur);
	for (int s = SA; s <= SB; s++) {
		errno = 0;
		r[s] = ftruncate(z->fd[s], (off_t)(to * PS));
		e[s] = errno;
	}
	if (r[SA] != r[SB] || (r[SA] && e[SA] != e[SB]))
		return fail(z, "ftruncate: A %d (%s), B %d (%s)", r[SA], strerror(e[SA]),
			    r[SB], strerror(e[SB]));
	if (!r[SA])
		forget_poisoned(z, to, ~0UL);
	return check_some(z, 0, z->n, 3);
}
