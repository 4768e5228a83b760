// SPDX-License-Identifier: GPL-2.0
/*
 * The protection matrix through the kernel.  In a shared
 * memfd mapping whose default is read-write, three pages get their own file
 * page (never their linear one, so GUP has to follow the nonlinear offset)
 * and protection: RO (read-only), NONE (PROT_NONE) and RW (read-write, the
 * positive control).  Each test drives one kernel path at them: plain
 * copy_{to,from}_user, GUP (process_vm_*, O_DIRECT, vmsplice, futex) and
 * FOLL_FORCE (/proc/self/mem, ptrace).
 *
 * Every test runs twice: "chgprot" builds the pages with MAP_CHGPROT inside
 * the one VMA; "vmas" builds the same layout from one-page mmap()s, which
 * any kernel enforces, so it checks the probes themselves.  Both run only
 * with EXPECT_MANYPROTS=on; elsewhere chgprot checks that MAP_CHGPROT is
 * refused as the spec says, and both SKIP.
 */
#include "rfp.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004	/* 5.6+; never waits for the crng */
#endif

#define NPAGES 8	/* pages of the VMA */
#define FPAGES 16	/* pages of the memfd */
#define SPS ((ssize_t)PS)

enum { RO, NONE, RW, NPG };

/* RO is first: a test's first MAP_CHGPROT call needs prot != 0. */
static const struct {
	size_t idx;		/* page of the VMA */
	unsigned long pgoff;	/* file page it shows */
	int prot;
} pg[NPG] = {
	[RO]   = { 1, 11, PROT_READ },
	[NONE] = { 3, 9, PROT_NONE },
	[RW]   = { 5, 13, PROT_READ | PROT_WRITE },
};

/* Word w of page k's file page, as ptrace sees it. */
static uint64_t word(int k, size_t w)
{
	return rfp_word(pg[k].pgoff, w, 0);
}

/* The futex word at the start of the page that shows file page pgoff. */
static uint32_t futex_word(unsigned long pgoff)
{
	return (uint32_t)rfp_word(pgoff, 0, 0);
}

/* Does the page at p hold page k's file page, as the memfd was filled? */
static bool shows(const void *p, int k)
{
	return !rfp_pattern_bad(p, pg[k].pgoff, 0);
}

/* The same for the memfd's page pgoff, read through the file. */
static bool file_shows(int fd, unsigned long pgoff, int k)
{
	uint64_t b[RFP_WORDS];

	return pread(fd, b, PS, pgoff * PS) == SPS && shows(b, k);
}

/* Is every byte of the page at p equal to v? */
static bool page_is(const void *p, unsigned char v)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < PS; i++)
		if (c[i] != v)
			return false;
	return true;
}

/* The same for the memfd's page pgoff, read through the file. */
static bool file_is(int fd, unsigned long pgoff, unsigned char v)
{
	unsigned char b[PS];

	return pread(fd, b, PS, pgoff * PS) == SPS && page_is(b, v);
}

FIXTURE(matrix) {
	struct rfp_area a;	/* the memfd, a.m the VMA, NPAGES long */
	char *p[NPG];		/* its RO, NONE and RW pages */
	unsigned char *buf;	/* a page of ordinary anonymous memory */
};

FIXTURE_VARIANT(matrix) {
	bool chgprot;
};

FIXTURE_VARIANT_ADD(matrix, chgprot) {
	.chgprot = true,
};

FIXTURE_VARIANT_ADD(matrix, vmas) {
	.chgprot = false,
};

FIXTURE_SETUP(matrix)
{
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, FPAGES, FPAGES,
				   PROT_READ | PROT_WRITE));
	for (int k = 0; k < NPG; k++)
		self->p[k] = self->a.m + pg[k].idx * PS;
	self->buf = mmap(NULL, PS, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	rfp_catch();
}

FIXTURE_TEARDOWN(matrix)
{
	munmap(self->buf, PS);
	rfp_area_close(&self->a);
}

/* Give pages [from, NPG) of map their pgoff and prot, the variant's way. */
static int apply(char *map, int fd, bool chgprot, int from)
{
	for (int k = from; k < NPG; k++) {
		char *a = map + pg[k].idx * PS;

		if (chgprot ? rfp(a, PS, pg[k].prot, pg[k].pgoff, MAP_CHGPROT) :
		    mmap(a, PS, pg[k].prot, MAP_SHARED | MAP_FIXED, fd,
			 pg[k].pgoff * PS) != a)
			return -1;
	}
	return 0;
}

/*
 * Lay the pages out and check by probing that they are what the tests
 * assume, so a kernel path that fails or works is not a layout mistake.
 * false when the test was SKIP()ped.
 */
static bool build(struct __test_metadata *_metadata, FIXTURE_DATA(matrix) *self,
		  const FIXTURE_VARIANT(matrix) *variant)
{
	int from = 0;

	if (variant->chgprot) {
		RFP_FIRST_CHGPROT(return false, self->p[RO], PS, pg[RO].prot,
				  pg[RO].pgoff);
		from = RO + 1;
	} else {
		/* the reference layout of one-page VMAs, for comparison */
		RFP_NEED_MANYPROTS(return false);
	}
	ASSERT_EQ(0, apply(self->a.m, self->a.fd, variant->chgprot, from))
		TH_LOG("laying out: %s", strerror(errno));

	for (int k = 0; k < NPG; k++) {
		char *a = self->p[k] + RFP_OFF_ID;
		bool r = rfp_allows(pg[k].prot, RFP_READ);
		bool w = rfp_allows(pg[k].prot, RFP_WRITE);
		uint64_t v = 0;

		ASSERT_EQ(r ? 0 : SEGV_ACCERR, rfp_try_id(self->p[k], &v))
			TH_LOG("read probe of page %d", k);
		if (r) {
			ASSERT_EQ(rfp_id(pg[k].pgoff, 0), v);
		} else {
			ASSERT_EQ((void *)a, rfp_fault_addr);
		}
		ASSERT_EQ(w ? 0 : SEGV_ACCERR,
			  rfp_try_store(a, rfp_byte(pg[k].pgoff, RFP_OFF_ID, 0)))
			TH_LOG("write probe of page %d", k);
	}
	return true;
}

/* read() copies to user: into the read-only page EFAULT, into RW it works. */
TEST_F(matrix, read_into_ro)
{
	int p[2];

	if (!build(_metadata, self, variant))
		return;
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
	memset(self->buf, 'Q', PS);
	ASSERT_EQ(SPS, write(p[1], self->buf, PS));

	errno = 0;
	EXPECT_EQ(-1, read(p[0], self->p[RO], PS));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_TRUE(shows(self->p[RO], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	EXPECT_EQ(SPS, read(p[0], self->p[RW], PS));
	EXPECT_TRUE(page_is(self->p[RW], 'Q'));
	EXPECT_TRUE(file_is(self->a.fd, pg[RW].pgoff, 'Q'));
	close(p[0]);
	close(p[1]);
}

/* write() copies from user: from PROT_NONE EFAULT, from RO and RW it works. */
TEST_F(matrix, write_from_none)
{
	int p[2];

	if (!build(_metadata, self, variant))
		return;
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));

	errno = 0;
	EXPECT_EQ(-1, write(p[1], self->p[NONE], PS));
	EXPECT_EQ(EFAULT, errno);

	for (int k = RO; k < NPG; k++) {
		if (k == NONE)
			continue;
		EXPECT_EQ(SPS, write(p[1], self->p[k], PS));
		EXPECT_EQ(SPS, read(p[0], self->buf, PS));
		EXPECT_TRUE(shows(self->buf, k)) TH_LOG("page %d", k);
	}
	/* and the failed write put nothing in the pipe */
	errno = 0;
	EXPECT_EQ(-1, read(p[0], self->buf, PS));
	EXPECT_EQ(EAGAIN, errno);
	close(p[0]);
	close(p[1]);
}

/* GUP for read: PROT_NONE EFAULT, read-only works. */
TEST_F(matrix, process_vm_readv)
{
	if (!build(_metadata, self, variant))
		return;
	errno = 0;
	EXPECT_EQ(-1, rfp_vm_rw(self->p[NONE], self->buf, PS, false));
	EXPECT_EQ(EFAULT, errno);

	EXPECT_EQ(SPS, rfp_vm_rw(self->p[RO], self->buf, PS, false));
	EXPECT_TRUE(shows(self->buf, RO));
}

/* GUP for write: read-only EFAULT and unchanged, read-write works. */
TEST_F(matrix, process_vm_writev)
{
	if (!build(_metadata, self, variant))
		return;
	memset(self->buf, 'V', PS);
	errno = 0;
	EXPECT_EQ(-1, rfp_vm_rw(self->p[RO], self->buf, PS, true));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_TRUE(shows(self->p[RO], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	EXPECT_EQ(SPS, rfp_vm_rw(self->p[RW], self->buf, PS, true));
	EXPECT_TRUE(page_is(self->p[RW], 'V'));
	EXPECT_TRUE(file_is(self->a.fd, pg[RW].pgoff, 'V'));
}

/*
 * An unlinked file open with O_DIRECT in the first directory where an
 * O_DIRECT write of an ordinary page (buf) works: tmpfs refuses the flag.
 */
static int direct_file(void *buf, const char **where)
{
	static const char *const dirs[] = { "/var/tmp", "/", "/tmp", "." };
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/rfp_kernel.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd < 0)
			continue;
		unlink(path);
		if (!fcntl(fd, F_SETFL, O_DIRECT) && pwrite(fd, buf, PS, 0) == SPS) {
			*where = dirs[i];
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* O_DIRECT pins the user pages: the same verdicts as process_vm_*. */
TEST_F(matrix, o_direct)
{
	const char *dir;
	int fd;

	if (!build(_metadata, self, variant))
		return;
	fd = direct_file(self->buf, &dir);
	if (fd < 0)
		SKIP(return, "no O_DIRECT write worked in /var/tmp, /, /tmp or the cwd");
	TH_LOG("O_DIRECT file in %s", dir);

	/* file page 0 from RW, file page 1 from RO: both readable */
	EXPECT_EQ(SPS, pwrite(fd, self->p[RW], PS, 0));
	EXPECT_EQ(SPS, pwrite(fd, self->p[RO], PS, PS));

	errno = 0;
	EXPECT_EQ(-1, pwrite(fd, self->p[NONE], PS, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(SPS, pread(fd, self->buf, PS, 0));
	EXPECT_TRUE(shows(self->buf, RW));

	errno = 0;
	EXPECT_EQ(-1, pread(fd, self->p[RO], PS, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_TRUE(shows(self->p[RO], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	/* RO's contents, copied into RW's page and so into its file page */
	EXPECT_EQ(SPS, pread(fd, self->p[RW], PS, PS));
	EXPECT_TRUE(shows(self->p[RW], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RW].pgoff, RO));
	close(fd);
}

/* vmsplice pins the pages for reading: PROT_NONE EFAULT, RO works. */
TEST_F(matrix, vmsplice)
{
	struct iovec iov = { .iov_len = PS };
	int p[2];

	if (!build(_metadata, self, variant))
		return;
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));

	iov.iov_base = self->p[NONE];
	errno = 0;
	EXPECT_EQ(-1, vmsplice(p[1], &iov, 1, 0));
	EXPECT_EQ(EFAULT, errno);

	iov.iov_base = self->p[RO];
	EXPECT_EQ(SPS, vmsplice(p[1], &iov, 1, 0));
	EXPECT_EQ(SPS, read(p[0], self->buf, PS));
	EXPECT_TRUE(shows(self->buf, RO));
	errno = 0;
	EXPECT_EQ(-1, read(p[0], self->buf, PS));
	EXPECT_EQ(EAGAIN, errno);
	close(p[0]);
	close(p[1]);
}

static long futex_wait(void *uaddr, int op, uint32_t val)
{
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };

	return syscall(SYS_futex, uaddr, op, val, &ts, NULL, 0);
}

/*
 * FUTEX_WAIT reads the word (shared futexes also pin the page for the key):
 * PROT_NONE EFAULT; on RO it compares with the nonlinear page's value.
 */
TEST_F(matrix, futex)
{
	static const int ops[] = { FUTEX_WAIT, FUTEX_WAIT_PRIVATE };

	if (!build(_metadata, self, variant))
		return;
	ASSERT_NE(futex_word(pg[RO].idx), futex_word(pg[RO].pgoff));
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		errno = 0;
		EXPECT_EQ(-1, futex_wait(self->p[NONE], ops[i],
					 futex_word(pg[NONE].pgoff)));
		EXPECT_EQ(EFAULT, errno) TH_LOG("op %d", ops[i]);

		/* the value of the linear file page does not match... */
		errno = 0;
		EXPECT_EQ(-1, futex_wait(self->p[RO], ops[i], futex_word(pg[RO].idx)));
		EXPECT_EQ(EAGAIN, errno) TH_LOG("op %d", ops[i]);

		/* ...the nonlinear one's does, so it waits until the timeout */
		errno = 0;
		EXPECT_EQ(-1, futex_wait(self->p[RO], ops[i], futex_word(pg[RO].pgoff)));
		EXPECT_EQ(ETIMEDOUT, errno) TH_LOG("op %d", ops[i]);
	}
}

/*
 * /proc/self/mem is FOLL_FORCE: it reads PROT_NONE, but must not write a
 * read-only page of a shared mapping; writable pages it writes.
 */
TEST_F(matrix, proc_self_mem)
{
	int mem = self->a.self_mem;

	if (!build(_metadata, self, variant))
		return;

	EXPECT_EQ(SPS, pread(mem, self->buf, PS, (off_t)(uintptr_t)self->p[NONE]));
	EXPECT_TRUE(shows(self->buf, NONE));

	memset(self->buf, 'M', PS);
	errno = 0;
	EXPECT_EQ(-1, pwrite(mem, self->buf, PS, (off_t)(uintptr_t)self->p[RO]));
	EXPECT_TRUE(errno == EIO || errno == EFAULT) TH_LOG("errno %d", errno);
	EXPECT_TRUE(shows(self->p[RO], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	EXPECT_EQ(SPS, pwrite(mem, self->buf, PS, (off_t)(uintptr_t)self->p[RW]));
	EXPECT_TRUE(page_is(self->p[RW], 'M'));
	EXPECT_TRUE(file_is(self->a.fd, pg[RW].pgoff, 'M'));
}

/* ptrace is FOLL_FORCE too, on a stopped child that laid the pages out itself. */
TEST_F(matrix, ptrace)
{
	const long poke = 0x1122334455667788;
	long w;
	pid_t pid;
	int st;

	if (!build(_metadata, self, variant))
		return;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* a fresh VMA, so this does not rely on what fork copies */
		if (mmap(self->a.m, NPAGES * PS, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, self->a.fd, 0) != self->a.m ||
		    apply(self->a.m, self->a.fd, variant->chgprot, 0) ||
		    ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st)) TH_LOG("child status %#x", st);

	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, pid, self->p[NONE] + 8, NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)word(NONE, 1), w);

	errno = 0;
	EXPECT_EQ(-1, ptrace(PTRACE_POKEDATA, pid, self->p[RO] + 8, (void *)poke));
	EXPECT_TRUE(errno == EIO || errno == EFAULT) TH_LOG("errno %d", errno);
	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, pid, self->p[RO] + 8, NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)word(RO, 1), w);
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	EXPECT_EQ(0, ptrace(PTRACE_POKEDATA, pid, self->p[RW] + 8, (void *)poke));
	EXPECT_EQ(8, pread(self->a.fd, &w, 8, pg[RW].pgoff * PS + 8));
	EXPECT_EQ(poke, w);

	kill(pid, SIGKILL);
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
}

/* Syscalls that just copy results out: into RO EFAULT, into RW they work. */
TEST_F(matrix, copy_to_user)
{
	struct timespec *ts = (struct timespec *)(self->p[RW] + 256);

	if (!build(_metadata, self, variant))
		return;
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_getrandom, self->p[RO], 64, GRND_INSECURE));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_clock_gettime, CLOCK_MONOTONIC, self->p[RO]));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_TRUE(shows(self->p[RO], RO));
	EXPECT_TRUE(file_shows(self->a.fd, pg[RO].pgoff, RO));

	memset(self->p[RW], 0xff, PS);
	EXPECT_EQ(64, syscall(SYS_getrandom, self->p[RW], 64, GRND_INSECURE));
	EXPECT_FALSE(page_is(self->p[RW], 0xff));
	EXPECT_EQ(0, syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts));
	EXPECT_LT(ts->tv_nsec, 1000000000L);	/* was all ones */
}

TEST_HARNESS_MAIN
