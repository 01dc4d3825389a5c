#!/usr/bin/env bash
# The correct etcdraft adapter at the CLI's defaults (depth, walks, time
# budget), PreVote and CheckQuorum each on and off, no failure, one
# reset, one drop and one partition, seeds 1-10: 160 checks. Prints one
# line per check (result, covered depth, complete, walks, suspects) and a
# summary; exits 1 if any check found a violation or called a state dead.
#
#   bench/etcdraft/silent.sh [SEEDS]      (default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${1:-10}
bin=$(mktemp -d)/livecheck
go build -o "$bin" ./cmd/livecheck
bad=0
declare -A count
for pv in on off; do
  for cq in on off; do
    for f in none "--resets 1" "--drops 1" "--partitions 1"; do
      flags=""; [ "$f" != none ] && flags="$f"
      for seed in $(seq 1 "$seeds"); do
        start=$(date +%s.%N)
        rc=0
        out=$("$bin" check etcdraft --nodes 3 --prevote $pv --checkquorum $cq --out "$(dirname "$bin")/out" $flags --seed "$seed" --json 2>/dev/null) || rc=$?
        secs=$(echo "$(date +%s.%N) - $start" | bc)
        line=$(python3 -c '
import json,sys
d=json.loads(sys.argv[1]); l=d.get("liveness") or {}
print(d["result"], "depth", d.get("covered_depth"), "complete" if d.get("complete") else "incomplete",
      "walks", l.get("walks",0), "suspects", l.get("suspects",0))' "$out")
        printf 'prevote=%s checkquorum=%s %-14s seed %2d  exit %d  %5.1fs  %s\n' "$pv" "$cq" "${f// /}" "$seed" "$rc" "$secs" "$line"
        r=${line%% *}
        count[$r]=$(( ${count[$r]:-0} + 1 ))
        case $rc in 0|3) ;; *) bad=1 ;; esac
      done
    done
  done
done
for r in "${!count[@]}"; do echo "$r: ${count[$r]}"; done
exit $bad
