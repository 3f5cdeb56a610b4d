# shellcheck shell=bash
# The baseline of scripts/bench: the release proxyapp of an earlier commit, built once and kept,
# and the phase that runs the keep-alive loads through it and through the current proxy in turn.
# Sourced by scripts/bench after bench-lib.sh and deps.sh, never executed.

# Builds the release proxyapp of git revision REF once and sets BASELINE_BIN to it:
# $BENCH_DIR/baseline/<commit>/proxyapp, kept across runs (a later call finds it and builds
# nothing). The sources come from `git archive` (the working tree and its worktrees are left
# alone), with the current tree's Package.resolved when the commit has none, so both binaries
# link the same dependency versions; the flags are the current tree's (PROXYAPP_RELEASE_FLAGS).
# A failed build keeps src/ and build.log for a look and an incremental retry.
baseline_build() {  # REF
  local ref=$1 commit dir src
  commit=$(git -C "$ROOT" rev-parse --verify --quiet "$ref^{commit}") ||
    bench_die "BASELINE_REF='$ref' names no commit of $ROOT (try a hash from git log, e.g. BASELINE_REF=ec18160)"
  dir=$BENCH_DIR/baseline/$commit
  src=$dir/src
  BASELINE_BIN=$dir/proxyapp
  if [[ -x $BASELINE_BIN ]]; then
    bench_log "baseline: using $BASELINE_BIN (built earlier from $ref)"
    return 0
  fi
  mkdir -p "$dir"
  if [[ ! -e $src/.extracted ]]; then
    rm -rf "$src"
    mkdir -p "$src"
    git -C "$ROOT" archive "$commit" | tar -x -C "$src" || bench_die "git archive $commit failed"
    touch "$src/.extracted"
  fi
  [[ ! -e $src/Package.resolved && -e $ROOT/Package.resolved ]] && cp "$ROOT/Package.resolved" "$src/"
  # shellcheck disable=SC2086  # the package list is meant to split into words
  ensure_debian_packages $PROXYAPP_BUILD_PACKAGES || bench_die "cannot install the packages the build needs"
  ensure_swift || bench_die "cannot build the baseline proxyapp without swift"
  bench_log "baseline: building proxyapp of $ref ($commit) in release, once (several minutes; log: $dir/build.log)"
  (cd "$src" && swift build "${PROXYAPP_RELEASE_FLAGS[@]}" --product proxyapp) >"$dir/build.log" 2>&1 ||
    bench_die "the baseline build of $ref failed; $dir/build.log ends with: $(tail -n 5 "$dir/build.log")"
  cp "$src/.build/release/proxyapp" "$BASELINE_BIN.partial"
  mv "$BASELINE_BIN.partial" "$BASELINE_BIN"
  echo "$ref $commit" >"$dir/ref"
  rm -rf "$src"
}

# The proxies of the baseline phase, by WHO (baseline, current): binary, pid, URL, the CA their
# clients trust, and the responses their clients received (for the flow count at the end).
declare -A BL_BIN=() BL_PID=() BL_URL=() BL_CA=() BL_RESPONSES=()
# Per "WHO LOAD" (e.g. "current https"): the rounds' requests/s and CPU µs per request, spaced.
declare -A BL_RPS=() BL_CPU=()
BL_IDLE_TICKS=0   # CPU the idle proxy used while the other one was measured

# Starts BIN as proxy WHO on a free port, with a fresh data directory of its own and the main
# proxy's flags, and checks it relays http and https.
baseline_proxy_start() {  # WHO BIN
  local who=$1 bin=$2 port data=$BENCH_DIR/baseline-data/$1
  local -a args=("${PROXY_RUN_ARGS[@]}")
  rm -rf "$data"
  port=$(pick_free_port)
  # A build from before retention keeps everything anyway and does not know its flags. (The help
  # is read whole first: `grep -q` in a pipe stops reading early, and under pipefail the help's
  # SIGPIPE made a build that knows the flags look as if it did not.)
  local help
  help=$("$bin" run --help 2>/dev/null || true)
  if [[ $help != *--max-db-size* ]]; then
    local -a known=() skip=0 arg
    for arg in "${args[@]}"; do
      if ((skip)); then skip=0; continue; fi
      case $arg in --max-db-size | --max-age | --max-flows) skip=1 ;; *) known+=("$arg") ;; esac
    done
    args=("${known[@]}")
  fi
  bench_log "baseline: $who proxy: $bin run --listen 127.0.0.1:$port --data-dir $data ${args[*]}"
  proxy_start "$bin" "$port" "$data" "$RUN_DIR/proxy-$who.log" "${args[@]}"
  BL_BIN[$who]=$bin
  BL_PID[$who]=$STARTED_PROXY_PID
  BL_URL[$who]=http://127.0.0.1:$port
  BL_CA[$who]=$data/ca/ProxyCA.pem
  proxy_sanity_check "${BL_URL[$who]}" "${BL_CA[$who]}" "$RUN_DIR/proxy-$who.log"
  BL_RESPONSES[$who]=2
}

# One load (http: wrk as in http_keepalive; https: proxyapp-load as in https_keepalive) of
# SECONDS through proxy WHO; the output lands in OUT. Sets LOAD_RESPONSES (responses received)
# and LOAD_OK_RPS (2xx/3xx per second). Runs in this shell: cleanup must see the load's pid.
baseline_load() {  # WHO LOAD SECONDS OUT
  local who=$1 load=$2 secs=$3 out=$4 completed ok responses
  if [[ $load == http ]]; then
    wrk_run "$out" "$secs" "${BL_URL[$who]}/" "$ORIGIN_URL/1k"
    read -r completed _ ok _ < <(wrk_parse "$out")
    responses=$completed
  else
    load_run "$out" "$secs" "$TLS_ORIGIN_URL/1k" "${BL_CA[$who]}" "${BL_URL[$who]}"
    read -r completed _ ok _ _ _ _ responses _ < <(load_parse "$out")
  fi
  [[ $responses =~ ^[0-9]+$ ]] || responses=0
  if ((responses == 0)); then
    bench_log "baseline: $who $load: no response; see $out*"
    # shellcheck disable=SC2034  # scripts/bench's exit status
    STATUS=1
  fi
  LOAD_RESPONSES=$responses LOAD_OK_RPS=$ok
}

# A warm-up and one measured load through proxy WHO while the other proxy idles. The CPU window
# opens once the proxy is quiet after the warm-up and closes once it is quiet after the load, so
# the work it queued behind the load (capture writes) counts as well.
baseline_measure() {  # WHO LOAD ROUND
  local who=$1 load=$2 round=$3 other pid idle out t0 t1 i0 i1 cpu
  other=baseline
  [[ $who == baseline ]] && other=current
  pid=${BL_PID[$who]} idle=${BL_PID[$other]}
  out=$RUN_DIR/baseline-$load-$who-$round.txt
  if ((WARMUP > 0)); then
    baseline_load "$who" "$load" "$WARMUP" "$out.warmup"
    BL_RESPONSES[$who]=$((BL_RESPONSES[$who] + LOAD_RESPONSES))
  fi
  t0=$(proc_cpu_settle "$pid")
  i0=$(proc_cpu_ticks "$idle")
  baseline_load "$who" "$load" "$DURATION" "$out"
  t1=$(proc_cpu_settle "$pid")
  i1=$(proc_cpu_ticks "$idle")
  proc_running "$pid" || bench_die "the $who proxy (pid $pid) died during the baseline phase; see $RUN_DIR/proxy-$who.log"
  BL_RESPONSES[$who]=$((BL_RESPONSES[$who] + LOAD_RESPONSES))
  BL_IDLE_TICKS=$((BL_IDLE_TICKS + i1 - i0))
  cpu=$(div "$(div $((t1 - t0)) "$CLK_TCK" 1 3)" "$LOAD_RESPONSES" 1e6 1)
  report "$who" "$load round $round: req/s, CPU µs/req" "$LOAD_OK_RPS" "/ $cpu"
  BL_RPS["$who $load"]+=" $LOAD_OK_RPS"
  BL_CPU["$who $load"]+=" $cpu"
}

# The median over rounds of current/baseline CPU per request, each round's two runs paired (run
# back to back, so a drift of the machine between rounds cancels out), and the lowest and highest
# round's ratio: the spread says how far to trust the median.
baseline_paired_ratio() {  # LOAD -> "median min max"
  # shellcheck disable=SC2086  # the lists are meant to split into words
  paste -d' ' <(printf '%s\n' ${BL_CPU["current $1"]}) <(printf '%s\n' ${BL_CPU["baseline $1"]}) |
    awk '$1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $2 > 0 { print $1 / $2 }' | sort -g |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "n/a n/a n/a"; exit }
      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf("%.3f %.3f %.3f\n", m, v[1], v[NR]) }'
}

# Median requests/s and CPU µs per request of WHO's rounds of LOAD.
baseline_medians() {  # WHO LOAD -> "rps cpu"
  # shellcheck disable=SC2086  # the lists are meant to split into words
  echo "$(median ${BL_RPS["$1 $2"]}) $(median ${BL_CPU["$1 $2"]})"
}

phase_baseline() {
  local round load who order rb cb rc cc pm plo phi
  section "baseline: http and https keep-alive through the baseline proxy and the current one, $BASELINE_ROUNDS rounds of ${DURATION}s each, interleaved"
  if [[ -z $BASELINE_BIN ]]; then
    report baseline "skipped (set BASELINE_REF or _BIN)" n/a
    return 0
  fi
  bench_log "baseline: $BASELINE_BIN${BASELINE_REF:+ ($BASELINE_REF)} vs current: $PROXYAPP_BIN"
  baseline_proxy_start baseline "$BASELINE_BIN"
  baseline_proxy_start current "$PROXYAPP_BIN"
  for ((round = 1; round <= BASELINE_ROUNDS; round++)); do
    # Who goes first alternates by round, so a drift of the machine weighs on both alike.
    order=(baseline current)
    ((round % 2 == 0)) && order=(current baseline)
    for load in http https; do
      for who in "${order[@]}"; do
        baseline_measure "$who" "$load" "$round"
      done
    done
  done
  for load in http https; do
    read -r rb cb < <(baseline_medians baseline "$load")
    read -r rc cc < <(baseline_medians current "$load")
    report baseline "$load requests/s (median)" "$rb"
    report current "$load requests/s (median)" "$rc"
    report baseline "$load proxy CPU per request (median)" "$cb" µs
    report current "$load proxy CPU per request (median)" "$cc" µs
    report ratio "$load requests/s current/baseline" "$(div "$rc" "$rb" 1 3)"
    report ratio "$load CPU/request current/baseline" "$(div "$cc" "$cb" 1 3)"
    read -r pm plo phi < <(baseline_paired_ratio "$load")
    report ratio "$load CPU/request, paired rounds (median)" "$pm" "(rounds from $plo to $phi)"
  done
  report idle "CPU of the idle proxy, all runs" "$(div "$BL_IDLE_TICKS" "$CLK_TCK" 1000 0)" ms
  for who in baseline current; do
    stop_proxy_and_count_flows "$who" "${BL_PID[$who]}" "${BL_BIN[$who]}" "$BENCH_DIR/baseline-data/$who" \
      "${BL_RESPONSES[$who]}" "$RUN_DIR/proxy-$who.log"
  done
}
