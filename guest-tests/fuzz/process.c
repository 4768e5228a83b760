// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz single mode: what a process does to the mappings: its own
 * accesses, the kernel's on its behalf (read() into them, write() from
 * them, process_vm_readv/writev, /proc/self/mem, O_DIRECT), and fork.
 */
#include "single.h"

#include <sys/uio.h>
#include <sys/wait.h>

/* --- accesses --- */

bool op_probe(struct fz *z)
{
	int k = 1 + rnd(z, 4);

	note(z, "probe %d pages", k);
	while (k--) {
		size_t i = pick_page(z);

		if (!cmp_probe(z, i, rnd(z, P_NKINDS)))
			return false;
	}
	return true;
}

enum { K_READ_INTO, K_WRITE_FROM, K_VM_READ, K_VM_WRITE, K_MEM_READ, K_MEM_WRITE,
	K_OD_WRITE_FROM, K_OD_READ_INTO, K_NR };
static const char *const kname[] = {
	"read() into", "write() from", "process_vm_readv() of", "process_vm_writev() to",
	"/proc/self/mem read of", "/proc/self/mem write to", "O_DIRECT write() from",
	"O_DIRECT read() into",
};

/*
 * A kernel access to the mappings, the same on both sides: its result,
 * and what it read, must be the same.  What is written comes from pattern
 * pages at the same offsets in the page, so every 'ret' stays.
 */
bool op_kernel(struct fz *z)
{
	int kind = rnd(z, z->od[SA] >= 0 ? K_NR : K_OD_WRITE_FROM);
	size_t i = pick_page(z), off, len, max;
	ssize_t r[2];
	int e[2];

	if (kind >= K_OD_WRITE_FROM) {
		off = 0;
		len = (1 + rnd(z, 2)) * PS;
	} else {
		off = chance(z, 50) ? rnd(z, PS / 8) * 8 : rnd(z, PS);
		len = chance(z, 30) ? PS - off + 1 + rnd(z, 64) : 1 + rnd(z, 2 * PS);
	}
	/* the small layout has a guard page after it on both sides; far has none */
	max = (z->n + (z->layout == FZ_SMALL)) * PS;
	if (i * PS + off + len > max)
		len = max - i * PS - off;
	if (len > (SRC_PAGES - 1) * PS)
		len = (SRC_PAGES - 1) * PS;
	note(z, "%s page %zu +%#zx, %#zx bytes", kname[kind], i, off, len);
	for (int s = SA; s <= SB; s++) {
		char *p = at(z, s, i) + off;

		errno = 0;
		switch (kind) {
		case K_READ_INTO:
			r[s] = pread(z->scratch, p, len, (off_t)off);
			break;
		case K_WRITE_FROM:
			r[s] = pwrite(z->out[s], p, len, 0);
			break;
		case K_VM_READ:
			r[s] = rfp_vm_rw(p, z->buf[s], len, false);
			break;
		case K_VM_WRITE:
			r[s] = rfp_vm_rw(p, z->src + off, len, true);
			break;
		case K_MEM_READ:
			r[s] = pread(z->mem, z->buf[s], len, (off_t)(uintptr_t)p);
			break;
		case K_MEM_WRITE:
			r[s] = pwrite(z->mem, z->src + off, len, (off_t)(uintptr_t)p);
			break;
		case K_OD_WRITE_FROM:
			r[s] = pwrite(z->od[s], p, len, 0);
			break;
		default:
			r[s] = pread(z->od[s], p, len, 0);
			break;
		}
		e[s] = errno;
	}
	z->st->kernel++;
	more(z, ": A %zd, B %zd", r[SA], r[SB]);
	if (r[SA] != r[SB] || (r[SA] < 0 && e[SA] != e[SB])) {
		char ps[128];

		page_str(z, i, ps, sizeof(ps));
		return fail(z, "%s %s +%#zx, %#zx bytes: A %zd (%s), B %zd (%s)", kname[kind],
			    ps, off, len, r[SA], r[SA] < 0 ? strerror(e[SA]) : "",
			    r[SB], r[SB] < 0 ? strerror(e[SB]) : "");
	}
	if (r[SA] > 0) {
		bool differ = false;

		switch (kind) {
		case K_WRITE_FROM:
		case K_OD_WRITE_FROM:
			for (int s = SA; s <= SB; s++) {
				int fd = kind == K_WRITE_FROM ? z->out[s] : z->odr[s];

				if (pread(fd, z->buf[s], r[s], 0) != r[s])
					return fail(z, "reading back what %s wrote: %s",
						    kname[kind], strerror(errno));
			}
			/* fall through */
		case K_VM_READ:
		case K_MEM_READ:
			differ = memcmp(z->buf[SA], z->buf[SB], r[SA]);
			break;
		}
		if (differ)
			return fail(z, "%s page %zu +%#zx: what was read differs", kname[kind],
				    i, off);
	}
	return check_some(z, i, (off + len + PS - 1) / PS > z->n - i ? z->n - i :
			  (off + len + PS - 1) / PS, 2);
}

/* --- fork --- */

/*
 * The child carries on with the sequence for a while on its own copy of
 * the model (its address space is its own; the files are shared, and
 * change the same on both sides), then checks everything and exits.
 */
bool op_fork(struct fz *z)
{
	int status;
	pid_t pid;

	note(z, "fork");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail(z, "fork: %s", strerror(errno));
	if (!pid) {
		z->depth = 1;
		z->rng ^= 0x9e3779b97f4a7c15ULL * (z->opi + 1);
		/* memory locks are not inherited across fork */
		for (size_t i = 0; i < z->n; i++)
			z->pg[i].locked = 0;
		close(z->mem);
		z->mem = open("/proc/self/mem", O_RDWR);
		if (z->mem < 0)
			_exit(2);
		status = run_ops(z, CHILD_OPS) && (note(z, "child: sweep"), sweep(z)) &&
			 files_same(z);
		fflush(stdout);
		_exit(status ? 0 : 1);
	}
	z->st->forks++;
	if (waitpid(pid, &status, 0) != pid)
		return fail(z, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail(z, "the forked child failed (status %#x)", status);
	return check_some(z, 0, z->n, 2);
}
