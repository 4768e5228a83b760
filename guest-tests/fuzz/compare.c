// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: the observer.  Every access is made on both sides
 * and its outcome compared (data, signal, si_code, address); a sweep reads
 * every page whole, directly and through /proc/self/mem, and checks the
 * A VMA in /proc/self/maps and smaps; the two files are compared.
 */
#include "single.h"

#include <sys/stat.h>

/* --- probes compared --- */

static const char *const pkind_name[] = { "read", "write8", "write64", "exec" };

struct obs {
	int code;	/* as rfp_try(): 0, the SEGV si_code, -SIGBUS */
	int si;		/* the raw si_code */
	long where;	/* the fault address from the page, if it faulted */
	uint64_t v;	/* what a read gave */
};

static void obs_str(const struct obs *o, bool read, char *s, size_t len)
{
	if (!o->code && read)
		snprintf(s, len, "ok %#llx", (unsigned long long)o->v);
	else if (!o->code)
		snprintf(s, len, "ok");
	else if (o->code == -SIGBUS)
		snprintf(s, len, "SIGBUS si_code %d at +%#lx", o->si, o->where);
	else
		snprintf(s, len, "SIGSEGV %s at +%#lx",
			 o->code == SEGV_ACCERR ? "SEGV_ACCERR" :
			 o->code == SEGV_MAPERR ? "SEGV_MAPERR" : "si_code?", o->where);
	if (o->code && o->code != -SIGBUS && o->code != SEGV_ACCERR &&
	    o->code != SEGV_MAPERR)
		snprintf(s, len, "SIGSEGV si_code %d at +%#lx", o->si, o->where);
}

static void probe(struct fz *z, int side, size_t i, enum pkind k, size_t off,
		  uint64_t wv, struct obs *o)
{
	char *p = at(z, side, i);

	memset(o, 0, sizeof(*o));
	switch (k) {
	case P_READ:
		o->code = fz_load64(p + off, &o->v);
		break;
	case P_WRITE8:
		o->code = fz_store8(p + off, (unsigned char)wv);
		break;
	case P_WRITE64:
		o->code = fz_store64(p + off, wv);
		break;
	default:
		o->code = fz_try(p + RFP_OFF_X, RFP_EXEC);
		break;
	}
	if (o->code) {
		o->si = rfp_si_code;
		o->where = (char *)rfp_fault_addr - p;
	}
}

void page_str(struct fz *z, size_t i, char *s, size_t len)
{
	const struct fpage *p = &z->pg[i];

	if (!p->mapped)
		snprintf(s, len, "page %zu (unmapped)", i);
	else
		snprintf(s, len, "page %zu (pgoff %#lx%s, %s%s%s)", i, p->pgoff,
			 p->pgoff == linear(z, i) ? " linear" : "",
			 fz_prot_str(p->prot), p->locked ? ", mlocked" : "",
			 is_poisoned(z, p->pgoff) ? ", poisoned" : "");
}

/* One access of kind k to page i on both sides; false on a mismatch. */
bool cmp_probe(struct fz *z, size_t i, enum pkind k)
{
	struct obs a, b;
	size_t off = 0, w;
	uint64_t wv = 0;
	char sa[96], sb[96], ps[128];

	switch (k) {
	case P_READ:
		off = chance(z, 50) ? RFP_OFF_ID : rnd(z, RFP_WORDS) * 8;
		break;
	case P_WRITE8:
		off = chance(z, 50) ? RFP_OFF_W : rnd(z, PS);
		if (off == RFP_OFF_X)
			off = RFP_OFF_W;	/* the 'ret' stays */
		wv = R(z) & 0xff;
		break;
	case P_WRITE64:
		w = rnd(z, RFP_WORDS - 1);
		if (w >= RFP_OFF_X / 8)
			w++;
		off = w * 8;
		wv = rfp_word(interest(z), w, rnd(z, 4));
		break;
	default:
		if (!x_safe(z, i))
			return true;
		off = RFP_OFF_X;
		break;
	}
	probe(z, SA, i, k, off, wv, &a);
	probe(z, SB, i, k, off, wv, &b);
	z->st->probes++;
	if (a.code && b.code)
		z->st->denied++;
	/*
	 * A forbidden exec: the documentation wants SEGV_ACCERR whether the
	 * page is present or not.  Stock x86 checks VM_EXEC only once the
	 * page is present (access_error()), so the reference may first fail
	 * to fault it in (SIGBUS past EOF or on poison): A may do as
	 * documented or as the reference.
	 */
	if (k == P_EXEC && z->pg[i].mapped && !allows(z, z->pg[i].prot, RFP_EXEC) &&
	    b.code == -SIGBUS) {
		if ((a.code == SEGV_ACCERR && a.where == (long)off) ||
		    (a.code == b.code && a.si == b.si && a.where == b.where))
			return true;
		obs_str(&a, false, sa, sizeof(sa));
		page_str(z, i, ps, sizeof(ps));
		return fail(z, "%s: exec at +%#zx: A %s; its protection forbids it, so the "
			    "documentation says SEGV_ACCERR", ps, off, sa);
	}
	if (a.code == b.code && a.si == b.si && a.where == b.where &&
	    (a.code || k != P_READ || a.v == b.v))
		return true;
	obs_str(&a, k == P_READ, sa, sizeof(sa));
	/*
	 * A forbidden read or write of a page past EOF: SIGBUS on A, while
	 * the documentation says SEGV_ACCERR "whether the page is present or
	 * not", as the reference gives.
	 */
	if (k != P_EXEC && b.code == SEGV_ACCERR && a.code == -SIGBUS && a.si == BUS_ADRERR &&
	    a.where == b.where && z->pg[i].mapped && z->pg[i].pgoff >= file_pages_now(z)) {
		page_str(z, i, ps, sizeof(ps));
		note_diff(z, NOTE_EOF_SIGBUS, "%s, past EOF: %s forbidden by its protection: A "
			  "%s, the reference and the documentation SEGV_ACCERR", ps,
			  pkind_name[k], sa);
		return true;
	}
	obs_str(&b, k == P_READ, sb, sizeof(sb));
	page_str(z, i, ps, sizeof(ps));
	return fail(z, "%s: %s at +%#zx: A %s, B %s", ps, pkind_name[k], off, sa, sb);
}

/* A few accesses of random kinds to pages of [s, s + k). */
bool check_some(struct fz *z, size_t s, size_t k, int probes)
{
	for (int j = 0; j < probes && k; j++)
		if (!cmp_probe(z, s + rnd(z, k), rnd(z, P_NKINDS)))
			return false;
	return true;
}

/* Every kind of access, in a random order, to each page of [s, s + k). */
bool check_all(struct fz *z, size_t s, size_t k)
{
	static const enum pkind order[][3] = {
		{ P_READ, P_WRITE8, P_EXEC }, { P_WRITE8, P_READ, P_EXEC },
		{ P_EXEC, P_WRITE64, P_READ }, { P_WRITE64, P_EXEC, P_READ },
	};

	for (size_t i = s; i < s + k && i < z->n; i++) {
		const enum pkind *ord = order[rnd(z, 4)];

		for (int j = 0; j < 3; j++)
			if (!cmp_probe(z, i, ord[j]))
				return false;
	}
	return true;
}

/* --- whole comparisons --- */

/* Each tracked A page's maps permissions ("none": no VMA) and VMA start. */
static int read_maps(struct fz *z, char perms[][5], unsigned long *vstart)
{
	unsigned long s, e, lo = (unsigned long)z->map[SA];
	unsigned long hi = lo + z->n * PS;
	char line[512], p[5];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	for (size_t i = 0; i < z->n; i++)
		strcpy(perms[i], "none");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &s, &e, p) != 3 || e <= lo || s >= hi)
			continue;
		for (unsigned long a = s > lo ? s : lo; a < e && a < hi; a += PS) {
			memcpy(perms[(a - lo) / PS], p, 5);
			vstart[(a - lo) / PS] = s;
		}
	}
	fclose(f);
	return 0;
}

/*
 * The A VMA as /proc/self/maps and smaps show it: the VMA's own
 * protection on every mapped page, no VMA where pages were unmapped,
 * "nl" and "mp" once converted.
 */
static bool check_vmas(struct fz *z)
{
	char perms[NMAX][5], want[5];
	unsigned long vstart[NMAX], last = 0;

	snprintf(want, sizeof(want), "%c%c%cs", z->vprot & PROT_READ ? 'r' : '-',
		 z->vprot & PROT_WRITE ? 'w' : '-', z->vprot & PROT_EXEC ? 'x' : '-');
	if (read_maps(z, perms, vstart))
		return fail(z, "cannot read /proc/self/maps");
	for (size_t i = 0; i < z->n; i++) {
		if (!z->pg[i].mapped) {
			if (strcmp(perms[i], "none"))
				return fail(z, "page %zu was unmapped, maps shows %s", i, perms[i]);
			continue;
		}
		if (strcmp(perms[i], want))
			return fail(z, "page %zu: maps shows %s, the VMA was mapped %s",
				    i, perms[i], want);
		if (vstart[i] == last)
			continue;
		last = vstart[i];
		if (rfp_vmflag((void *)last, "nl") != 1 || rfp_vmflag((void *)last, "mp") != 1)
			return fail(z, "the A VMA at %#lx (page %zu) lacks nl or mp in smaps",
				    last, i);
	}
	return true;
}

/* Every page: probes, its whole contents, its /proc/self/mem contents. */
bool sweep(struct fz *z)
{
	uint64_t *ba = (uint64_t *)z->buf[SA], *bb = (uint64_t *)z->buf[SB];
	char ps[128];

	z->st->sweeps++;
	if (!check_all(z, 0, z->n))
		return false;
	for (size_t i = 0; i < z->n; i++) {
		int ca = fz_copy(ba, at(z, SA, i), PS);
		long wa = ca ? (char *)fz_copy_addr() - at(z, SA, i) : 0;
		int sia = fz_copy_si_code();
		int cb = fz_copy(bb, at(z, SB, i), PS);
		long wb = cb ? (char *)fz_copy_addr() - at(z, SB, i) : 0;
		ssize_t ra, rb;
		int ea, eb;

		page_str(z, i, ps, sizeof(ps));
		if (ca != cb || wa != wb || (ca && sia != fz_copy_si_code()))
			return fail(z, "%s: reading it whole: A code %d at +%#lx, B code %d at +%#lx",
				    ps, ca, wa, cb, wb);
		if (!ca && memcmp(ba, bb, PS))
			return fail(z, "%s: contents differ: A word 0 %#llx, B %#llx",
				    ps, (unsigned long long)ba[0], (unsigned long long)bb[0]);
		errno = 0;
		ra = pread(z->mem, ba, PS, (off_t)(uintptr_t)at(z, SA, i));
		ea = errno;
		errno = 0;
		rb = pread(z->mem, bb, PS, (off_t)(uintptr_t)at(z, SB, i));
		eb = errno;
		if (ra != rb || (ra < 0 && ea != eb))
			return fail(z, "%s: /proc/self/mem read: A %zd (%s), B %zd (%s)",
				    ps, ra, strerror(ea), rb, strerror(eb));
		if (ra > 0 && memcmp(ba, bb, ra))
			return fail(z, "%s: /proc/self/mem contents differ: A word 0 %#llx, B %#llx",
				    ps, (unsigned long long)ba[0], (unsigned long long)bb[0]);
	}
	return z->depth || check_vmas(z);
}

/* Both files, page by page where they matter, and their sizes. */
bool files_same(struct fz *z)
{
	unsigned char *ba = z->buf[SA], *bb = z->buf[SB];
	struct stat sa, sb;
	unsigned long lo_end = z->layout == FZ_FAR ? FAR_LOW : z->fpages;
	unsigned long total = lo_end + (z->layout == FZ_FAR ? z->n : 0);

	if (fstat(z->fd[SA], &sa) || fstat(z->fd[SB], &sb))
		return fail(z, "fstat: %s", strerror(errno));
	if (sa.st_size != sb.st_size)
		return fail(z, "file sizes differ: A %lld, B %lld",
			    (long long)sa.st_size, (long long)sb.st_size);
	for (unsigned long k = 0; k < total; k++) {
		unsigned long p = k < lo_end ? k : z->lin0 + (k - lo_end);
		ssize_t ra, rb;
		int ea, eb;

		errno = 0;
		ra = pread(z->fd[SA], ba, PS, (off_t)(p * PS));
		ea = errno;
		errno = 0;
		rb = pread(z->fd[SB], bb, PS, (off_t)(p * PS));
		eb = errno;
		if (ra != rb || (ra < 0 && ea != eb))
			return fail(z, "file page %#lx: pread: A %zd (%s), B %zd (%s)",
				    p, ra, strerror(ea), rb, strerror(eb));
		if (ra > 0 && memcmp(ba, bb, ra))
			return fail(z, "file page %#lx differs: A word 0 %#llx, B %#llx", p,
				    (unsigned long long)*(uint64_t *)ba,
				    (unsigned long long)*(uint64_t *)bb);
	}
	return true;
}
