# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034	# opt, optarg, optn: the sourcing script's
# Sourced by the host-side scripts: one way with options for all of them.
# (The scripts the guest images carry alone, run-uml, hostmm-check and
# the other guest-side helpers, follow the same rules in a few lines of
# their own.)
#
#   - GNU long options: --name VALUE and --name=VALUE alike;
#   - -h or --help anywhere before "--": the usage on stdout, exit 0;
#   - a usage error (an unknown option, a missing or bad value, a wrong
#     number of arguments): "PROG: the problem" on stderr, exit 2;
#   - every other failure keeps the script's own exit status.
#
# PROG is opt_prog, by default the script's path in the repository
# (qemu/run, scripts/fuzz).  A script's usage function prints its usage on
# stdout.  The parsing loop of a script with options:
#
#	while [ $# -gt 0 ]; do
#		opt_split "$1"
#		case $opt in
#		-m|--mem) opt_value "$@"; mem=$optarg ;;	# takes a value
#		--uml) opt_flag; uml=1 ;;			# takes none
#		-h|--help) usage; exit 0 ;;
#		--) shift; break ;;
#		*) opt_unknown ;;
#		esac
#		shift "$optn"
#	done
#
# A script of positional arguments only: opt_positional "$@" (-h, --help
# or an unknown option), then opt_nargs MIN MAX $# (MAX "": no limit).

opt_prog=${opt_prog:-$(basename "$(dirname "$0")")/$(basename "$0")}

# opt_die PROBLEM...: a usage error
opt_die() {
	printf '%s: %s\n' "$opt_prog" "$*" >&2
	printf "Try '%s --help' for more information.\n" "$opt_prog" >&2
	exit 2
}

# opt_split ARG: opt is ARG's option name (ARG itself unless --name=VALUE),
# optarg the value after "=", optn 1 (what the loop shifts)
opt_split() {
	optn=1 optarg='' opt_inline=0
	case $1 in
	--?*=*) opt=${1%%=*} optarg=${1#*=} opt_inline=1 ;;
	*) opt=$1 ;;
	esac
}

# opt_value "$@": the current option takes a value: optarg, from
# --name=VALUE or the next argument (then optn is 2)
opt_value() {
	[ "$opt_inline" = 0 ] || return 0
	# (a "--" after it: the value was left out)
	if [ $# -lt 2 ] || [ "$2" = -- ]; then opt_die "option $opt needs a value"; fi
	optarg=$2 optn=2
}

# opt_flag: the current option takes no value
opt_flag() {
	[ "$opt_inline" = 0 ] || opt_die "option $opt takes no value"
}

# opt_unknown: the current argument is no option of this script
opt_unknown() {
	case $opt in
	-?*) opt_die "unknown option $opt" ;;
	*) opt_die "unexpected argument '$opt'" ;;
	esac
}

# opt_positional "$@": for a script that takes no option: -h or --help
# anywhere prints the usage and exits 0, any other -X or --XYZ (up to a
# "--") is a usage error
opt_positional() {
	local a
	for a; do
		case $a in
		--) return 0 ;;
		-h|--help) usage; exit 0 ;;
		-?*) opt=$a; opt_unknown ;;
		esac
	done
}

# opt_nargs MIN MAX N: N arguments are MIN to MAX of them (MAX "": any)
opt_nargs() {
	local want
	[ "$3" -ge "$1" ] && { [ -z "$2" ] || [ "$3" -le "$2" ]; } && return 0
	if [ -z "$2" ]; then want="at least $1"
	elif [ "$1" = "$2" ]; then want=$1
	else want="$1 to $2"; fi
	opt_die "wrong number of arguments: $3 (want $want)"
}

# opt_header FILE: FILE's first comment block, less its "#!" and SPDX
# lines: the usage of a script that keeps it there
opt_header() {
	awk 'NR == 1 && /^#!/ { next } /SPDX-License-Identifier/ { next }
		!/^#/ { exit } { sub(/^# ?/, ""); print }' "$1"
}
