#!/usr/bin/env bash
# Rate control's cost per message, counted rather than timed (see rc_cost.rs): for each
# test, callgrind's instruction totals of both agents at two message counts, reserved (rc)
# and not (none), in alternating order; then the same natively, CPU time per message
# (getrusage) over long runs, REPS alternating pairs. Prints one line per run:
#   callgrind MODE TEST SIZE COUNT INSTRUCTIONS
#   cpu {json}
# Usage: rc_cost.sh [REPS]   (from the repository root; builds the example in release)
set -euo pipefail
reps=${1:-5}
cargo build --release -q -p qosnet-net --example rc_cost
bin=target/release/examples/rc_cost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests=("pingpong 4" "pingpong 4096" "pingpong 65536" "stream 4096" "stream 65536")
for t in "${tests[@]}"; do
    set -- $t
    for count in 500 1500; do
        for mode in none rc rc none; do
            valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$mode" "$1" "$2" "$count" \
                >/dev/null 2>"$tmp/err"
            ir=$(grep -o 'Collected : [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
            echo "callgrind $mode $1 $2 $count $ir"
        done
    done
done
for t in "${tests[@]}"; do
    set -- $t
    count=20000
    [ "$1" = stream ] && [ "$2" = 65536 ] && count=5000
    for r in $(seq "$reps"); do
        for mode in none rc; do
            [ $((r % 2)) = 0 ] && mode=$([ "$mode" = none ] && echo rc || echo none)
            echo "cpu $("$bin" "$mode" "$1" "$2" "$count")"
        done
    done
done
