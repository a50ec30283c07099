#!/usr/bin/env bash
# Rate control's cost per message, counted rather than timed (see rc_cost.rs). For each
# test, callgrind's instruction totals (both agents, user space) at a low and a high message
# count, reserved (rc) and not (none), REPS times each in alternating order: a run pair's
# (high - low) / (high count - low count) is one sample of instructions per message, start-up
# and shut-down cancelling. Then natively, CPU time per message (getrusage, user + system)
# over long runs, REPS alternating pairs. One line per run:
#   callgrind MODE TEST SIZE COUNT INSTRUCTIONS
#   cpu {json}
# Usage: rc_cost.sh [REPS] [callgrind|cpu|both]   (from the repository root)
set -euo pipefail
reps=${1:-6}
what=${2:-both}
cargo build --release -q -p qosnet-net --example rc_cost
bin=target/release/examples/rc_cost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# test size low-count high-count
tests=("pingpong 4 2000 8000" "pingpong 4096 2000 8000" "pingpong 65536 500 2000"
       "stream 4096 2000 8000" "stream 65536 500 2000")
if [ "$what" != cpu ]; then
    for t in "${tests[@]}"; do
        set -- $t
        for r in $(seq "$reps"); do
            modes="none rc"
            [ $((r % 2)) = 0 ] && modes="rc none"
            for mode in $modes; do
                for count in "$3" "$4"; do
                    valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$tmp/out" \
                        "$bin" "$mode" "$1" "$2" "$count" >/dev/null 2>"$tmp/err"
                    ir=$(grep -o 'Collected : [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
                    echo "callgrind $mode $1 $2 $count $ir"
                done
            done
        done
    done
fi
if [ "$what" != callgrind ]; then
    for t in "${tests[@]}"; do
        set -- $t
        count=$(( $4 * 3 ))
        for r in $(seq "$reps"); do
            modes="none rc"
            [ $((r % 2)) = 0 ] && modes="rc none"
            for mode in $modes; do
                echo "cpu $("$bin" "$mode" "$1" "$2" "$count")"
            done
        done
    done
fi
