# SPDX-License-Identifier: GPL-2.0
#
# gdb commands for the pages of a remap_file_pages(MAP_CHGPROT) mapping, in
# the style of the kernel's scripts/gdb (load vmlinux-gdb.py first: "task"
# arguments use its task list).  Works on the x86_64 kernel (through QEMU's
# gdb stub) and on the UML kernel (gdb on UML's linux binary):
#
#   mp-vma  TASK ADDR          the VMA holding ADDR, its flags as in smaps
#   mp-page TASK ADDR [COUNT]  that VMA, then each page's entry: present
#                              (protection, pfn, file offset of the page) or
#                              a SWP_FILE entry (protection, file offset;
#                              swp_file_poison once memory failure took it)
#
# TASK is a pid, a command name or "current".  Offsets are in pages.

import gdb

try:
    from linux import tasks
except ImportError:
    tasks = None

M64 = (1 << 64) - 1
PAGE_SHIFT = 12
PAGE_MASK = M64 & ~((1 << PAGE_SHIFT) - 1)
X86_PFN_MASK = 0x000FFFFFFFFFF000
# include/linux/swap.h: SWP_FILE and SWP_FILE_POISON (a page memory
# failure unmapped) are the last two of the 32 swap types
SWP_FILE = 30
SWP_FILE_POISON = 31
SWP_FILE_PROT_BITS = 3


def is_uml():
    return gdb.lookup_global_symbol("uml_physmem") is not None


def ulong(v):
    return int(v.cast(gdb.lookup_type("unsigned long"))) & M64


def read_u64(addr):
    mem = gdb.selected_inferior().read_memory(addr, 8)
    return int.from_bytes(bytes(mem), "little")


def find_task(spec):
    if tasks is None:
        raise gdb.GdbError("load vmlinux-gdb.py first (the task list)")
    if spec == "current":
        if not is_uml():
            return gdb.parse_and_eval("$lx_current()").address
        # UML runs every task on its own kernel stack in one host thread:
        # current is the task whose stack holds $sp
        sp = ulong(gdb.parse_and_eval("$sp"))
        best = None
        for t in tasks.task_lists():
            base = ulong(t["stack"])
            if base <= sp and (best is None or base > ulong(best["stack"])):
                best = t
        if best is None or sp - ulong(best["stack"]) >= 1 << 16:
            raise gdb.GdbError("$sp is on no task's kernel stack")
        return best
    for t in tasks.task_lists():
        if spec.isdigit() and int(t["pid"]) == int(spec):
            return t
        if not spec.isdigit() and t["comm"].string() == spec:
            return t
    raise gdb.GdbError("no task " + spec)


def task_mm(task):
    mm = task["mm"]
    if int(mm) == 0:
        raise gdb.GdbError("task %d has no mm" % int(task["pid"]))
    return mm


# lib/maple_tree.c: an encoded node is the node's address with its type in
# bits 3-6; the root entry also has bit 1 (MAPLE_ROOT_NODE), and types
# below maple_range_64 are leaves.
def find_vma(mm, addr):
    node_t = gdb.lookup_type("struct maple_node").pointer()
    vma_t = gdb.lookup_type("struct vm_area_struct").pointer()
    entry = ulong(mm["mm_mt"]["ma_root"])
    if not (entry & 3 == 2 and entry > 4096):
        vma = gdb.Value(entry).cast(vma_t) if entry else None
    else:
        while True:
            typ = (entry >> 3) & 0xF
            node = gdb.Value(entry & ~0xFF).cast(node_t).dereference()
            n = node["ma64"] if typ == 3 else node["mr64"]
            nslots = n["slot"].type.range()[1] + 1
            off = nslots - 1
            for i in range(nslots - 1):
                piv = ulong(n["pivot"][i])
                if piv >= addr or (piv == 0 and i > 0):
                    off = i
                    break
            entry = ulong(n["slot"][off])
            if typ < 2 or entry == 0:
                break
        vma = gdb.Value(entry).cast(vma_t) if entry else None
    if vma is None or not (ulong(vma["vm_start"]) <= addr < ulong(vma["vm_end"])):
        return None
    return vma


# fs/proc/task_mmu.c's smaps mnemonics (the kernel's table is inlined away)
VM_FLAG_NAMES = {
    0: "rd", 1: "wr", 2: "ex", 3: "sh", 4: "mr", 5: "mw", 6: "me", 7: "ms",
    8: "gd", 9: "um", 10: "pf", 12: "uw", 13: "lo", 14: "io", 15: "sr",
    16: "rr", 17: "dc", 18: "de", 20: "ac", 21: "nr", 22: "ht", 23: "sf",
    24: "ar", 25: "wf", 26: "dd", 27: "sd", 28: "mm", 29: "hg", 30: "nh",
    31: "mg", 37: "ui", 38: "nl", 39: "mp",
}


def vma_flag_names(flags):
    return " ".join(VM_FLAG_NAMES[b] for b in sorted(VM_FLAG_NAMES)
                    if flags & (1 << b))


def vma_line(vma):
    flags = ulong(vma["vm_flags"])
    return "vma 0x%x-0x%x pgoff 0x%x flags 0x%x %s" % (
        ulong(vma["vm_start"]), ulong(vma["vm_end"]), ulong(vma["vm_pgoff"]),
        flags, vma_flag_names(flags))


def pfn_to_page(pfn):
    page_t = gdb.lookup_type("struct page")
    if is_uml():
        # FLATMEM, physical memory from 0
        return (gdb.parse_and_eval("mem_map") + pfn).dereference()
    # SPARSEMEM (the guest config has no VMEMMAP): mem_section[root][nr]
    # holds mem_map - first pfn of the section, flags in its low bits
    sec_t = gdb.lookup_type("struct mem_section")
    per_root = 4096 // sec_t.sizeof
    nr = pfn >> (27 - PAGE_SHIFT)
    root = gdb.parse_and_eval("mem_section")[nr // per_root]
    ms = root[nr % per_root]
    base = ulong(ms["section_mem_map"]) & ~0xFFF
    return (gdb.Value(base).cast(page_t.pointer()) + pfn).dereference()


def table_layout():
    """The page table levels (name, shift), the mask of the next table's
    physical address in an entry, where physical memory is mapped, and
    whether a pud or pmd entry can map a huge page."""
    if is_uml():
        # CONFIG_3_LEVEL_PGTABLES: pgd (1 GiB), pmd (2 MiB), pte
        return ([("pgd", 30), ("pmd", 21), ("pte", 12)], PAGE_MASK,
                ulong(gdb.parse_and_eval("uml_physmem")), False)
    if gdb.lookup_global_symbol("__pgtable_l5_enabled") and \
            ulong(gdb.parse_and_eval("__pgtable_l5_enabled")):
        raise gdb.GdbError("5-level paging is not supported")
    sym = gdb.lookup_global_symbol("page_offset_base")
    page_offset = ulong(sym.value()) if sym else 0xFFFF888000000000
    return ([("pgd", 39), ("pud", 30), ("pmd", 21), ("pte", 12)],
            X86_PFN_MASK, page_offset, True)


def page_table_entry(mm, addr):
    """The last level entry for addr (or a huge one) and its level name."""
    levels, mask, physmap, huge = table_layout()
    table = ulong(mm["pgd"])
    for name, shift in levels:
        e = read_u64(table + ((addr >> shift) & 511) * 8)
        if name == "pte":
            return e, name
        if not e & 1:
            return None, name
        if huge and name in ("pud", "pmd") and e & 0x80:
            return e, name
        table = physmap + (e & mask)


def prot_str(r, w, x):
    return ("r" if r else "-") + ("w" if w else "-") + ("x" if x else "-")


def swap_entry(e):
    if is_uml():
        return (e >> 5) & 0x1F, e >> 11
    # arch/x86/include/asm/pgtable_64.h: type in the top 5 bits, the
    # offset inverted from bit 9 (the L1TF mitigation)
    return e >> 59, ((~e & M64) << 5 & M64) >> 14


def page_line(mm, vma, addr):
    e, level = page_table_entry(mm, addr)
    linear = ulong(vma["vm_pgoff"]) + ((addr - ulong(vma["vm_start"])) >> PAGE_SHIFT)
    head = "0x%x" % addr
    if e is None:
        return "%s %s none (no page table): linear pgoff 0x%x" % (head, level, linear)
    uml = is_uml()
    if uml:
        present, protnone = e & 1, not e & 1 and e & 0x10
        # UML has no NX bit: what can be read can be executed
        bits = ((0x2, "newpage"), (0x4, "newprot"), (0x80, "accessed"),
                (0x100, "dirty")) if present else ((0x2, "newpage"),)
        extra = [n for b, n in bits if e & b]
        r = w = x = False
        if present:
            r, w, x = e & 0x40, e & 0x20, e & 0x40
        pfn = (e & PAGE_MASK) >> PAGE_SHIFT
        empty = (e & ~0x2) == 0
    else:
        present, protnone = e & 1, not e & 1 and e & 0x100
        extra = [n for b, n in ((0x20, "accessed"), (0x40, "dirty"),
                                (0x80, "huge")) if present and e & b]
        r, w, x = present and e & 4, present and e & 2, present and not e >> 63
        pfn = (e & X86_PFN_MASK) >> PAGE_SHIFT
        empty = e == 0
    tail = (" " + " ".join(extra)) if extra else ""
    if present or protnone:
        if protnone:
            r = w = x = False
        index = ulong(pfn_to_page(pfn)["index"])
        state = "present" if present else "present-protnone"
        return "%s %s 0x%x %s prot %s pgoff 0x%x pfn 0x%x%s" % (
            head, level, e, state, prot_str(r, w, x), index, pfn, tail)
    if empty:
        return "%s %s 0x%x none: linear pgoff 0x%x%s" % (head, level, e, linear, tail)
    typ, off = swap_entry(e)
    if typ in (SWP_FILE, SWP_FILE_POISON):
        prot = off & ((1 << SWP_FILE_PROT_BITS) - 1)
        return "%s %s 0x%x %s prot %s pgoff 0x%x%s" % (
            head, level, e,
            "swp_file" if typ == SWP_FILE else "swp_file_poison",
            prot_str(prot & 1, prot & 2, prot & 4),
            off >> SWP_FILE_PROT_BITS, tail)
    return "%s %s 0x%x swap type %d offset 0x%x%s" % (head, level, e, typ, off, tail)


def parse(arg, n):
    argv = gdb.string_to_argv(arg)
    if len(argv) < 2 or len(argv) > n:
        raise gdb.GdbError("usage: TASK ADDR" + (" [COUNT]" if n > 2 else ""))
    task = find_task(argv[0])
    addr = int(gdb.parse_and_eval(argv[1])) & M64
    count = int(gdb.parse_and_eval(argv[2])) if len(argv) > 2 else 1
    mm = task_mm(task)
    vma = find_vma(mm, addr)
    gdb.write("task %d %s mm 0x%x\n" % (int(task["pid"]), task["comm"].string(), ulong(mm)))
    if vma is None:
        raise gdb.GdbError("no VMA at 0x%x" % addr)
    gdb.write(vma_line(vma) + "\n")
    return mm, vma, addr & PAGE_MASK, count


class MpVma(gdb.Command):
    """mp-vma TASK ADDR: the VMA of TASK (pid, name or "current") at ADDR."""

    def __init__(self):
        super(MpVma, self).__init__("mp-vma", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        parse(arg, 2)


class MpPage(gdb.Command):
    """mp-page TASK ADDR [COUNT]: the VMA at ADDR and each page's entry.

TASK is a pid, a command name or "current".  A present page shows its
protection, file offset (page->index) and pfn; a non-present page of a
nonlinear VMA its SWP_FILE entry (protection and file offset); an empty
entry the linear offset the VMA gives it.  On UML, _PAGE_NEWPAGE and
_PAGE_NEWPROT show as newpage and newprot."""

    def __init__(self):
        super(MpPage, self).__init__("mp-page", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        mm, vma, addr, count = parse(arg, 3)
        for i in range(count):
            a = addr + (i << PAGE_SHIFT)
            if a >= ulong(vma["vm_end"]):
                break
            gdb.write(page_line(mm, vma, a) + "\n")


MpVma()
MpPage()
