# Entry points.  `make test` and `make bench` do everything from a fresh
# Debian 12 clone (as root they apt-get what is missing).
#
#   make test     build the kernels (x86_64 and UML with the series, stock
#                 x86_64) and the images, run the guest tests in QEMU and in
#                 UML inside it, the baseline on stock 6.1, print
#                 "N passed, N failed"
#   make test KASAN=1  the guest tests once, at the qemu level, on a generic
#                 KASAN build of the guest kernel (build/x86_64-kasan); not CI
#   make bench    per-page mappings against one collapsed VMA, in the QEMU
#                 guest and in UML inside it: build/bench/REPORT.md, plots
#                 (QUICK=1: fewer sizes and runs, about 10 minutes)
#   make run      interactive shell in the QEMU guest (run-uml starts UML)
#   make gdb-uml / gdb-kernel / gdb-attach  gdb on UML in the guest, on the
#                 guest kernel through QEMU's gdb stub (below)
#   make lint     scripts/checkpatch.pl --strict on every patch in patches/
#   make fuzz     a soak by the differential fuzzer (guest-tests/rfp_fuzz.c)
#                 in the QEMU guest: SECONDS=600 SEED= MODE=single|threads
#                 UML=1 (in UML inside it) KERNEL=kasan|PATH (scripts/fuzz);
#                 uses the kernels and images of BUILD as built, never
#                 rebuilds them
#   make bisect-check  build every prefix of the series (x86_64 and um, W=1
#                 on the files it touches) and boot each x86_64 one to the
#                 qemu level's first test (scripts/bisect-check: FROM= TO=);
#                 hours, not part of make test
#   make test-clean-root  what CI (.ci/run) does: make test in a throw-away
#                 minimal Debian root (scripts/clean-root), in build/clean-root
#   make kernels / kernel-stock / images / guest-tests / selftests-vm / tree: the build steps alone
#   make clean    remove build/ (caches in $(CACHE) stay)

BUILD ?= $(CURDIR)/build
CACHE ?= $(shell MANYPROTS_CACHE= . ./scripts/cache.sh && echo "$$cache")
MANYPROTS_CACHE := $(CACHE)
export BUILD MANYPROTS_CACHE

TREE := $(BUILD)/linux
KX := $(BUILD)/x86_64
KU := $(BUILD)/um
KS := $(BUILD)/x86_64-stock
KK := $(BUILD)/x86_64-kasan
IMG := $(BUILD)/images
ROOTFS_TAR := $(CACHE)/bookworm-minbase.tar
PATCHES := $(shell scripts/list-entries patches/series 2>/dev/null)

.PHONY: all test test-clean-root bench run lint fuzz deps tree kernels kernel-x86_64 \
	kernel-um kernel-stock kernel-kasan guest-tests selftests-vm images clean FORCE \
	gdb-uml gdb-kernel gdb-attach bisect-check
all: kernels images

deps:
	@scripts/install-deps

tree: deps
	@scripts/prepare-tree $(TREE)

kernels: kernel-x86_64 kernel-um
kernel-x86_64: $(KX)/arch/x86/boot/bzImage
kernel-um: $(KU)/linux
kernel-stock: $(KS)/arch/x86/boot/bzImage
kernel-kasan: $(KK)/arch/x86/boot/bzImage

# Always handed to the kernel's own make, which knows what is up to date;
# dependents see a new file only when it really changed.
$(KX)/arch/x86/boot/bzImage: tree FORCE
	@scripts/build-kernel x86_64 $(TREE) $(KX)
$(KU)/linux: tree FORCE
	@scripts/build-kernel um $(TREE) $(KU)
# The baseline that make test boots third (make test only): the tree's tag
# "base" (the Debian source without the series) extracted into
# build/stock/linux, built with the guest config less CONFIG_MANYPROTS.
$(KS)/arch/x86/boot/bzImage: tree FORCE
	@scripts/build-stock-kernel $(TREE) $(BUILD)/stock $(KS)
# make test KASAN=1 only: the patched guest kernel with generic KASAN
# (qemu/kasan.config merged on top of qemu/guest.config)
$(KK)/arch/x86/boot/bzImage: tree FORCE
	@EXTRA_CONFIG=$(CURDIR)/qemu/kasan.config scripts/build-kernel x86_64 $(TREE) $(KK)

# The stamp changes only when a test binary changed (guest-tests/Makefile).
GT_STAMP := $(BUILD)/guest-tests/.stamp
guest-tests: $(GT_STAMP)
$(GT_STAMP): $(KX)/arch/x86/boot/bzImage FORCE
	@$(MAKE) -s -C guest-tests TREE=$(TREE) HDR=$(KX)/usr/include OUT=$(BUILD)/guest-tests

# The tree's own tools/testing/selftests/vm programs that selftests/vm.list
# names, for the QEMU image; the stamp changes only when a program or the
# list changed (scripts/build-selftests-vm).
SV_STAMP := $(BUILD)/selftests-vm/.stamp
selftests-vm: $(SV_STAMP)
$(SV_STAMP): $(KX)/arch/x86/boot/bzImage selftests/vm.list FORCE
	@scripts/build-selftests-vm $(TREE) $(KX)/usr/include $(BUILD)/selftests-vm selftests/vm.list

# UML as a host client of remap_file_pages(MAP_CHGPROT), checked from the
# QEMU guest (uml-rootfs/hostmm-check): the workload UML runs goes into
# both images, the QEMU guest's peek helper into guest.img.  Static like
# the guest tests; plain libc, no kernel headers.
HM := $(BUILD)/hostmm
$(HM)/%: uml-rootfs/%.c
	@mkdir -p $(HM)
	@echo "hostmm: building $*"
	@$(CC) -O2 -g -Wall -Werror -static -o $@ $<

# The program the gdb tests follow (gdb/chgprot-fault.c): MAP_CHGPROT from
# the patched uapi headers, in both images.
GDBT := $(BUILD)/gdb/chgprot-fault
$(GDBT): gdb/chgprot-fault.c $(KX)/arch/x86/boot/bzImage
	@mkdir -p $(@D)
	@echo "gdb: building chgprot-fault"
	@$(CC) -O2 -g -Wall -Werror -static -isystem $(KX)/usr/include -o $@.tmp $< && \
		if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(ROOTFS_TAR): | deps
	@mkdir -p $(CACHE)
	@scripts/debootstrap-base $@

GUEST_FILES := qemu/guest-init guest-tests/guest-run-tests scripts/mkimage $(ROOTFS_TAR) \
	$(HM)/scatter-touch $(GDBT)
$(IMG)/uml.img: $(GUEST_FILES) $(GT_STAMP)
	@scripts/mkimage uml $(BUILD)
$(IMG)/guest.img: $(IMG)/uml.img $(KU)/linux uml-rootfs/run-uml qemu/ctl-channel.sh $(GUEST_FILES) \
		$(SV_STAMP) selftests/run-vm selftests/kselftest-vm selftests/status-word.sh uml-rootfs/hostmm-check $(HM)/hostmm-peek \
		gdb/uml.gdb gdb/manyprots.py
	@scripts/mkimage qemu $(BUILD)
images: $(IMG)/guest.img

# KASAN=1: the guest tests once on the KASAN kernel instead
# (scripts/host-run-tests-kasan); not part of CI
KASAN ?=
ifneq ($(filter-out 0,$(KASAN)),)
test: kernel-kasan images
	@scripts/host-run-tests-kasan
else
# The stock kernel is not a prerequisite: scripts/host-run-tests builds it
# (make kernel-stock, niced) while the first two boots run, which leave
# most of one CPU idle under TCG, and waits for it before the stock boot.
test: kernels images
	@scripts/host-run-tests
endif

# gdb on the kernels (README, "Debugging with gdb"); ARGS go to the script:
#   make gdb-uml [ARGS='--addr 0x2000003000 -- chgprot-fault']
#       UML under gdb in the QEMU guest, on this terminal
#   make gdb-kernel [ARGS='-- run-uml -- chgprot-fault']
#       the guest with QEMU's gdb stub; then in another terminal:
#   make gdb-attach   gdb on vmlinux, attached, with the lx- and mp- commands
ARGS ?=
gdb-uml: kernels images
	@qemu/gdb-uml $(ARGS)
gdb-kernel: kernels images
	@qemu/gdb-kernel $(ARGS)
gdb-attach:
	@qemu/gdb-kernel --attach $(ARGS)

# CI's run (.ci/run): scripts/install-deps and make test in a throw-away
# Debian root with only minbase, so that a package install-deps forgot
# fails here.  Its own build directory, emptied first: a fresh machine's
# build, and this tree's build/ stays as it is.
test-clean-root:
	rm -rf $(BUILD)/clean-root
	@BUILD=$(BUILD)/clean-root .ci/run

# QUICK=1: the short bench (bench/run --quick)
QUICK ?=
bench: kernels images
	@bench/run $(if $(filter-out 0,$(QUICK)),--quick)

run: kernels images
	@qemu/run

# make fuzz: no prerequisites on purpose, a soak runs against whatever
# kernel is built (or KERNEL=kasan, KERNEL=<bzImage or build dir>) and
# never rebuilds it under a long run; scripts/fuzz says what is missing
SECONDS ?= 600
SEED ?=
MODE ?= single
UML ?=
KERNEL ?=
fuzz:
	@scripts/fuzz --seconds $(SECONDS) --mode $(MODE) $(if $(SEED),--seed $(SEED)) \
		$(if $(filter-out 0,$(UML)),--uml) $(if $(KERNEL),--kernel $(KERNEL))

FROM ?= 0
TO ?=
bisect-check: tree images
	@scripts/bisect-check --from $(FROM) $(if $(TO),--to $(TO))

lint: tree
	@scripts/lint $(TREE) $(PATCHES)

clean:
	rm -rf $(BUILD)
