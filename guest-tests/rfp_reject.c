// SPDX-License-Identifier: GPL-2.0
/*
 * The calls the spec rejects, each with its errno, and after
 * each one nothing changed: the data every page shows, how read, write and
 * exec probes of every page end, the /proc/self/maps lines of the area, the
 * bounds and permissions of the VMA and its smaps "nl", "mp" and "um".
 *
 * The argument checks run on a fresh VMA and on one already converted by
 * MAP_CHGPROT; what is refused only after conversion runs on a converted
 * VMA; the mapping kinds MAP_CHGPROT refuses get mappings of their own.
 * Calls a kernel without the feature refuses too (prot != 0 is EINVAL in
 * stock 6.1 and with manyprots=off) run whatever EXPECT_MANYPROTS says;
 * the rest need EXPECT_MANYPROTS=on and SKIP otherwise.
 */
#include "rfp.h"

#include <linux/magic.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#ifndef PROT_SEM
#define PROT_SEM 0x8	/* asm-generic/mman-common.h */
#endif
#ifndef SYS_mseal
#define SYS_mseal 462	/* x86-64 and UML, since 6.10 */
#endif

#define NPG 8		/* pages a snapshot covers */
#define FPG 16		/* pages of the area's memfd */

/* call must fail with -1 (or MAP_FAILED) and errno err. */
#define EXPECT_REJECTED(err, call) do {					\
	long __ret;							\
	int __err;							\
									\
	errno = 0;							\
	__ret = (long)(call);						\
	__err = errno;							\
	EXPECT_EQ(-1L, __ret) TH_LOG("%s succeeded", #call);		\
	EXPECT_EQ(err, __err) TH_LOG("%s: %s", #call, strerror(__err));	\
} while (0)

/* npages pages from addr; maps lines are counted over [win, win + winlen). */
struct region {
	char *addr;
	size_t npages;
	const void *win;
	size_t winlen;
};

struct snap {
	unsigned char data[NPG][4096];
	int code[NPG][3];		/* rfp_try() verdict per access */
	int vmas;
	int nl, mp, um;
	unsigned long start, end;	/* the VMA at addr */
	char perms[5];
};

static const char *const access_name[] = { "read", "write", "exec" };

/*
 * What r shows now.  Pages that cannot be read are read through
 * /proc/self/mem; write probes store the byte that is there already.
 */
static void snap_take(struct __test_metadata *_metadata, const struct region *r,
		      struct snap *s)
{
	int mem = open("/proc/self/mem", O_RDONLY);

	ASSERT_LE(0, mem);
	ASSERT_EQ(sizeof(s->data[0]), PS);
	ASSERT_GE(NPG, r->npages);
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->npages; i++) {
		unsigned char *p = (unsigned char *)r->addr + i * PS, v;
		int *code = s->code[i];

		code[RFP_READ] = rfp_try_load(p + RFP_OFF_R, &v);
		if (!code[RFP_READ])
			memcpy(s->data[i], p, PS);
		else if (pread(mem, s->data[i], PS, (off_t)(uintptr_t)p) != (ssize_t)PS)
			memset(s->data[i], 0, PS);
		code[RFP_WRITE] = rfp_try_store(p + RFP_OFF_W, s->data[i][RFP_OFF_W]);
		code[RFP_EXEC] = rfp_try(p + RFP_OFF_X, RFP_EXEC);
	}
	close(mem);
	s->vmas = rfp_vmas_in(r->win, r->winlen);
	s->nl = rfp_vmflag(r->addr, "nl");
	s->mp = rfp_vmflag(r->addr, "mp");
	s->um = rfp_vmflag(r->addr, "um");
	if (rfp_vma_of(r->addr, &s->start, &s->end, s->perms))
		strcpy(s->perms, "none");
}

static void expect_same_pages(struct __test_metadata *_metadata,
			      const struct snap *a, const struct snap *b,
			      size_t npages)
{
	for (size_t i = 0; i < npages; i++) {
		EXPECT_EQ(0, memcmp(a->data[i], b->data[i], PS))
			TH_LOG("page %zu: data changed", i);
		for (int k = RFP_READ; k <= RFP_EXEC; k++) {
			EXPECT_EQ(a->code[i][k], b->code[i][k])
				TH_LOG("page %zu: %s probe gave %d, now %d", i,
				       access_name[k], a->code[i][k], b->code[i][k]);
		}
	}
}

static void expect_same_vma(struct __test_metadata *_metadata,
			    const struct snap *a, const struct snap *b)
{
	EXPECT_EQ(a->vmas, b->vmas) TH_LOG("maps lines in the area");
	EXPECT_EQ(a->start, b->start);
	EXPECT_EQ(a->end, b->end);
	EXPECT_STREQ(a->perms, b->perms);
	EXPECT_EQ(a->nl, b->nl) TH_LOG("VmFlags nl");
	EXPECT_EQ(a->mp, b->mp) TH_LOG("VmFlags mp");
	EXPECT_EQ(a->um, b->um) TH_LOG("VmFlags um");
}

/* r looks as it did in before. */
static void expect_unchanged(struct __test_metadata *_metadata,
			     const struct region *r, const struct snap *before)
{
	struct snap after;

	snap_take(_metadata, r, &after);
	expect_same_pages(_metadata, before, &after, r->npages);
	expect_same_vma(_metadata, before, &after);
}

/*
 * The area: 24 pages, the target VMA m in the middle (8 pages of a memfd,
 * MAP_SHARED read-write) between two PROT_NONE private anonymous VMAs.
 * Converted, its pages get these file pages and protections.
 */
static const struct {
	unsigned long pgoff;
	int prot;
} layout[NPG] = {
	{ 9, PROT_READ }, { 1, PROT_READ | PROT_WRITE }, { 12, PROT_NONE },
	{ 3, PROT_READ | PROT_EXEC }, { 14, PROT_READ | PROT_WRITE | PROT_EXEC },
	{ 8, PROT_WRITE }, { 6, PROT_EXEC }, { 15, PROT_READ | PROT_WRITE },
};

struct area {
	int fd;
	char *base;	/* the 24 pages */
	char *m;	/* the target VMA, base + 8 pages */
	struct region r;
	struct snap before;
};

static void area_setup(struct __test_metadata *_metadata, struct area *a,
		       bool convert)
{
	rfp_catch();
	a->fd = rfp_memfd(FPG);
	ASSERT_LE(0, a->fd);
	a->base = mmap(NULL, 24 * PS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a->base);
	a->m = a->base + 8 * PS;
	ASSERT_EQ(a->m, mmap(a->m, NPG * PS, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, a->fd, 0));
	a->r = (struct region){ a->m, NPG, a->base, 24 * PS };
	for (size_t i = 0; convert && i < NPG; i++) {
		ASSERT_EQ(0, rfp(a->m + i * PS, PS, layout[i].prot, layout[i].pgoff,
				 MAP_CHGPROT)) TH_LOG("%s", strerror(errno));
	}
	snap_take(_metadata, &a->r, &a->before);
	ASSERT_EQ(3, a->before.vmas);
	ASSERT_EQ(convert, a->before.nl);
	ASSERT_EQ(convert, a->before.mp);
	if (convert) {
		/* the protections really differ per page */
		ASSERT_EQ(0, rfp_pattern_bad(a->before.data[0], 9, 0));
		ASSERT_EQ(SEGV_ACCERR, a->before.code[0][RFP_WRITE]);
		ASSERT_EQ(SEGV_ACCERR, a->before.code[2][RFP_READ]);
		ASSERT_EQ(0, a->before.code[4][RFP_EXEC]);
	}
}

/* The area's layout changed on purpose: what must stay from now on. */
static void area_resnap(struct __test_metadata *_metadata, struct area *a)
{
	snap_take(_metadata, &a->r, &a->before);
}

static void area_teardown(struct area *a)
{
	munmap(a->base, 24 * PS);
	close(a->fd);
}

/* The argument checks, on a fresh VMA and on a converted one. */
FIXTURE(rej) {
	struct area a;
};

FIXTURE_VARIANT(rej) {
	bool converted;
};

FIXTURE_VARIANT_ADD(rej, fresh) {
	.converted = false,
};

FIXTURE_VARIANT_ADD(rej, converted) {
	.converted = true,
};

FIXTURE_SETUP(rej)
{
	area_setup(_metadata, &self->a, variant->converted && manyprots_expected());
}

FIXTURE_TEARDOWN(rej)
{
	area_teardown(&self->a);
}

/* The fresh VMA runs everywhere (and keeps no "nl"/"mp": setup checked it). */
#define NEED_VARIANT() do {						\
	if (variant->converted)						\
		RFP_NEED_MANYPROTS(return);					\
} while (0)

TEST_F(rej, unknown_flags)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ, 3,
				    MAP_CHGPROT | MAP_POPULATE));
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ, 3,
				    MAP_CHGPROT | 0x40000000));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, prot_bits)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ | PROT_SEM, 3,
				    MAP_CHGPROT));
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ | 0x10, 3,
				    MAP_CHGPROT));
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ | PROT_GROWSDOWN, 3,
				    MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, unaligned_start)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m + RFP_OFF_R, PS, PROT_READ, 3,
				    MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, zero_size)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, 0, PROT_READ, 3, MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, range_wraps)
{
	NEED_VARIANT();
	/* a page-aligned size that takes start + size past the top */
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, -PS, PROT_READ, 3, MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, pgoff_out_of_range)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, 2 * PS, PROT_READ, ~0UL, MAP_CHGPROT));
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ, 1UL << 52, MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, start_in_hole)
{
	char *hole = self->a.base + 16 * PS;

	NEED_VARIANT();
	ASSERT_EQ(0, munmap(hole, 8 * PS));
	area_resnap(_metadata, &self->a);
	EXPECT_REJECTED(EINVAL, rfp(hole, PS, PROT_READ, 3, MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, past_vma_end)
{
	NEED_VARIANT();
	ASSERT_EQ(0, munmap(self->a.base + 16 * PS, 8 * PS));
	area_resnap(_metadata, &self->a);
	EXPECT_REJECTED(EINVAL, rfp(self->a.m + 6 * PS, 4 * PS, PROT_READ, 6,
				    MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, into_anon_vma)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m + 6 * PS, 4 * PS, PROT_READ, 6,
				    MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* The next VMA maps the same file on, read-only so that the two stay apart. */
TEST_F(rej, into_same_file_vma)
{
	char *next = self->a.base + 16 * PS;

	NEED_VARIANT();
	ASSERT_EQ(next, mmap(next, 8 * PS, PROT_READ, MAP_SHARED | MAP_FIXED,
			     self->a.fd, NPG * PS));
	area_resnap(_metadata, &self->a);
	EXPECT_REJECTED(EINVAL, rfp(self->a.m + 6 * PS, 4 * PS, PROT_READ, 6,
				    MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/*
 * A sealed VMA (mseal(2), since 6.10): every MAP_CHGPROT call is EPERM, as
 * mprotect() is, whether it would change anything or not.  Kernels before
 * mseal() skip.  The sealed VMA stays mapped (munmap() is refused too).
 */
TEST_F(rej, sealed)
{
	RFP_NEED_MANYPROTS(return);
	if (syscall(SYS_mseal, self->a.m, NPG * PS, 0))
		SKIP(return, "no mseal() here: %s", strerror(errno));
	EXPECT_REJECTED(EPERM, mprotect(self->a.m, PS, PROT_READ));
	EXPECT_REJECTED(EPERM, rfp(self->a.m, PS, PROT_READ, 3, MAP_CHGPROT));
	EXPECT_REJECTED(EPERM, rfp(self->a.m + PS, PS, PROT_READ | PROT_WRITE, 1,
				   MAP_CHGPROT));
	EXPECT_REJECTED(EPERM, rfp(self->a.m, NPG * PS, PROT_READ | PROT_WRITE, 0,
				   MAP_CHGPROT));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

TEST_F(rej, prot_without_chgprot)
{
	NEED_VARIANT();
	EXPECT_REJECTED(EINVAL, rfp(self->a.m, PS, PROT_READ, 3, 0));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* What the spec refuses once the VMA is converted. */
FIXTURE(conv) {
	struct area a;
};

FIXTURE_SETUP(conv)
{
	area_setup(_metadata, &self->a, manyprots_expected());
}

FIXTURE_TEARDOWN(conv)
{
	area_teardown(&self->a);
}

TEST_F(conv, mprotect)
{
	RFP_NEED_MANYPROTS(return);
	EXPECT_REJECTED(EACCES, mprotect(self->a.m, NPG * PS, PROT_READ));
	EXPECT_REJECTED(EACCES, mprotect(self->a.m + 3 * PS, 2 * PS,
					 PROT_READ | PROT_WRITE));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* The syscall itself: glibc's pkey_mprotect() turns pkey -1 into mprotect(). */
TEST_F(conv, pkey_mprotect)
{
	RFP_NEED_MANYPROTS(return);
	/* an ordinary VMA takes it, so the syscall is there */
	if (syscall(SYS_pkey_mprotect, self->a.base, PS, PROT_NONE, -1) &&
	    errno == ENOSYS)
		SKIP(return, "no pkey_mprotect() here (UML has no protection keys)");
	ASSERT_EQ(0, syscall(SYS_pkey_mprotect, self->a.base, PS, PROT_NONE, -1))
		TH_LOG("pkey_mprotect: %s", strerror(errno));
	EXPECT_REJECTED(EACCES, syscall(SYS_pkey_mprotect, self->a.m + PS, PS,
					PROT_READ, -1));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/*
 * mprotect() over an ordinary shared VMA and the converted one, in both
 * orders: refused, and the ordinary one keeps its protection too.
 */
FIXTURE(span) {
	struct area a;
	int fd;
	char *normal;
};

FIXTURE_VARIANT(span) {
	bool normal_first;
};

FIXTURE_VARIANT_ADD(span, normal_first) {
	.normal_first = true,
};

FIXTURE_VARIANT_ADD(span, normal_after) {
	.normal_first = false,
};

FIXTURE_SETUP(span)
{
	area_setup(_metadata, &self->a, manyprots_expected());
	self->fd = rfp_memfd(NPG);
	ASSERT_LE(0, self->fd);
	self->normal = self->a.base + (variant->normal_first ? 0 : 16 * PS);
	ASSERT_EQ(self->normal, mmap(self->normal, NPG * PS, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_FIXED, self->fd, 0));
}

FIXTURE_TEARDOWN(span)
{
	area_teardown(&self->a);
	close(self->fd);
}

TEST_F(span, mprotect)
{
	struct region nr = { self->normal, NPG, self->a.base, 24 * PS };
	char *from = variant->normal_first ? self->normal : self->a.m;
	struct snap nb;

	RFP_NEED_MANYPROTS(return);
	area_resnap(_metadata, &self->a);
	snap_take(_metadata, &nr, &nb);
	EXPECT_EQ(0, nb.code[0][RFP_WRITE]);
	EXPECT_REJECTED(EACCES, mprotect(from, 2 * NPG * PS, PROT_READ));
	expect_unchanged(_metadata, &nr, &nb);
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* Grow in place (room is made after it) and grow by moving. */
TEST_F(conv, mremap_grow)
{
	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, munmap(self->a.base + 16 * PS, 8 * PS));
	area_resnap(_metadata, &self->a);
	EXPECT_REJECTED(EINVAL, mremap(self->a.m, NPG * PS, 2 * NPG * PS, 0));
	EXPECT_REJECTED(EINVAL, mremap(self->a.m, NPG * PS, 2 * NPG * PS,
				       MREMAP_MAYMOVE));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* To a hole: stock mremap() unmaps the target before checking the VMA. */
TEST_F(conv, mremap_move)
{
	char *to = self->a.base + 16 * PS;

	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, munmap(to, 8 * PS));
	area_resnap(_metadata, &self->a);
	EXPECT_REJECTED(EINVAL, mremap(self->a.m, NPG * PS, NPG * PS,
				       MREMAP_MAYMOVE | MREMAP_FIXED, to));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* old_len 0 would make a second mapping anywhere: count every VMA. */
TEST_F(conv, mremap_dup)
{
	int all;

	RFP_NEED_MANYPROTS(return);
	all = rfp_vmas_in(NULL, SIZE_MAX);
	EXPECT_REJECTED(EINVAL, mremap(self->a.m, 0, NPG * PS, MREMAP_MAYMOVE));
	EXPECT_EQ(all, rfp_vmas_in(NULL, SIZE_MAX));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* Not refused: shrinking keeps the first pages as they were. */
TEST_F(conv, mremap_shrink)
{
	struct region half = { self->a.m, NPG / 2, self->a.base, 24 * PS };
	struct snap after;

	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(self->a.m, mremap(self->a.m, NPG * PS, NPG / 2 * PS, 0))
		TH_LOG("%s", strerror(errno));
	snap_take(_metadata, &half, &after);
	expect_same_pages(_metadata, &self->a.before, &after, NPG / 2);
	EXPECT_EQ((unsigned long)self->a.m + NPG / 2 * PS, after.end);
	EXPECT_EQ(1, after.nl);
	EXPECT_EQ(1, after.mp);
	EXPECT_EQ(SEGV_MAPERR, rfp_try(self->a.m + NPG / 2 * PS, RFP_READ));
}

TEST_F(conv, madv_remove)
{
	RFP_NEED_MANYPROTS(return);
	EXPECT_REJECTED(EINVAL, madvise(self->a.m, NPG * PS, MADV_REMOVE));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
}

/* A userfaultfd, or -errno when the kernel has none. */
static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static int uffd_register(int uffd, void *start, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

TEST_F(conv, uffd_register)
{
	int uffd;

	RFP_NEED_MANYPROTS(return);
	uffd = uffd_open();
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(-uffd));
	EXPECT_REJECTED(EINVAL, uffd_register(uffd, self->a.m, NPG * PS));
	expect_unchanged(_metadata, &self->a.r, &self->a.before);
	close(uffd);
}

/* MAP_CHGPROT on r's first page refused, and r, never converted, as it was. */
static void expect_chgprot_rejected(struct __test_metadata *_metadata,
				    const struct region *r, int want, int prot,
				    unsigned long pgoff)
{
	struct snap before;
	long ret;
	int err;

	snap_take(_metadata, r, &before);
	ASSERT_EQ(0, before.nl);
	ASSERT_EQ(0, before.mp);
	errno = 0;
	ret = rfp(r->addr, PS, prot, pgoff, MAP_CHGPROT);
	err = errno;
	EXPECT_EQ(-1, ret) TH_LOG("prot %#x pgoff %lu accepted", prot, pgoff);
	EXPECT_EQ(want, err) TH_LOG("prot %#x pgoff %lu: %s", prot, pgoff, strerror(err));
	expect_unchanged(_metadata, r, &before);
}

/* prot 0 too: stock refuses private mappings whatever prot is. */
TEST(private_memfd)
{
	int fd = rfp_memfd(NPG);
	struct region r;
	char *m;

	rfp_catch();
	ASSERT_LE(0, fd);
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 2);
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_NONE, 2);
	munmap(m, NPG * PS);
	close(fd);
}

TEST(private_anon)
{
	struct region r;
	char *m;

	rfp_catch();
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	rfp_pattern_mem(m, 0, NPG, 0);
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 2);
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_NONE, 2);
	munmap(m, NPG * PS);
}

/* A regular file on the root filesystem (ext4 in the images), not shmem. */
TEST(non_shmem_file)
{
	static const char *const dirs[] = { "/var/tmp", "/" };
	char path[64];
	struct statfs sfs;
	struct region r;
	int fd = -1;
	char *m;

	rfp_catch();
	for (size_t i = 0; fd < 0 && i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/rfp_reject.XXXXXX", dirs[i]);
		fd = mkstemp(path);
		if (fd < 0)
			continue;
		unlink(path);
		if (fstatfs(fd, &sfs) || sfs.f_type == TMPFS_MAGIC) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		SKIP(return, "no writable non-tmpfs directory in /var/tmp or /");
	TH_LOG("file in %s, filesystem magic %#lx", path, (unsigned long)sfs.f_type);
	ASSERT_EQ(0, rfp_pattern_file(fd, NPG));
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 2);
	munmap(m, NPG * PS);
	close(fd);
}

/* A userfaultfd-registered shmem VMA, not converted. */
TEST(uffd_registered)
{
	int fd = rfp_memfd(NPG), uffd;
	struct region r;
	char *m;

	rfp_catch();
	ASSERT_LE(0, fd);
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	uffd = uffd_open();
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(-uffd));
	/* every page is in the page cache: no access waits for the uffd */
	ASSERT_EQ(0, uffd_register(uffd, m, NPG * PS)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(1, rfp_vmflag(m, "um"));
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 2);
	munmap(m, NPG * PS);
	close(uffd);
	close(fd);
}

/*
 * A VMA with a protection key: every PTE would carry the key, whose
 * access rights are per thread and not what MAP_CHGPROT gives a page.
 * No probes here: a caught fault leaves the thread with the signal
 * handler's key rights (siglongjmp skips sigreturn), which deny this key.
 */
TEST(pkey)
{
	int fd = rfp_memfd(NPG), pkey;
	char *m;

	ASSERT_LE(0, fd);
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	pkey = syscall(SYS_pkey_alloc, 0, 0);
	if (pkey < 0)
		SKIP(return, "no protection keys here: %s", strerror(errno));
	ASSERT_EQ(0, syscall(SYS_pkey_mprotect, m, NPG * PS,
			     PROT_READ | PROT_WRITE, pkey));
	ASSERT_EQ(pkey, rfp_smaps_kb(m, "ProtectionKey"));
	errno = 0;
	EXPECT_EQ(-1, rfp(m, PS, PROT_READ, 2, MAP_CHGPROT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rfp_vmflag(m, "nl"));
	EXPECT_EQ(0, rfp_vmflag(m, "mp"));
	EXPECT_EQ(0, rfp_pattern_bad(m, 0, 0)) TH_LOG("page 0 changed");
	EXPECT_EQ(0, rfp_pattern_bad(m + PS, 1, 0)) TH_LOG("page 1 changed");
	munmap(m, NPG * PS);
	syscall(SYS_pkey_free, pkey);
	close(fd);
}

/*
 * x86 makes mprotect(PROT_EXEC) execute-only with a protection key that
 * denies reads: refused as above, where a page set PROT_READ would fault
 * with SEGV_PKUERR.  mprotect() to PROT_READ drops that key, and then the
 * call works and the page reads as a PROT_READ mmap() of it would.
 */
TEST(exec_only_key)
{
	int fd = rfp_memfd(NPG);
	struct region r;
	char *m;

	rfp_catch();
	ASSERT_LE(0, fd);
	m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, mprotect(m, NPG * PS, PROT_EXEC));
	if (rfp_smaps_kb(m, "ProtectionKey") <= 0)
		SKIP(return, "PROT_EXEC gave no execute-only protection key here");
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 2);
	ASSERT_EQ(0, mprotect(m, NPG * PS, PROT_READ));
	ASSERT_EQ(0, rfp_smaps_kb(m, "ProtectionKey"));
	RFP_FIRST_CHGPROT(return, m, PS, PROT_READ, 2);
	EXPECT_EQ(0, rfp_try(m + RFP_OFF_R, RFP_READ));
	EXPECT_EQ(0, rfp_pattern_bad(m, 2, 0));
	munmap(m, NPG * PS);
	close(fd);
}

/* prot beyond VM_MAYWRITE: a read-only mapping of an O_RDONLY fd. */
TEST(rdonly_fd)
{
	char path[64];
	struct region r;
	int fd, ro;
	char *m;

	RFP_NEED_MANYPROTS(return);
	rfp_catch();
	fd = rfp_memfd(NPG);
	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	ASSERT_LE(0, ro);
	m = mmap(NULL, NPG * PS, PROT_READ, MAP_SHARED, ro, 0);
	ASSERT_NE(MAP_FAILED, m);
	r = (struct region){ m, NPG, m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EACCES, PROT_READ | PROT_WRITE, 2);
	expect_chgprot_rejected(_metadata, &r, EACCES, PROT_WRITE, 0);
	munmap(m, NPG * PS);
	close(ro);
	close(fd);
}

/* Read-only mappings of write-sealed memfds: no VM_MAYWRITE. */
FIXTURE(sealed) {
	int fd;
	char *m;
};

FIXTURE_VARIANT(sealed) {
	int seal;
};

FIXTURE_VARIANT_ADD(sealed, seal_write) {
	.seal = F_SEAL_WRITE,
};

FIXTURE_VARIANT_ADD(sealed, seal_future_write) {
	.seal = F_SEAL_FUTURE_WRITE,
};

FIXTURE_SETUP(sealed)
{
	rfp_catch();
	self->fd = rfp_memfd(NPG);	/* sealing allowed */
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fcntl(self->fd, F_ADD_SEALS, variant->seal));
	self->m = mmap(NULL, NPG * PS, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->m);
}

FIXTURE_TEARDOWN(sealed)
{
	munmap(self->m, NPG * PS);
	close(self->fd);
}

TEST_F(sealed, prot_write)
{
	struct region r = { self->m, NPG, self->m, NPG * PS };

	RFP_NEED_MANYPROTS(return);
	expect_chgprot_rejected(_metadata, &r, EACCES, PROT_READ | PROT_WRITE, 1);
}

/* PROT_EXEC on a file of a tmpfs mounted noexec: no VM_MAYEXEC. */
FIXTURE(noexec) {
	char dir[32];
	bool mounted;
	int fd;
	char *m;
};

FIXTURE_SETUP(noexec)
{
	rfp_catch();
	self->fd = -1;
	self->m = MAP_FAILED;
}

FIXTURE_TEARDOWN(noexec)
{
	if (self->m != MAP_FAILED)
		munmap(self->m, NPG * PS);
	if (self->fd >= 0)
		close(self->fd);
	if (self->mounted)
		umount(self->dir);
	if (self->dir[0])
		rmdir(self->dir);
}

TEST_F(noexec, prot_exec)
{
	char path[64];
	struct region r;

	RFP_NEED_MANYPROTS(return);
	strcpy(self->dir, "/tmp/rfp_noexec.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir)) TH_LOG("mkdtemp: %s", strerror(errno));
	ASSERT_EQ(0, mount("rfp_noexec", self->dir, "tmpfs", MS_NOEXEC, "size=1m"))
		TH_LOG("mount: %s", strerror(errno));
	self->mounted = true;
	snprintf(path, sizeof(path), "%s/file", self->dir);
	self->fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rfp_pattern_file(self->fd, NPG));
	self->m = mmap(NULL, NPG * PS, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->m);
	r = (struct region){ self->m, NPG, self->m, NPG * PS };
	expect_chgprot_rejected(_metadata, &r, EACCES, PROT_READ | PROT_EXEC, 1);
	expect_chgprot_rejected(_metadata, &r, EACCES, PROT_EXEC, 0);
}

/* A hugetlb memfd; /proc/sys/vm/nr_hugepages is raised to 2 for it if need be. */
FIXTURE(huge) {
	long nr_orig;	/* to put back, -1 if untouched */
	int fd;
	char *m;
	size_t len;
};

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

static int write_long(const char *path, long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld\n", v);
	return rfp_write_str(path, s);
}

FIXTURE_SETUP(huge)
{
	rfp_catch();
	self->nr_orig = -1;
	self->fd = -1;
	self->m = MAP_FAILED;
}

FIXTURE_TEARDOWN(huge)
{
	if (self->m != MAP_FAILED)
		munmap(self->m, self->len);
	if (self->fd >= 0)
		close(self->fd);
	if (self->nr_orig >= 0)
		write_long(NR_HUGEPAGES, self->nr_orig);
}

TEST_F(huge, hugetlb_memfd)
{
	struct region r;
	long nr;

	self->fd = memfd_create("rfp_reject_huge", MFD_HUGETLB);
	if (self->fd < 0)
		SKIP(return, "memfd_create(MFD_HUGETLB): %s", strerror(errno));
	nr = rfp_read_long(NR_HUGEPAGES);
	if (rfp_meminfo_kb("HugePages_Free") < 1 && nr >= 0 && nr < 2) {
		if (write_long(NR_HUGEPAGES, 2))
			SKIP(return, "cannot set " NR_HUGEPAGES ": %s", strerror(errno));
		self->nr_orig = nr;
	}
	if (rfp_meminfo_kb("HugePages_Free") < 1)
		SKIP(return, "no free huge page (nr_hugepages %ld)",
		     rfp_read_long(NR_HUGEPAGES));
	self->len = rfp_meminfo_kb("Hugepagesize") * 1024;
	ASSERT_LE(NPG * PS, self->len);
	ASSERT_EQ(0, ftruncate(self->fd, self->len));
	self->m = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	if (self->m == MAP_FAILED)
		SKIP(return, "mmap of a huge page: %s", strerror(errno));
	rfp_pattern_mem(self->m, 0, NPG, 0);
	r = (struct region){ self->m, NPG, self->m, self->len };
	expect_chgprot_rejected(_metadata, &r, EINVAL, PROT_READ, 1);
}

TEST_HARNESS_MAIN
