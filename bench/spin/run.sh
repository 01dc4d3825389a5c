#!/usr/bin/env bash
# Spin and livecheck side by side on the same protocols: LCR leader election
# and Paxos with separate roles (2 proposers x K acceptors, one learner).
# Run on demand from anywhere in the repository, never in CI:
#
#   bench/spin/run.sh                      # every configuration
#   bench/spin/run.sh lcr5 paxos2x3        # some of them
#   REPEATS=1 SPIN_TIMEOUT=60 bench/spin/run.sh paxos2x5
#
# Configurations: lcr5 lcr6 paxos2x3 paxos2x4 paxos2x5.
#
# What runs, per configuration, REPEATS times (default 3), the median shown:
#
#   Spin   spin -D... -a MODEL.pml; gcc $SPIN_CFLAGS -o pan pan.c;
#          timeout -s INT $SPIN_TIMEOUT ./pan -m10000 -wW
#          SPIN_CFLAGS defaults to "-O2 -DSAFETY": safety only (assertions
#          and invalid end states), Spin's default partial-order reduction
#          on, no state compression (no -DCOLLAPSE, no -DHC), exhaustive
#          hashing (no bit-state). -m10000 bounds the search depth (the
#          deepest model here needs under 300 steps; pan says so if it is
#          too small, and the row is then not complete). -w sets the hash
#          table to 2^W slots, about the number of states, as Spin's manual
#          advises: its default (2^24 slots, 128 MB) would dominate the
#          memory of the small models. SPIN_TIMEOUT (default 300 s) cuts pan
#          with SIGINT, after which it prints what it covered.
#   livecheck  livecheck check SYS ... --no-walks --json --quiet
#          --depth 100000 --time $((2*LC_SEARCH))s $LC_FLAGS
#          The exhaustive search of the safety properties only, to the end
#          of the state space; the search may use half of --time, so
#          LC_SEARCH (default 300 s, Spin's cut) is its budget. Workers:
#          livecheck's default (every core) unless LC_FLAGS says otherwise.
#
# Columns: states and transitions as each tool counts them (Spin: states
# stored, and stored + matched; livecheck: distinct states, and handler
# steps on explored edges); wall s: the whole run as a user waits for it
# (Spin: spin -a, gcc and pan; livecheck: the process, built once before);
# own s: the tool's own search time (pan's "elapsed time", livecheck's
# stats.elapsed_ms); peak RSS MB: the maximum resident set of pan or of
# livecheck (/usr/bin/time -v); complete?: the tool saw every reachable
# state (livecheck: complete and exhausted; no(dN): cut by its budget, every
# state within N steps explored).
#
# The models are built so that a Spin transition and a livecheck step are
# the same unit (one handler): see lcr.pml and paxos.pml. Without reduction
# both tools find the same number of states.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
REPEATS=${REPEATS:-3}
SPIN_TIMEOUT=${SPIN_TIMEOUT:-300}
LC_SEARCH=${LC_SEARCH:-300}
SPIN_CFLAGS=${SPIN_CFLAGS:--O2 -DSAFETY}
LC_FLAGS=${LC_FLAGS:-}
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || die "REPEATS must be a positive whole number, not '$REPEATS'"
[[ $SPIN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "SPIN_TIMEOUT must be a positive number of seconds, not '$SPIN_TIMEOUT'"
[[ $LC_SEARCH =~ ^[1-9][0-9]*$ ]] || die "LC_SEARCH must be a positive number of seconds, not '$LC_SEARCH'"

# name | Promela model | spin -D flags | pan -w | livecheck arguments
configs=(
	"lcr5|lcr.pml|-DN=5|14|check lcr --nodes 5"
	"lcr6|lcr.pml|-DN=6|16|check lcr --nodes 6"
	"paxos2x3|paxos.pml|-DK=3|18|check paxos --roles split --proposers 2 --nodes 6"
	"paxos2x4|paxos.pml|-DK=4|22|check paxos --roles split --proposers 2 --nodes 7"
	"paxos2x5|paxos.pml|-DK=5|26|check paxos --roles split --proposers 2 --nodes 8"
)

want=("$@")
if [[ ${#want[@]} -eq 0 ]]; then
	for c in "${configs[@]}"; do want+=("${c%%|*}"); done
fi
for w in "${want[@]}"; do
	found=
	for c in "${configs[@]}"; do [[ ${c%%|*} == "$w" ]] && found=1; done
	[[ -n $found ]] || die "unknown configuration '$w' (valid: lcr5 lcr6 paxos2x3 paxos2x4 paxos2x5)"
done

# Tools: Spin and gcc from the Debian packages, GNU time for peak RSS.
install() {
	local pkgs=("$@") sudo=
	[[ $(id -u) -eq 0 ]] || sudo=sudo
	echo "installing ${pkgs[*]} (apt-get)" >&2
	$sudo apt-get install -y "${pkgs[@]}" >&2 || die "could not install ${pkgs[*]}: install them by hand"
}
missing=()
command -v spin >/dev/null || missing+=(spin)
command -v gcc >/dev/null || missing+=(gcc)
[[ -x /usr/bin/time ]] || missing+=(time)
[[ ${#missing[@]} -eq 0 ]] || install "${missing[@]}"
command -v go >/dev/null || die "go is not on PATH: livecheck is built from source"
command -v timeout >/dev/null || die "timeout (coreutils) is not on PATH"

work=$(mktemp -d "${TMPDIR:-/tmp}/livecheck-spin.XXXXXX")
trap 'rm -rf "$work"' EXIT
lc=$work/livecheck
(cd "$root" && go build -o "$lc" ./cmd/livecheck) || die "go build ./cmd/livecheck failed"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# rss FILE: peak RSS in MB from /usr/bin/time -v's report.
rss() { awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }
# median of the arguments (numbers, or one repeated word).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }

# spin_run NAME MODEL DFLAGS W: one Spin run; prints "states trans wall own rss complete".
spin_run() {
	local name=$1 model=$2 dflags=$3 w=$4 dir=$work/spin-$1 rc=0 t0 t1
	mkdir -p "$dir"
	cp "$here/$model" "$dir/"
	t0=$(now)
	(cd "$dir" && spin $dflags -a "$model" >spin.log 2>&1) || die "spin -a $model failed for $name: $(cat "$dir/spin.log")"
	# pan.c compiles with warnings about array indices that pan's own
	# bounds checks cover; the log keeps them.
	(cd "$dir" && gcc $SPIN_CFLAGS -o pan pan.c >gcc.log 2>&1) || die "gcc pan.c failed for $name: see $dir/gcc.log"
	(cd "$dir" && /usr/bin/time -v -o time.txt timeout -s INT "$SPIN_TIMEOUT" ./pan -m10000 -w"$w" >pan.out 2>&1) || rc=$?
	t1=$(now)
	[[ $rc -eq 0 || $rc -eq 124 ]] || die "pan failed for $name (exit $rc): $(tail -5 "$dir/pan.out")"
	local out=$dir/pan.out
	local errors states trans own complete=yes
	errors=$(awk '/errors:/ { print $NF; exit }' "$out")
	[[ -n $errors ]] || die "no result in pan's output for $name: $(tail -5 "$out")"
	[[ $errors -eq 0 ]] || die "Spin found $errors error(s) in the correct $name model: $(grep -m1 -E 'assertion|invalid' "$out")"
	states=$(awk '/states, stored/ { print $1; exit }' "$out")
	trans=$(awk '/transitions \(= stored\+matched\)/ { print $1; exit }' "$out")
	own=$(awk '/pan: elapsed time/ { print $4; exit }' "$out")
	if [[ $rc -eq 124 ]] || grep -q 'Search not completed\|max search depth too small' "$out"; then
		complete=no
	fi
	echo "$states $trans $(secs "$t0" "$t1") ${own:-0} $(rss "$dir/time.txt") $complete"
}

# json FILE KEY: the first number or word after "KEY": in livecheck's JSON.
json() { awk -v k="\"$2\":" '$1 == k { v = $2; sub(/,$/, "", v); gsub(/"/, "", v); print v; exit }' "$1"; }

# lc_run NAME ARGS...: one livecheck run; same output as spin_run.
lc_run() {
	local name=$1 dir=$work/lc-$1 rc=0 t0 t1
	shift
	mkdir -p "$dir"
	t0=$(now)
	# shellcheck disable=SC2086 # LC_FLAGS is a list of flags
	/usr/bin/time -v -o "$dir/time.txt" "$lc" "$@" --no-walks --json --quiet --depth 100000 \
		--time "$((2 * LC_SEARCH))s" --out "$dir/out" $LC_FLAGS >"$dir/out.json" 2>"$dir/err.txt" || rc=$?
	t1=$(now)
	local result
	result=$(json "$dir/out.json" result)
	[[ ($rc -eq 0 && $result == ok) || ($rc -eq 3 && $result == inconclusive) ]] ||
		die "livecheck $* ended with exit $rc, result '${result:-none}' (want ok, or inconclusive past the budget): $(tail -3 "$dir/err.txt")"
	local complete=no ms
	if [[ $(json "$dir/out.json" complete) == true && $(json "$dir/out.json" exhausted) == true ]]; then
		complete=yes
	elif [[ -n $(json "$dir/out.json" covered_depth) ]]; then
		complete="no(d$(json "$dir/out.json" covered_depth))" # every state within that depth
	fi
	ms=$(json "$dir/out.json" elapsed_ms)
	echo "$(json "$dir/out.json" states) $(json "$dir/out.json" transitions) $(secs "$t0" "$t1") $(awk -v m="$ms" 'BEGIN { printf "%.2f", m / 1000 }') $(rss "$dir/time.txt") $complete"
}

# row MODEL TOOL RUN...: runs RUN REPEATS times and prints the medians.
rows=()
row() {
	local model=$1 tool=$2 i r s t w o m c
	shift 2
	local -a st tr wall own mem comp
	for ((i = 0; i < REPEATS; i++)); do
		r=$("$@") || exit $?
		read -r s t w o m c <<<"$r"
		st+=("$s") tr+=("$t") wall+=("$w") own+=("$o") mem+=("$m") comp+=("$c")
		echo "  $model $tool run $((i + 1)): $r" >&2
	done
	c=$(printf '%s\n' "${comp[@]}" | sort -u | paste -sd/)
	rows+=("$model|$tool|$(median "${st[@]}")|$(median "${tr[@]}")|$(median "${wall[@]}")|$(median "${own[@]}")|$(median "${mem[@]}")|$c")
}

for w in "${want[@]}"; do
	for c in "${configs[@]}"; do
		IFS='|' read -r name model dflags pw lcargs <<<"$c"
		[[ $name == "$w" ]] || continue
		echo "$name: Spin, then livecheck, $REPEATS time(s) each" >&2
		row "$name" spin spin_run "$name" "$model" "$dflags" "$pw"
		# shellcheck disable=SC2086 # lcargs is a list of arguments
		row "$name" livecheck lc_run "$name" $lcargs
	done
done

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
mem=$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
echo
echo "$(date -u +%Y-%m-%d), ${cpu:-unknown CPU}, $(nproc) cores, ${mem:-unknown memory}; $(spin -V 2>&1 | head -1); $(go version | awk '{ print $3 }')"
echo "Spin: gcc $SPIN_CFLAGS, pan -m10000 -wW, cut at ${SPIN_TIMEOUT} s; livecheck: --no-walks, search budget ${LC_SEARCH} s${LC_FLAGS:+, $LC_FLAGS}; median of $REPEATS"
echo
fmt='| %-9s | %-9s | %12s | %12s | %8s | %8s | %12s | %-9s |\n'
# shellcheck disable=SC2059 # fmt is the table's format
printf "$fmt" model tool states transitions "wall s" "own s" "peak RSS MB" complete?
# shellcheck disable=SC2059
printf "$fmt" --------- --------- ------------ ------------ -------- -------- ------------ ---------
for r in "${rows[@]}"; do
	IFS='|' read -r a b s t w o m c <<<"$r"
	# shellcheck disable=SC2059
	printf "$fmt" "$a" "$b" "$s" "$t" "$w" "$o" "$m" "$c"
done
