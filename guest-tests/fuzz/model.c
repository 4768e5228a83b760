// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: the record of operations, reports, and the model
 * of the tracked pages that both sides follow.
 */
#include "single.h"

#include <stdarg.h>
#include <sys/stat.h>

/* --- the record of operations, reports --- */

/* Start the record of an operation, in the ring of the last ones. */
void note(struct fz *z, const char *fmt, ...)
{
	va_list ap;
	int n;

	z->cur = z->ring[z->nring++ % RING];
	if (z->depth)
		n = snprintf(z->cur, sizeof(z->ring[0]), "op %ld.%ld (child): ", z->opi, z->subi);
	else
		n = snprintf(z->cur, sizeof(z->ring[0]), "op %ld: ", z->opi);
	va_start(ap, fmt);
	vsnprintf(z->cur + n, sizeof(z->ring[0]) - n, fmt, ap);
	va_end(ap);
}

/* Add to the current record. */
void more(struct fz *z, const char *fmt, ...)
{
	size_t len = strlen(z->cur);
	va_list ap;

	if (len >= sizeof(z->ring[0]) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(z->cur + len, sizeof(z->ring[0]) - len, fmt, ap);
	va_end(ap);
}

const char *layout_name(int l)
{
	return l == FZ_FAR ? "far" : l == FZ_MIXED ? "mixed" : "small";
}

/*
 * The model and what pagemap says, for minimising: page:pgoff/prot, then
 * L mlocked, then A and B presence (p present, s swapped, - neither).
 */
static void dump(struct fz *z)
{
	uint64_t pm[2][NMAX];
	char line[160];
	size_t len = 0;
	bool have = !rfp_pagemap(z->map[0], z->n, pm[0]) &&
		    !rfp_pagemap(z->map[1], z->n, pm[1]);

	fz_say(z->o, "model: VMA %s, linear page 0 = %#lx, file %lu pages; "
	       "page:pgoff/prot[L] A,B presence", fz_prot_str(z->vprot), z->lin0,
	       (unsigned long)(lseek(z->fd[0], 0, SEEK_END) / PS));
	for (size_t i = 0; i < z->n; i++) {
		const struct fpage *p = &z->pg[i];
		char pa = '?', pb = '?';

		if (have) {
			pa = pm[0][i] & RFP_PM_PRESENT ? 'p' : pm[0][i] & RFP_PM_SWAP ? 's' : '-';
			pb = pm[1][i] & RFP_PM_PRESENT ? 'p' : pm[1][i] & RFP_PM_SWAP ? 's' : '-';
		}
		if (p->mapped)
			len += snprintf(line + len, sizeof(line) - len, " %zu:%#lx/%s%s%c%c", i,
					p->pgoff, fz_prot_str(p->prot), p->locked ? "L" : "",
					pa, pb);
		else
			len += snprintf(line + len, sizeof(line) - len, " %zu:unmapped", i);
		if (len > 100 || i == z->n - 1) {
			fz_say(z->o, " %s", line);
			len = 0;
		}
	}
}

/*
 * A difference the documentation does not explain, but which leaves both
 * sides the same: said once with its operations, counted, and the run
 * goes on (fz_single() fails at the end unless --lenient).
 */
void note_diff(struct fz *z, int kind, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	if (z->notes[kind]++)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fz_say(z->o, "NOTE: seed %#llx, op %ld%s: %s (counted; the run goes on)",
	       (unsigned long long)z->o->seed, z->opi, z->depth ? " (child)" : "", msg);
	for (long k = z->nring > 8 ? z->nring - 8 : 0; k < z->nring; k++)
		fz_say(z->o, "  %s", z->ring[k % RING]);
}

/* Report a mismatch once, with the operations that led to it; false. */
bool fail(struct fz *z, const char *fmt, ...)
{
	const struct fz_opts *o = z->o;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (z->failed)
		return false;
	z->failed = true;
	fz_say(o, "MISMATCH: seed %#llx, op %ld%s: %s", (unsigned long long)o->seed,
	       z->opi, z->depth ? " (in the child it forked)" : "", msg);
	fz_say(o, "last operations (A: the MAP_CHGPROT VMA, B: one mmap per page):");
	for (long k = z->nring > RING ? z->nring - RING : 0; k < z->nring; k++)
		fz_say(o, "  %s", z->ring[k % RING]);
	dump(z);
	fz_say(o, "replay: rfp_fuzz --seed %#llx --ops %ld --layout %s --hwpoison %d",
	       (unsigned long long)o->seed, z->opi + 1, layout_name(o->layout),
	       o->hwpoison);
	return false;
}

/* --- the model --- */

/* The protection B gets: what the documentation says A enforces. */
int norm(struct fz *z, int prot)
{
	if (prot & (PROT_WRITE | PROT_EXEC))
		prot |= PROT_READ;
	if (z->uml && (prot & PROT_READ))
		prot |= PROT_EXEC;	/* UML cannot tell read from exec */
	return prot;
}

bool allows(struct fz *z, int prot, enum rfp_access a)
{
	return rfp_allows_here(norm(z, prot), a);
}

/* A file page whose contents the files are compared on. */
unsigned long interest(struct fz *z)
{
	if (z->layout == FZ_FAR)
		return chance(z, 50) ? rnd(z, FAR_LOW) : z->lin0 + rnd(z, z->n);
	return rnd(z, z->fpages);
}

size_t pick_page(struct fz *z)
{
	return chance(z, 35) ? z->hot : rnd(z, z->n);
}

/* A count of pages from s, within the tracked ones. */
size_t pick_np(struct fz *z, size_t s)
{
	unsigned long r = rnd(z, 100);
	size_t np = r < 50 ? 1 : r < 85 ? 2 + rnd(z, 3) : 1 + rnd(z, z->n - s);

	return np > z->n - s ? z->n - s : np;
}

/* How many mapped pages follow s (s included), at most max. */
size_t mapped_run(struct fz *z, size_t s, size_t max)
{
	size_t k = 0;

	while (s + k < z->n && k < max && z->pg[s + k].mapped)
		k++;
	return k;
}

bool is_poisoned(struct fz *z, unsigned long pgoff)
{
	for (int k = 0; k < z->npoisoned; k++)
		if (z->poisoned[k] == pgoff)
			return true;
	return false;
}

/* The file pages [from, to) were punched or truncated: fresh pages now. */
void forget_poisoned(struct fz *z, unsigned long from, unsigned long to)
{
	int k = 0;

	while (k < z->npoisoned) {
		if (z->poisoned[k] >= from && z->poisoned[k] < to)
			z->poisoned[k] = z->poisoned[--z->npoisoned];
		else
			k++;
	}
}

/*
 * Does B's page i hold a hwpoison entry?  Truncation may leave one in
 * the page table after the poisoned page left the file; on B's file
 * mappings pagemap shows no other swap entry.
 */
bool poison_entry(struct fz *z, size_t i)
{
	uint64_t pm;

	if (rfp_pagemap(z->map[SB] + i * PS, 1, &pm))
		return false;
	return !(pm & (1ULL << 63)) && (pm & (1ULL << 62));
}

unsigned long file_pages_now(struct fz *z)
{
	struct stat sb;

	if (fstat(z->fd[SA], &sb))
		return 0;
	return sb.st_size / PS;
}

/*
 * Is an exec probe safe on page i?  Only where both files hold the 'ret'
 * of the pattern at RFP_OFF_X, or nothing that could run (past EOF, an
 * unreadable page): a page of zeros would be executed on.
 */
bool x_safe(struct fz *z, size_t i)
{
	unsigned char c;

	if (!z->pg[i].mapped)
		return true;
	for (int s = SA; s <= SB; s++) {
		off_t off = (off_t)(z->pg[i].pgoff * PS + RFP_OFF_X);

		if (off < 0)
			continue;
		if (pread(z->fd[s], &c, 1, off) == 1 && c != 0xc3)
			return false;
	}
	return true;
}
