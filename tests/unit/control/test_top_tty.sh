#!/usr/bin/env bash
# `ringwayctl top` in a real terminal, the way a person uses it: a shell in a tmux pane (its
# own tmux server on its own socket) runs `top` against ctl_fake_router --traffic; the test
# reads the screen (tmux capture-pane), checks the frame (header, columns, busiest node first,
# a request rate from two samples), then presses q, and again Ctrl-C, and checks each time
# that top exited 0, left the alternate screen, showed the cursor again and gave the shell its
# terminal modes back (`stty -a` before == after, echo on: typed text is shown).
# TAP output; exit 77 (skip) when tmux is missing (setup-deps installs it).
#   test_top_tty.sh RINGWAYCTL CTL_FAKE_ROUTER
set -u
ctl=$1 fake=$2
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux not installed"; exit 77; }
tmp=$(mktemp -d /tmp/ringway-top-tty-XXXXXX)
tm() { tmux -S "$tmp/tmux.sock" "$@"; }
router=
cleanup() {
	tm kill-server 2>/dev/null
	[ -n "$router" ] && kill "$router" 2>/dev/null && wait "$router" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
n=0 failed=0
ok() { # name, condition status; the screen goes to the log when it fails
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		tm capture-pane -p -t top 2>/dev/null | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}
# wait_for TEXT [SECONDS]: until the pane shows TEXT
wait_for() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		tm capture-pane -p -t top | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

"$fake" --socket "$tmp/ctl.sock" --nodes 4 --traffic >"$tmp/router.out" &
router=$!
for ((i = 0; i < 100; i++)); do [ -S "$tmp/ctl.sock" ] && break; sleep 0.1; done
tm new-session -d -s top -x 100 -y 20 "env -i TERM=screen PS1='$ ' bash --norc --noprofile"
tm send-keys -t top "stty -a > $tmp/stty.before; echo ready" Enter
wait_for ready
for key in q C-c; do
	tm send-keys -t top "clear; '$ctl' --socket '$tmp/ctl.sock' top -d 0.3; echo top-exit=\$?; " \
		"stty -a > $tmp/stty.after; cmp -s $tmp/stty.before $tmp/stty.after && echo stty-same" Enter
	wait_for "RET/REQ" 5
	ok "top ($key): a frame with its columns" $?
	sleep 0.5 # a later frame too: the screen is redrawn in place
	screen=$(tm capture-pane -p -t top)
	[ "$(tm display -p -t top '#{alternate_on}')" = 1 ]
	ok "top ($key): on the alternate screen while running" $?
	[ "$(grep -c 'ringwayctl top - ' <<<"$screen")" = 1 ] &&
		grep -q 'epoch 1  members 4  every 0.3 s' <<<"$screen"
	ok "top ($key): one header, redrawn in place" $?
	grep -A1 '^NODE  ' <<<"$screen" | grep -q '^n4 '
	ok "top ($key): the busiest node (n4) first" $?
	rate=$(awk '$1 == "n4" { print $4 }' <<<"$screen")
	[ -n "$rate" ] && [ "$rate" -gt 2800 ] && [ "$rate" -lt 5200 ]
	ok "top ($key): n4's rate from two samples ($rate/s, about 4000)" $?
	tm send-keys -t top "$key"
	wait_for stty-same 5 && tm capture-pane -p -t top | grep -q 'top-exit=0'
	ok "top ($key): exit 0 and the shell's terminal modes back" $?
	[ "$(tm display -p -t top '#{alternate_on} #{cursor_flag}')" = "0 1" ]
	ok "top ($key): off the alternate screen, cursor shown" $?
	tm send-keys -t top "echo typed-$key" Enter
	wait_for "$ echo typed-$key" 3
	ok "top ($key): the shell echoes typed text again" $?
done
echo "1..$n"
[ "$failed" = 0 ]
