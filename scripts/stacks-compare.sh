#!/usr/bin/env bash
# stacks-compare.sh: what watching a pinned futex ping-pong's stacks costs
# with ctxtop --stacks, perf sched record (with and without -g) and a
# bpftrace script modelled on offwaketime (scripts/offwaketime.bt), side by
# side on the same box.
#
# One `ctxtop load --mode futex --cpus C` runs throughout, pinned to the last
# CPU; it prints its ns per round trip once a second. The tools run in turn
# under it, each for a window between two windows with nothing attached
# (alone), round after round, so drift on a shared host hits a tool and its
# neighbours alike. A window's figure is the median of its per-second ns
# per round trip (a second the host starved the ping-pong in does not
# swamp it; the per-second figures are printed on stderr), a tool's is its
# window's over the mean of the alone windows either side, the median
# over rounds. Each round starts with the next tool, so no tool always
# follows the same one.
# The tools themselves (their user-space side) are pinned off that CPU; what
# they do in the kernel at each switch happens on it and is what is
# measured. A tool's first WARMUP seconds (attaching, ctxtop's first report
# that sets its sampling) are not measured.
#
# Usage: sudo scripts/stacks-compare.sh [path/to/ctxtop]   (default bin/ctxtop)
# Environment: MODE the load's mode (futex, the default, or pipe), TOOLS
#   which of the tools to run (default all: ctxtop ctxtop-fp perf-sched
#   perf-sched-g perf-dwarf bpftrace), ROUNDS (default 7), WINDOW seconds measured (default 3),
#   WARMUP seconds (default 2), SETTLE seconds after a tool exits before
#   its alone window's warm-up (default 2), KEEP=dir keeps each tool's
#   output there.
# Needs root, perf and bpftrace; a tool that is missing is skipped.
set -euo pipefail

bin=$(realpath "${1:-bin/ctxtop}")
rounds=${ROUNDS:-7}
window=${WINDOW:-3}
warmup=${WARMUP:-2}
settle=${SETTLE:-2}
here=$(cd "$(dirname "$0")" && pwd)

if [[ $(id -u) != 0 ]]; then
	echo "stacks-compare: needs root (BPF, perf's system-wide tracepoints)" >&2
	exit 2
fi
ncpu=$(nproc)
cpu=$((ncpu - 1))
others=0
if ((ncpu > 1)); then others=0-$((cpu - 1)); fi
# The tools' own threads; in front of each tool, so that $! is the tool.
pin=(taskset -c "$others")

# In memory: perf writes hundreds of MB, whose writeback to a disk would
# go on into the next alone window.
work=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
keep=${KEEP:-}
cleanup() {
	[[ -n ${tool_pid:-} ]] && kill -INT "$tool_pid" 2>/dev/null && wait "$tool_pid" 2>/dev/null
	[[ -n ${load_pid:-} ]] && kill -INT "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
	if [[ -n $keep ]]; then mkdir -p "$keep" && cp -r "$work"/. "$keep"/; fi
	rm -rf "$work"
}
trap cleanup EXIT

mode=${MODE:-futex}
"$bin" load --mode "$mode" --cpus "$cpu" --duration 0 >"$work/load.txt" 2>&1 &
load_pid=$!
# The ping-pong threads live in the load's workload process, its child.
for _ in $(seq 100); do
	wpid=$(pgrep -P "$load_pid" | head -1 || true)
	[[ -n $wpid ]] && break
	sleep 0.1
done
[[ -n $wpid ]] || { echo "stacks-compare: no workload process" >&2; exit 1; }
sleep 1

# lines: the load's per-second lines so far.
lines() { grep -cE '^ +[0-9.]+s ' "$work/load.txt" || true; }
# measure: WINDOW seconds; prints the median ns per round trip of the
# per-second lines wholly inside it, and them all on stderr.
measure() {
	local a b
	a=$(lines)
	sleep "$window"
	b=$(lines)
	# The first line after the mark may have begun before it.
	grep -E '^ +[0-9.]+s ' "$work/load.txt" | sed -n "$((a + 2)),${b}p" | awk '{gsub(",", "", $3); print $3}' |
		sort -n | awk '{a[NR] = $1; l = l " " $1} END {print "  seconds:" l > "/dev/stderr"; if (NR) print a[int((NR + 1) / 2)]; else print "nan"}'
}

tools=()
tools+=(ctxtop)
start_ctxtop() { "${pin[@]}" "$bin" -b -o json --stacks -p "$wpid" -d 0.5 -n 0 >"$work/ctxtop.$1.json" 2>"$work/ctxtop.$1.err" & tool_pid=$!; }
# Frame-pointer stacks only: no register and stack captures.
tools+=(ctxtop-fp)
start_ctxtop-fp() { "${pin[@]}" "$bin" -b -o json --stacks --stack-bytes 0 -p "$wpid" -d 0.5 -n 0 >"$work/ctxtop-fp.$1.json" 2>"$work/ctxtop-fp.$1.err" & tool_pid=$!; }
if command -v perf >/dev/null; then
	tools+=(perf-sched perf-sched-g perf-dwarf)
	# What unwinds without frame pointers: every event of the process, its stack copied.
	start_perf-dwarf() { "${pin[@]}" perf record -o "$work/perf-dwarf.$1.data" -e sched:sched_switch -e sched:sched_waking --call-graph dwarf -p "$wpid" >/dev/null 2>"$work/perf-dwarf.$1.err" & tool_pid=$!; }
	start_perf-sched() { "${pin[@]}" perf sched record -o "$work/perf-sched.$1.data" >/dev/null 2>"$work/perf-sched.$1.err" & tool_pid=$!; }
	start_perf-sched-g() { "${pin[@]}" perf sched record -g -o "$work/perf-sched-g.$1.data" >/dev/null 2>"$work/perf-sched-g.$1.err" & tool_pid=$!; }
fi
if command -v bpftrace >/dev/null; then
	tools+=(bpftrace)
	start_bpftrace() {
		"${pin[@]}" bpftrace "$here/offwaketime.bt" "$wpid" >"$work/bpftrace.$1.txt" 2>&1 & tool_pid=$!
		# Compiling and attaching takes a second or two: wait for it.
		for _ in $(seq 200); do grep -q '^Attaching' "$work/bpftrace.$1.txt" && break; sleep 0.1; done
	}
fi

if [[ -n ${TOOLS:-} ]]; then
	want=" $TOOLS "
	kept=()
	for t in "${tools[@]}"; do [[ $want == *" $t "* ]] && kept+=("$t"); done
	tools=("${kept[@]}")
fi

stop_tool() {
	kill -INT "$tool_pid" 2>/dev/null || true
	wait "$tool_pid" 2>/dev/null || true
	tool_pid=
	sync
	sleep "$settle" # what the tool's exit left behind (freeing maps, buffers) passes
}

declare -A ratios
before=$(sleep "$warmup"; measure)
for r in $(seq "$rounds"); do
	n=${#tools[@]}
	for i in $(seq 0 $((n - 1))); do
		t=${tools[$(((i + r - 1) % n))]}
		"start_$t" "$r"
		sleep "$warmup"
		on=$(measure)
		stop_tool
		sleep "$warmup"
		after=$(measure)
		ratio=$(awk -v on="$on" -v a="$before" -v b="$after" 'BEGIN {
			n = 0; s = 0
			# A window with no whole second in it (the host starved the
			# ping-pong) has no figure.
			if (a ~ /^[0-9.]+$/) {s += a; n++}
			if (b ~ /^[0-9.]+$/) {s += b; n++}
			if (on !~ /^[0-9.]+$/ || n == 0) print "nan"; else printf "%.3f\n", on * n / s}')
		ratios[$t]+="$ratio "
		printf '%s round %d: %s ns/rt on, %s and %s alone: %s\n' "$t" "$r" "$on" "$before" "$after" "$ratio" >&2
		before=$after
		# perf's files run to hundreds of MB: keep the last round's only.
		if ((r > 1)); then rm -f "$work/$t.$((r - 1)).data"; fi
	done
done

median() { tr ' ' '\n' | grep -v '^$' | grep -v nan | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "nan"}'; }
range() { tr ' ' '\n' | grep -v '^$' | grep -v nan | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "–" hi}'; }
alone=$(grep -E '^ +[0-9.]+s ' "$work/load.txt" | awk '{gsub(",", "", $3); print $3}' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')

# What each leaves to read, from the last round.
lost() { grep -oE 'lost [0-9.]+%' "$work/$1.$rounds.err" | tail -1 | sed 's/$/ of events/' || echo "none lost"; }
size() { du -k "$1" 2>/dev/null | awk '{printf "%.1f MB", $1 / 1024}'; }
echo
echo "pinned $mode ping-pong on CPU $cpu, ${window}s windows, $rounds rounds; alone: median $alone ns a round trip"
echo
echo "| tool | slowdown (median) | rounds | what it leaves |"
echo "|---|---|---|---|"
for t in "${tools[@]}"; do
	case $t in
	ctxtop-fp) what="the same, user stacks by frame pointers only (--stack-bytes 0)" ;;
	perf-dwarf) what="a trace file with a stack copy per event of the process ($(size "$work/perf-dwarf.$rounds.data") for ~$((window + warmup)) s, $(lost perf-dwarf))" ;;
	ctxtop) what="a report every 0.5 s: top-3 blocked-at and woken-from stacks with shares per thread ($(grep -c '"blocked_at"' "$work/ctxtop.$rounds.json" || true) of $(wc -l <"$work/ctxtop.$rounds.json") reports with stacks)" ;;
	perf-sched) what="a trace file to post-process ($(size "$work/perf-sched.$rounds.data") for ~$((window + warmup)) s, $(lost perf-sched)); no stacks" ;;
	perf-sched-g) what="a trace file with a stack per event ($(size "$work/perf-sched-g.$rounds.data") for ~$((window + warmup)) s, $(lost perf-sched-g))" ;;
	bpftrace) what="a text dump at exit ($(wc -l <"$work/bpftrace.$rounds.txt") lines): off-CPU µs per waker and blocked stacks" ;;
	esac
	echo "| $t | $(echo "${ratios[$t]}" | median)× | $(echo "${ratios[$t]}" | range) | $what |"
done
