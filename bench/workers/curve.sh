#!/usr/bin/env bash
# The --workers curve (issue 40, item 4): each search below on 1 to N
# workers, REPEATS runs of each count alternated (1, 2, 4, ..., then
# again), the median wall and user seconds, the speedup over one worker
# (its median wall over theirs) and the median of the rounds' own
# speedups ("of pairs"). For a machine with more cores than this 2-core
# one: run it when one is lent, and put the table and the date in docs/figures.md.
#
#   bench/workers/curve.sh                 (workers 1 2 4 8 16, 3 repeats)
#   WORKERS="1 2" REPEATS=5 bench/workers/curve.sh
#   ONLY=lcr bench/workers/curve.sh        (the searches whose line has lcr)
#   SET=systems bench/workers/curve.sh     (the other bundled systems)
#   CEILING=1 bench/workers/curve.sh       (and the machine's own ceiling)
#   COPIES=1 bench/workers/curve.sh        (and the ceiling of each search)
#
# With CEILING=1, each round ends with one round of bench/workers/ceiling's
# cache loop (a second): the "machine" column is the median of the rounds'
# speedups of that loop on as many goroutines, nothing of livecheck in it.
# A row short of its target beside a machine short of it too was measured
# in a slow spell of the machine, not of the search.
#
# With COPIES=1, each round also runs W copies of the 1-worker check at
# once, each a process of its own, for each count W past 1: the "copies"
# column is the median of the rounds' t1 * (1/c1 + ... + 1/cW), where t1
# is the round's 1-worker time and c1..cW the copies' times. It is what
# W workers that shared nothing would reach on this machine, each at
# the pace it kept beside the others: the search's own ceiling here.
#
# The searches are exhaustive (--no-walks --time 0) but for the last
# three, whole default checks of correct systems that take about a second
# or more on one worker.
set -euo pipefail
cd "$(dirname "$0")/../.."
workers=${WORKERS:-1 2 4 8 16}
repeats=${REPEATS:-3}
bin=${BIN_DIR:-$PWD/.bin}/livecheck
mkdir -p "$(dirname "$bin")"
go build -o "$bin" ./cmd/livecheck
ceiling=""
if [ "${CEILING:-}" = 1 ]; then
  ceiling=$(dirname "$bin")/ceiling
  go build -o "$ceiling" ./bench/workers/ceiling
fi
searches=(
  "lcr --nodes 11 --depth 1000 --reduce none --no-walks --time 0"
  "lcr --nodes 10 --depth 1000 --no-walks --time 0"
  "ring --nodes 4 --depth 14 --reduce none --no-walks --time 0"
  "paxos --nodes 3 --proposers 2 --depth 18 --reduce none --no-walks --time 0"
  "paxos --roles split --proposers 2 --nodes 7 --depth 100000 --reduce none --no-walks --time 0"
  "ring --nodes 5"
  "randtree --nodes 5"
  "overcast --nodes 4"
)
# SET=systems: the exhaustive search of every other bundled system at a
# depth where one worker takes 2 to 10 s here, unreduced and with the
# default reductions (issue 40's second table); "SYS D R": depth D
# unreduced, R reduced (as twoWorkerSizes in systems/workers_bench_test.go).
if [ "${SET:-}" = systems ]; then
  searches=()
  for s in "randtree 18 19" "overcast 29 30" "transport 64 64" "onepaxos 24 24" \
    "kvstore 15 15" "etcdraft 11 12" "etcdkv 11 12"; do
    read -r sys d r <<<"$s"
    searches+=("$sys --depth $d --reduce none --no-walks --time 0" "$sys --depth $r --no-walks --time 0")
  done
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
head='| check | workers | wall s | user s | speedup | of pairs |'
rule='| --- | --- | --- | --- | --- | --- |'
if [ -n "$ceiling" ]; then head+=' machine |'; rule+=' --- |'; fi
if [ "${COPIES:-}" = 1 ]; then head+=' copies |'; rule+=' --- |'; fi
printf '%s\n%s\n' "$head" "$rule"
for s in "${searches[@]}"; do
  if [ -n "${ONLY:-}" ] && [[ "$s" != *"$ONLY"* ]]; then continue; fi
  declare -A walls=() users=() machine=() copies=()
  for r in $(seq 1 "$repeats"); do
    for w in $workers; do
      # shellcheck disable=SC2086
      /usr/bin/env time -o "$out/time" -f '%e %U' "$bin" check $s --workers "$w" --out "$out" >/dev/null 2>&1 || true
      t=$(tail -1 "$out/time")
      walls[$w]+="${t%% *} "
      users[$w]+="${t##* } "
    done
    if [ "${COPIES:-}" = 1 ]; then
      t1=$(echo "${walls[1]:-}" | awk '{print $NF}')
      for w in $workers; do
        [ "$w" = 1 ] && continue
        pids=()
        for c in $(seq 1 "$w"); do
          mkdir -p "$out/copy$c"
          # shellcheck disable=SC2086
          /usr/bin/env time -o "$out/copy$c/time" -f '%e' "$bin" check $s --workers 1 --out "$out/copy$c" >/dev/null 2>&1 &
          pids+=($!)
        done
        wait "${pids[@]}" || true
        rate=$(for c in $(seq 1 "$w"); do tail -1 "$out/copy$c/time"; done | awk '$1 > 0 { r += 1 / $1 } END { print r }')
        copies[$w]+="$(awk -v a="$t1" -v r="$rate" 'BEGIN { printf "%.4f", a * r }') "
      done
    fi
    if [ -n "$ceiling" ]; then
      # One round of the cache loop on each count: "| cache | 2 | 1.84x | 1.84 |".
      while read -r g x; do machine[$g]+="$x "; done < <("$ceiling" --loops cache --rounds 1 --workers "${workers// /,}" |
        awk -F'|' '$2 ~ /cache/ { gsub(/[ x]/, "", $3); gsub(/[ x]/, "", $4); print $3, $4 }')
    fi
  done
  median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  one=$(echo "${walls[1]:-}" | median)
  for w in $workers; do
    wall=$(echo "${walls[$w]}" | median)
    user=$(echo "${users[$w]}" | median)
    speed=$(awk -v a="$one" -v b="$wall" 'BEGIN { if (a != "" && b > 0) printf "%.2fx", a / b; else print "-" }')
    # The median of the rounds' own ratios: each round's runs are
    # minutes apart at most, so a slow spell of the machine weighs on
    # both sides of a ratio, where it moves one median and not the other.
    pairs=$(paste <(echo "${walls[1]:-}" | tr ' ' '\n' | grep -v '^$') <(echo "${walls[$w]}" | tr ' ' '\n' | grep -v '^$') |
      awk '$2 > 0 { printf "%.4f ", $1 / $2 }')
    ratio=$(echo "$pairs" | median)
    ratio=$(awk -v r="$ratio" 'BEGIN { if (r != "") printf "%.2fx", r; else print "-" }')
    row=$(printf '| `%s` | %s | %s | %s | %s | %s |' "$s" "$w" "$wall" "$user" "$speed" "$ratio")
    if [ -n "$ceiling" ]; then
      m=$(echo "${machine[$w]:-}" | median)
      row+=$(awk -v r="$m" 'BEGIN { if (r != "") printf " %.2fx |", r; else print " - |" }')
    fi
    if [ "${COPIES:-}" = 1 ]; then
      if [ "$w" = 1 ]; then
        row+=' 1.00x |'
      else
        m=$(echo "${copies[$w]:-}" | median)
        row+=$(awk -v r="$m" 'BEGIN { if (r != "") printf " %.2fx |", r; else print " - |" }')
      fi
    fi
    echo "$row"
  done
  unset walls users machine copies
done
