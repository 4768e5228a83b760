# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The starting side of the command channel, sourced by qemu/run (on the
# host, for the QEMU guest) and run-uml (in the QEMU guest, for UML; from
# /usr/local/share/manyprots).  The control directory is shared with the
# machine that runs CMD, whose guest-init sources DIR/env, writes CMD's
# stdout and stderr to DIR/stdout and DIR/stderr and its status to
# DIR/status.  Files, not a terminal: the output stays apart and nobody can
# hang it up.

# ctl_env DIR: the variables MANYPROTS_FORWARD names that are set here, and
# MANYPROTS_FORWARD itself, as exports in DIR/env
ctl_env() {
	local v
	for v in ${MANYPROTS_FORWARD-}; do
		[ -z "${!v+set}" ] || printf 'export %s=%q\n' "$v" "${!v}"
	done > "$1/env"
	# the names on one line, as the machine's own starter passes them on
	# shellcheck disable=SC2086,SC2116
	printf 'export MANYPROTS_FORWARD=%q\n' "$(echo ${MANYPROTS_FORWARD-})" >> "$1/env"
}

# ctl_follow DIR: copy DIR/stdout to our stdout and DIR/stderr to our
# stderr as they grow, until ctl_unfollow.  The readers follow a sentinel
# process rather than the machine, so their last read comes after the
# machine has ended.  tail polls: a guest kernel may have no inotify, and
# tail would say so on stderr.
ctl_sentinel='' ctl_readers=''
ctl_follow() {
	: > "$1/stdout"
	: > "$1/stderr"
	sleep infinity &
	ctl_sentinel=$!
	_ctl_tail "$1/stdout" &
	ctl_readers=$!
	_ctl_tail "$1/stderr" >&2 &
	ctl_readers="$ctl_readers $!"
}
_ctl_tail() {
	tail ---disable-inotify -n +1 -s 0.2 -f --pid="$ctl_sentinel" "$1"
}

# ctl_unfollow: end the readers after their last read; fails as a reader
# did.  Harmless twice, so an EXIT trap may call it too.
ctl_unfollow() {
	local r rc=0
	[ -n "$ctl_sentinel" ] || return 0
	{ kill "$ctl_sentinel"; wait "$ctl_sentinel"; } 2> /dev/null || :
	ctl_sentinel=
	for r in $ctl_readers; do
		wait "$r" || rc=$?
	done
	return $rc
}
