# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced: sets cache to the project cache directory (ccache, the rootfs
# tarballs, downloaded packages, qemu/run's KVM probe answer), an absolute
# path: MANYPROTS_CACHE, default /var/cache/manyprots.  The Makefile sets
# MANYPROTS_CACHE from CACHE= for everything it runs.
# shellcheck disable=SC2034	# used by the scripts that source this
cache=$(realpath -m -- "${MANYPROTS_CACHE:-/var/cache/manyprots}")
