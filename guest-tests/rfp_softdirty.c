// SPDX-License-Identifier: GPL-2.0
/*
 * Clearing soft-dirty bits (writing 4 to /proc/self/clear_refs) before a
 * VMA's first MAP_CHGPROT call.  clear_refs clears VM_SOFTDIRTY on the
 * VMAs it may, which arms write-notify: the VMA's vm_page_prot loses its
 * write bit while the VMA itself stays writable.  The first call must
 * still give each page exactly the protection asked for, and the pages it
 * does not name the VMA's whole protection: a write to a page made
 * read-only raises SIGSEGV (SEGV_ACCERR at the address) and leaves the
 * file alone, writes to the others work.
 *
 * Each shape runs on a read-write VMA asking for read-only pages, and on
 * a read-write-exec one asking for read-exec: in both the protection
 * asked for is the VMA's less write, what write-notify leaves in
 * vm_page_prot.  Without soft-dirty support (UML) clear_refs changes
 * nothing and the tests check the plain first call.
 */
#include "rfp.h"

#define NPAGES 4	/* of the VMA */
#define FPAGES 8	/* of its file */
#define MARK 0xa5	/* what write probes store: no byte at RFP_OFF_W of a file page here */

FIXTURE(sd) {
	struct rfp_area a;
	bool no_clear_refs;
};

FIXTURE_VARIANT(sd) {
	int vma_prot;
};

FIXTURE_VARIANT_ADD(sd, rw) {
	.vma_prot = PROT_READ | PROT_WRITE,
};

FIXTURE_VARIANT_ADD(sd, rwx) {
	.vma_prot = PROT_READ | PROT_WRITE | PROT_EXEC,
};

static int clear_soft_dirty(void)
{
	return rfp_write_str("/proc/self/clear_refs", "4");
}

/*
 * Page 0 written (present, dirty, soft-dirty), then soft-dirty cleared:
 * its PTE write-protected and the VMA's write-notify armed.
 */
FIXTURE_SETUP(sd)
{
	rfp_catch();
	ASSERT_EQ(0, rfp_area_open(&self->a, NPAGES, FPAGES, FPAGES, variant->vma_prot));
	ASSERT_EQ(0, rfp_try_store(self->a.m + RFP_OFF_W, rfp_byte(0, RFP_OFF_W, 0)));
	if (access("/proc/self/clear_refs", W_OK)) {
		self->no_clear_refs = true;
		return;
	}
	ASSERT_EQ(0, clear_soft_dirty()) TH_LOG("clear_refs: %s", strerror(errno));
}

FIXTURE_TEARDOWN(sd)
{
	rfp_area_close(&self->a);
}

#define NEED_CLEAR_REFS() do {						\
	if (self->no_clear_refs)					\
		SKIP(return, "no /proc/self/clear_refs");		\
} while (0)

/* The protection asked for: the VMA's less write. */
static int ro(const FIXTURE_VARIANT(sd) *variant)
{
	return variant->vma_prot & ~PROT_WRITE;
}

/*
 * Page idx maps file page pgoff with protection prot: data, read, write
 * and exec probes (rfp_check_page()); where prot denies writes, also a
 * write of another byte, which must fault at its address and leave the
 * file as it was.
 */
static void expect_page(struct __test_metadata *_metadata, struct rfp_area *a,
			size_t idx, size_t pgoff, int prot)
{
	char *p = a->m + idx * PS;
	struct rfp_tally t;
	int code;

	memset(&t, 0, sizeof(t));
	rfp_check_page(&t, p, idx, pgoff, prot, &a->gen[pgoff], false, a->fd,
		       a->self_mem);
	RFP_EXPECT_CLEAN(&t, "page");
	if (rfp_allows(prot, RFP_WRITE))
		return;
	code = rfp_try_store(p + RFP_OFF_W, MARK);
	EXPECT_EQ(SEGV_ACCERR, code)
		TH_LOG("page %zu (file page %zu, prot %d): a write gave si_code %d",
		       idx, pgoff, prot, code);
	if (code) {
		EXPECT_EQ(p + RFP_OFF_W, (char *)rfp_fault_addr);
	}
	EXPECT_EQ(0, rfp_pattern_bad_fd(a->fd, pgoff, 0))
		TH_LOG("file page %zu changed through page %zu", pgoff, idx);
}

/* The reported case: page 0 made read-only in place, at its own offset. */
TEST_F(sd, first_call_same_offset)
{
	NEED_CLEAR_REFS();
	RFP_FIRST_CHGPROT(return, self->a.m, PS, ro(variant), 0);
	expect_page(_metadata, &self->a, 0, 0, ro(variant));
	for (size_t i = 1; i < NPAGES; i++)
		expect_page(_metadata, &self->a, i, i, variant->vma_prot);
}

/* Two pages in one call, from the VMA's first page on. */
TEST_F(sd, first_call_two_pages)
{
	NEED_CLEAR_REFS();
	RFP_FIRST_CHGPROT(return, self->a.m, 2 * PS, ro(variant), 0);
	expect_page(_metadata, &self->a, 0, 0, ro(variant));
	expect_page(_metadata, &self->a, 1, 1, ro(variant));
	expect_page(_metadata, &self->a, 2, 2, variant->vma_prot);
	expect_page(_metadata, &self->a, 3, 3, variant->vma_prot);
}

/* Nonlinear offsets: pages 0 and 1 show file pages 5 and 6. */
TEST_F(sd, first_call_nonlinear)
{
	NEED_CLEAR_REFS();
	RFP_FIRST_CHGPROT(return, self->a.m, 2 * PS, ro(variant), 5);
	expect_page(_metadata, &self->a, 0, 5, ro(variant));
	expect_page(_metadata, &self->a, 1, 6, ro(variant));
	expect_page(_metadata, &self->a, 2, 2, variant->vma_prot);
	expect_page(_metadata, &self->a, 3, 3, variant->vma_prot);
}

/* PROT_NONE at the page's own offset. */
TEST_F(sd, first_call_prot_none)
{
	NEED_CLEAR_REFS();
	RFP_NEED_MANYPROTS(return);
	ASSERT_EQ(0, rfp(self->a.m, PS, PROT_NONE, 0, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	expect_page(_metadata, &self->a, 0, 0, PROT_NONE);
	for (size_t i = 1; i < NPAGES; i++)
		expect_page(_metadata, &self->a, i, i, variant->vma_prot);
}

/* The whole protection asked for, on a page that is not page 0. */
TEST_F(sd, first_call_full_prot)
{
	NEED_CLEAR_REFS();
	RFP_FIRST_CHGPROT(return, self->a.m + 2 * PS, PS, variant->vma_prot, 2);
	for (size_t i = 0; i < NPAGES; i++)
		expect_page(_metadata, &self->a, i, i, variant->vma_prot);
	/* and then read-only, in a later call */
	ASSERT_EQ(0, rfp(self->a.m + 2 * PS, PS, ro(variant), 2, MAP_CHGPROT));
	expect_page(_metadata, &self->a, 2, 2, ro(variant));
}

/*
 * A later call: the first one converts the VMA elsewhere (page 1 to file
 * page 6), soft-dirty is cleared again (the converted VMA must keep its
 * protections), then page 0 is made read-only at its own offset.
 */
TEST_F(sd, later_call)
{
	NEED_CLEAR_REFS();
	RFP_FIRST_CHGPROT(return, self->a.m + PS, PS, ro(variant), 6);
	ASSERT_EQ(0, clear_soft_dirty());
	expect_page(_metadata, &self->a, 0, 0, variant->vma_prot);
	expect_page(_metadata, &self->a, 1, 6, ro(variant));
	ASSERT_EQ(0, rfp(self->a.m, PS, ro(variant), 0, MAP_CHGPROT))
		TH_LOG("%s", strerror(errno));
	expect_page(_metadata, &self->a, 0, 0, ro(variant));
	expect_page(_metadata, &self->a, 1, 6, ro(variant));
	expect_page(_metadata, &self->a, 2, 2, variant->vma_prot);
	expect_page(_metadata, &self->a, 3, 3, variant->vma_prot);
}

TEST_HARNESS_MAIN
