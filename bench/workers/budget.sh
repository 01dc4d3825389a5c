#!/usr/bin/env bash
# The states a check explores before its --time budget runs out, on 1
# worker and on 2 (issue 40: at least 1.6x on 2). Each check below runs
# REPEATS times on each count, alternated; a round's ratio is the states
# of its 2-worker run over its 1-worker run's, and the table gives their
# median (the machine's slow spells weigh on both runs of a round).
#
#   bench/workers/budget.sh
#   REPEATS=3 ONLY=lcr bench/workers/budget.sh
#
# A search cut within a level keeps what it expanded of it (`beyond` in
# the JSON, which `states` counts), so the states grow with the work
# done, not by whole levels.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${REPEATS:-5}
bin=${BIN_DIR:-$PWD/.bin}/livecheck
mkdir -p "$(dirname "$bin")"
go build -o "$bin" ./cmd/livecheck
checks=(
  "lcr --nodes 11 --depth 1000 --reduce none --no-walks --time 2s"
  "lcr --nodes 11 --depth 1000 --reduce none --no-walks --time 4s"
  "ring --nodes 4 --depth 100 --reduce none --no-walks --time 3s"
  "paxos --nodes 3 --proposers 2 --depth 100 --reduce none --no-walks --time 3s"
  "ring --nodes 6 --depth 100 --time 3s"
)
states() {
  # shellcheck disable=SC2086
  "$bin" check $1 --workers "$2" --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["stats"]["states"])' || true
}
printf '| check | states, 1 worker | states, 2 workers | ratio (median) | rounds |\n| --- | --- | --- | --- | --- |\n'
for c in "${checks[@]}"; do
  if [ -n "${ONLY:-}" ] && [[ "$c" != *"$ONLY"* ]]; then continue; fi
  ones="" twos="" ratios=""
  for _ in $(seq 1 "$repeats"); do
    a=$(states "$c" 1)
    b=$(states "$c" 2)
    ones+="$a " twos+="$b "
    ratios+="$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print 0 }') "
  done
  median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf '| `%s` | %s | %s | %sx | %s|\n' "$c" "$(echo "$ones" | median)" "$(echo "$twos" | median)" "$(echo "$ratios" | median)" "$ratios"
done
