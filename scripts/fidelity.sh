#!/usr/bin/env bash
# fidelity.sh: does ctxtop load measure what perf bench sched pipe measures?
#
# On one CPU, back to back, it compares
#   ctxtop load --mode process --cpus C   with   taskset -c C perf bench sched pipe
#   ctxtop load --mode pipe --cpus C      with   taskset -c C perf bench sched pipe -T
# both doing the same number of round trips, a few times each, and fails if
# the median of a pair differs by more than 20%. perf reports usecs/op, one
# op being a round trip, as ctxtop's ns_per_round_trip is.
#
# Usage: scripts/fidelity.sh [path/to/ctxtop]   (default bin/ctxtop; builds nothing)
# Environment: FIDELITY_RUNS (default 3), FIDELITY_LOOPS (default 100000).
set -euo pipefail

bin=${1:-bin/ctxtop}
runs=${FIDELITY_RUNS:-3}
loops=${FIDELITY_LOOPS:-100000}
tolerance=0.20

if ! command -v perf >/dev/null 2>&1; then
	echo "fidelity: perf is not installed; skipping the comparison with perf bench sched pipe"
	exit 0
fi
if ! perf bench sched pipe -l 100 >/dev/null 2>&1; then
	echo "fidelity: perf bench sched pipe does not run here; skipping"
	exit 0
fi
if [[ ! -x $bin ]]; then
	echo "fidelity: $bin is not an executable; build it first (make build)" >&2
	exit 2
fi

# The first CPU this shell may run on.
cpu=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
cpu=${cpu%%[,-]*}

# perf_ns ARGS...: one perf run's nanoseconds per round trip.
perf_ns() {
	taskset -c "$cpu" perf bench sched pipe -l "$loops" "$@" 2>&1 |
		awk '/usecs\/op/ {printf "%.0f\n", $1 * 1000; found = 1} END {exit !found}'
}

# ctxtop_ns MODE: one ctxtop run's nanoseconds per round trip.
ctxtop_ns() {
	"$bin" load --mode "$1" --cpus "$cpu" --round-trips "$loops" -o json |
		sed -n 's/.*"ns_per_round_trip":\([0-9.eE+-]*\).*/\1/p' |
		awk 'NF {printf "%.0f\n", $1; found = 1} END {exit !found}'
}

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

failed=0
# compare LABEL MODE PERF_ARGS...
compare() {
	local label=$1 mode=$2
	shift 2
	local ours=() theirs=() i
	for ((i = 1; i <= runs; i++)); do
		theirs+=("$(perf_ns "$@")")
		ours+=("$(ctxtop_ns "$mode")")
		printf '  %-34s run %d: perf %8s ns   ctxtop %8s ns\n' "$label" "$i" "${theirs[-1]}" "${ours[-1]}"
	done
	local p c
	p=$(printf '%s\n' "${theirs[@]}" | median)
	c=$(printf '%s\n' "${ours[@]}" | median)
	if awk -v c="$c" -v p="$p" -v t="$tolerance" 'BEGIN {r = c / p; exit !(r >= 1 - t && r <= 1 + t)}'; then
		verdict=ok
	else
		verdict="OUTSIDE ±20%"
		failed=1
	fi
	printf '%-36s median: perf %8s ns   ctxtop %8s ns   ratio %s   %s\n' "$label" "$p" "$c" \
		"$(awk -v c="$c" -v p="$p" 'BEGIN {printf "%.2f", c / p}')" "$verdict"
}

echo "fidelity: CPU $cpu, $loops round trips per run, $runs runs per pair"
compare "process vs perf bench sched pipe" process
compare "pipe vs perf bench sched pipe -T" pipe -T
exit "$failed"
