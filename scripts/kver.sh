# SPDX-License-Identifier: GPL-2.0
# The kernel the project works on, KVER: 6.1 (the default) or 6.12, both
# Debian 12's linux-source-* packages.  Sourced by the scripts that depend
# on it, after they set $top; sets:
#   kver      6.1 or 6.12
#   patchdir  patches/KVER, the series (its "series" file and patches)
#   srcpkg    Debian's source package, linux-source-KVER
#   tarball   its tarball in /usr/src (LINUX_TARBALL overrides)
#   svdir     the tree's vm selftests directory: vm in 6.1, mm since 6.3
#   svlist    the selftests the guest runs from it, selftests/SVDIR.list
#   kbuild    the default build directory: build/ for 6.1, build/KVER else
kver=${KVER:-6.1}
case $kver in
6.1) svdir=vm kbuild=$top/build ;;
6.12) svdir=mm kbuild=$top/build/6.12 ;;
*) echo "KVER=$kver: want 6.1 or 6.12" >&2; exit 2 ;;
esac
patchdir=$top/patches/$kver
srcpkg=linux-source-$kver
tarball=${LINUX_TARBALL:-/usr/src/$srcpkg.tar.xz}
svlist=$top/selftests/$svdir.list
