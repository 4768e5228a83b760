# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced by selftests/run-vm (in the QEMU guest, from
# /usr/local/share/manyprots) and scripts/selftests-vm-compare (on the host).
#
# status_word STATUS: what a selftests/vm program's exit status says, as the
# progress lines and the TAP results show it: pass (0), skip (4, as in
# kselftest), timeout (124: timeout(1)'s limit; 137: its KILL), "failed,
# exit N" for any other N, "no result" for none (empty: the boot gave no
# result for the program).
status_word() {
	case $1 in
	'') echo "no result" ;;
	0) echo pass ;;
	4) echo skip ;;
	124|137) echo timeout ;;
	*) echo "failed, exit $1" ;;
	esac
}
