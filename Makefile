# Entry points: `make help` (the default) lists them.  `make test` and
# `make bench` do everything from a fresh Debian 12 clone (as root they
# apt-get what is missing).  The lines starting "#>" are make help's text;
# times are for a 2-core machine under TCG (README: what they were
# measured on).
#
#> make bench        the main job: one VMA per page against one collapsed VMA,
#>                   in the QEMU guest and in UML inside it; build/bench/REPORT.md
#>                   and plots (about 70 min after the builds; QUICK=1: 5 min);
#>                   on release kernels (KERNEL=debug: the test kernels)
#> make test         build everything, run every test in three QEMU boots (the
#>                   series on, manyprots=off, stock 6.1) and UML inside them;
#>                   ends "N passed, N failed" (cold 50 to 80 min by machine,
#>                   warm 45 min)
#> make run          a shell in the QEMU guest; run-uml in it starts UML
#>                   (boot about 15 s)
#> make example      build examples/chgprot-example.c, MAP_CHGPROT in a program
#>                   of one's own, and run it in the QEMU guest (about 40 s)
#> make gdb-uml      UML under gdb in the guest, on this terminal (ARGS=...)
#> make gdb-kernel   the guest with QEMU's gdb stub (ARGS=...); then in a
#>                   second terminal: make gdb-attach
#> make lint         checkpatch.pl --strict on every patch, the cover letter
#>                   and README's series table against patches/series (1 min)
#> make fuzz         a soak of the differential fuzzer in the guest: SECONDS=600
#>                   SEED= MODE=single|threads UML=1 KERNEL=kasan|PATH
#>                   (SECONDS plus a boot; never rebuilds)
#> make bisect-check every prefix of the series built (x86_64, um, W=1) and
#>                   booted to the first test: FROM= TO= (about 2 h; not CI)
#> make test KASAN=1 the guest tests once on a KASAN build (not CI; its cold
#>                   build about 50 min, the boot 3 min)
#> make test-clean-root  what CI (.ci/run) does: make test in a throw-away
#>                   minimal Debian root, in build/clean-root (as make test,
#>                   plus a few minutes)
#> make kernels      build/x86_64 and build/um (cold about 10 and 7 min with
#>                   ccache empty, seconds when nothing changed)
#> make kernel-stock the stock 6.1 baseline, build/x86_64-stock (cold 10 min)
#> make kernel-release  the release guest kernel and UML make bench boots,
#>                   build/x86_64-release and build/um-release (cold about
#>                   6 and 4 min)
#> make images       the guest and UML images (4 min the first time)
#> make tree         extract linux-source-6.1 into build/linux and apply the
#>                   series (1 min)
#> make guest-tests / selftests-vm / deps   one build step (seconds)
#> make clean        remove build/ but build/dev/; the caches stay
#>                   (/var/cache/manyprots, CACHE=DIR)
#> make help         this text

# KVER: the kernel, 6.1 (the default) or 6.12 (scripts/kver.sh): its
# series in patches/KVER, its build in build/ (6.1) or build/6.12
KVER ?= 6.1
ifeq ($(filter 6.1 6.12,$(KVER)),)
$(error KVER=$(KVER): want 6.1 or 6.12)
endif
BUILD ?= $(CURDIR)/build$(if $(filter 6.12,$(KVER)),/6.12)
CACHE ?= $(shell MANYPROTS_CACHE= . ./scripts/cache.sh && echo "$$cache")
MANYPROTS_CACHE := $(CACHE)
export BUILD MANYPROTS_CACHE KVER

TREE := $(BUILD)/linux
KX := $(BUILD)/x86_64
KU := $(BUILD)/um
KS := $(BUILD)/x86_64-stock
KK := $(BUILD)/x86_64-kasan
KR := $(BUILD)/x86_64-release
KUR := $(BUILD)/um-release
IMG := $(BUILD)/images
ROOTFS_TAR := $(CACHE)/bookworm-minbase.tar
PATCHES := $(shell scripts/list-entries patches/$(KVER)/series 2>/dev/null)
# the tree's vm selftests directory (mm since 6.3) and what the guest runs
SVLIST := selftests/$(if $(filter 6.1,$(KVER)),vm,mm).list

.PHONY: all test test-clean-root bench run lint fuzz deps tree kernels kernel-x86_64 \
	kernel-um kernel-stock kernel-kasan kernel-release guest-tests selftests-vm images clean FORCE \
	gdb-uml gdb-kernel gdb-attach bisect-check help
help:
	@sed -n 's/^#> \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
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
kernel-release: $(KR)/arch/x86/boot/bzImage $(KUR)/linux

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
# make bench: the kernels users run, the guest's and UML's debug options
# as Debian's (qemu/release.config, uml-rootfs/release.config), no debug
# info (bench/run boots them)
$(KR)/arch/x86/boot/bzImage: tree FORCE
	@NO_DEBUG_INFO=1 EXTRA_CONFIG=$(CURDIR)/qemu/release.config \
		scripts/build-kernel x86_64 $(TREE) $(KR)
$(KUR)/linux: tree FORCE
	@NO_DEBUG_INFO=1 EXTRA_CONFIG=$(CURDIR)/uml-rootfs/release.config \
		scripts/build-kernel um $(TREE) $(KUR)

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
$(SV_STAMP): $(KX)/arch/x86/boot/bzImage $(SVLIST) FORCE
	@scripts/build-selftests-vm $(TREE) $(KX)/usr/include $(BUILD)/selftests-vm $(SVLIST)

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
# A static program against the patched uapi headers, replaced only when it
# changed (the images depend on it); $(1) names it in the progress line.
define uapi_prog
	@mkdir -p $(@D)
	@echo "$(1): building $(@F)"
	@$(CC) -O2 -g -Wall -Werror -static -isystem $(KX)/usr/include -o $@.tmp $< && \
		if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
endef
GDBT := $(BUILD)/gdb/chgprot-fault
$(GDBT): gdb/chgprot-fault.c $(KX)/arch/x86/boot/bzImage
	$(call uapi_prog,gdb)

# The example of README's "Using MAP_CHGPROT in your own program"
# (examples/chgprot-example.c): built like chgprot-fault, in both images
# (/usr/local/bin), where the guest test guest-tests/examples.c runs it at
# every guest-tests level of scripts/test-levels and checks the way it
# took (MAP_CHGPROT or the per-page fallback) against the level's.  make
# example runs it once in the QEMU guest.
EXAMPLE := $(BUILD)/examples/chgprot-example
$(EXAMPLE): examples/chgprot-example.c $(KX)/arch/x86/boot/bzImage
	$(call uapi_prog,examples)
.PHONY: example
example: kernels images
	@qemu/run -- chgprot-example

$(ROOTFS_TAR): | deps
	@mkdir -p $(CACHE)
	@scripts/debootstrap-base $@

GUEST_FILES := qemu/guest-init guest-tests/guest-run-tests scripts/mkimage $(ROOTFS_TAR) \
	$(HM)/scatter-touch $(GDBT) $(EXAMPLE)
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
# (make kernel-stock, niced) and boots it beside the first two boots,
# which leave most of one CPU idle under TCG.
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
# KERNEL=debug: the test kernels instead of the release ones
BENCH_KERNEL := $(or $(KERNEL),release)
ifeq ($(BENCH_KERNEL),release)
bench: kernel-release
endif
bench: kernels images
	@bench/run --kernel $(BENCH_KERNEL) $(if $(filter-out 0,$(QUICK)),--quick)

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

# build/dev/ is the working tree README tells a developer to create;
# build/6.12 is KVER=6.12's build
clean:
	@[ ! -d $(BUILD) ] || find $(BUILD) -mindepth 1 -maxdepth 1 ! -name dev ! -name 6.12 -exec rm -rf {} +
	@echo "clean: $(BUILD) emptied$(if $(wildcard $(BUILD)/dev), but for $(BUILD)/dev)"
