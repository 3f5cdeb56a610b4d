# shellcheck shell=bash
# The phases of scripts/bench that act on traffic: replay (how fast captured flows are sent
# again) and throttle (how close a throttled download comes to its rate). Each starts proxies of
# its own beside the main one, so their captures and settings never mix with the load phases'.
# Sourced by scripts/bench after bench-lib.sh, never executed.

# Replay throughput: REPLAY_FLOWS GETs of /1k through a proxy of its own (fresh data directory,
# so they are flows 1..N), then `proxyapp replay 1..N` through that proxy's control channel with
# --concurrency 1 and REPLAY_CONCURRENCY. Replays/s (wall time of the command, which waits for
# every answer) and proxy CPU µs per replay; every replay must be answered and stored.
phase_replay() {
  local port data log pid urls out t0 t1 ticks0 ticks1 flows conc expected
  section "replay: $REPLAY_FLOWS captured GETs of /1k sent again with proxyapp replay (control channel)"
  port=$(pick_free_port)
  data=$BENCH_DIR/replay-data
  log=$RUN_DIR/replay-proxy.log
  rm -rf "$data"
  proxy_start "$PROXYAPP_BIN" "$port" "$data" "$log" "${PROXY_RUN_ARGS[@]}"
  pid=$STARTED_PROXY_PID
  urls=$RUN_DIR/replay-urls.curl
  : >"$urls"
  for ((i = 0; i < REPLAY_FLOWS; i++)); do echo "url = \"$ORIGIN_URL/1k\"" >>"$urls"; echo "output = /dev/null" >>"$urls"; done
  run_child curl -s -K "$urls" -x "http://127.0.0.1:$port" || bench_log "curl seeding the replay phase exited with $?"
  for ((i = 0; i < 100; i++)); do
    flows=$("$PROXYAPP_BIN" flows --count --data-dir "$data" 2>/dev/null || echo 0)
    ((${flows//[[:space:]]/} >= REPLAY_FLOWS)) && break
    sleep 0.1
  done
  report replay "flows captured to replay" "${flows//[[:space:]]/}"
  expected=$REPLAY_FLOWS
  for conc in 1 "$REPLAY_CONCURRENCY"; do
    out=$RUN_DIR/replay-c$conc.txt
    ticks0=$(proc_cpu_settle "$pid")
    t0=$EPOCHREALTIME
    run_child "$PROXYAPP_BIN" replay $(seq 1 "$REPLAY_FLOWS") --concurrency "$conc" --data-dir "$data" >"$out" 2>&1 ||
      bench_log "proxyapp replay exited with $? (see $out)"
    t1=$EPOCHREALTIME
    ticks1=$(proc_cpu_settle "$pid")
    expected=$((expected + REPLAY_FLOWS))
    report replay "replays/s, concurrency $conc" "$(awk -v n="$REPLAY_FLOWS" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')"
    report replay "proxy CPU per replay, concurrency $conc" \
      "$(awk -v t="$((ticks1 - ticks0))" -v hz="$CLK_TCK" -v n="$REPLAY_FLOWS" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')" µs
    report replay "summary, concurrency $conc" "$(tail -n 1 "$out")"
  done
  flows=$("$PROXYAPP_BIN" flows --count --filter '~replay' --data-dir "$data" 2>/dev/null || echo 0)
  report replay "replay flows stored (expected $((2 * REPLAY_FLOWS)))" "${flows//[[:space:]]/}"
  proxy_stop "$pid" 60 || true
}

# Throttle accuracy: a THROTTLE_MIB MiB download through a proxy started with --throttle
# down=RATE (no latency), for each rate of THROTTLE_RATES (in mbit); the time curl takes against
# the time the rate allows (size * 8 / rate), and their ratio (1.00 is exact; the issue asks
# within ±10 %).
phase_throttle() {
  local file=$BENCH_DIR/www/throttle.bin bytes rate port data log pid got secs expected
  bytes=$((THROTTLE_MIB * 1024 * 1024))
  section "throttle: GET of $THROTTLE_MIB MiB through --throttle down=RATE, measured time / expected time"
  if [[ $(stat -c %s "$file" 2>/dev/null) != "$bytes" ]]; then
    head -c "$bytes" /dev/urandom >"$file.part" && mv "$file.part" "$file"
    chmod a+r "$file"
  fi
  for rate in $THROTTLE_RATES; do
    port=$(pick_free_port)
    data=$BENCH_DIR/throttle-data
    log=$RUN_DIR/throttle-$rate.log
    rm -rf "$data"
    proxy_start "$PROXYAPP_BIN" "$port" "$data" "$log" "${PROXY_RUN_ARGS[@]}" --throttle "down=${rate}mbit"
    pid=$STARTED_PROXY_PID
    expected=$(awk -v b="$bytes" -v r="$rate" 'BEGIN { printf "%.2f", b * 8 / (r * 1e6) }')
    bench_log "throttle: $THROTTLE_MIB MiB at ${rate}mbit (about ${expected} s)"
    got=$(curl -s -o /dev/null --max-time $((${expected%.*} * 3 + 30)) -w '%{http_code} %{size_download} %{time_total}' \
      -x "http://127.0.0.1:$port" "$ORIGIN_URL/throttle.bin" || true)
    read -r _ size secs <<<"$got"
    if [[ $size != "$bytes" ]]; then
      bench_log "throttle at ${rate}mbit: curl got '$got' (see $log)"
      STATUS=1
    fi
    report throttle "${rate}mbit: seconds (expected $expected)" "$secs" s
    report throttle "${rate}mbit: measured / expected" "$(awk -v s="$secs" -v e="$expected" 'BEGIN { printf "%.3f", s / e }')"
    proxy_stop "$pid" 60 || true
  done
}

# The cost of a breakpoint filter on traffic it does not hold: the http_keepalive load (GET /1k,
# CONC connections, DURATION s) through two proxies of their own started alike, one with
# --intercept set to a filter no request matches, RULES_ROUNDS rounds alternating between them.
# Median requests/s and proxy CPU µs per request of each, and their ratios (1.00: free).
phase_intercept() {
  local url="$ORIGIN_URL/1k"
  local -a pids=() ports=()
  section "intercept: http keep-alive with --intercept '~d no-such-host.test & ~m POST' (holds nothing) vs none, $RULES_ROUNDS rounds of ${DURATION}s each, interleaved"
  start_two_proxies intercept --intercept '~d no-such-host.test & ~m POST'
  alternate_two_proxies intercept none filter "$url" "${pids[@]}" "${ports[@]}"
}

# Starts the two proxies of phase NAME, each with a fresh data directory of its own, the second
# with EXTRA flags too; their pids and ports go into the caller's `pids` and `ports` arrays.
start_two_proxies() {  # NAME EXTRA...
  local name=$1 which port
  shift
  local -a extra=("$@") args
  for which in off on; do
    port=$(pick_free_port)
    rm -rf "$BENCH_DIR/$name-$which"
    args=("${PROXY_RUN_ARGS[@]}")
    [[ $which == on ]] && args+=("${extra[@]}")
    proxy_start "$PROXYAPP_BIN" "$port" "$BENCH_DIR/$name-$which" "$RUN_DIR/$name-$which.log" "${args[@]}"
    pids+=("$STARTED_PROXY_PID")
    ports+=("$port")
  done
}

# RULES_ROUNDS rounds of the http_keepalive load through proxies A and B in turn (pids and ports
# given), then both stopped and the medians of each and their B/A ratios reported.
alternate_two_proxies() {  # NAME LABEL_A LABEL_B URL PID_A PID_B PORT_A PORT_B
  local name=$1 url=$4 round which
  local -a labels=("$2" "$3") pids=("$5" "$6") ports=("$7" "$8") rps_a=() rps_b=() cpu_a=() cpu_b=()
  for ((round = 1; round <= RULES_ROUNDS; round++)); do
    for which in 0 1; do
      wrk_round "$RUN_DIR/wrk-$name-$which-$round.txt" "http://127.0.0.1:${ports[$which]}/" "${pids[$which]}" "$url"
      report "${labels[$which]}" "round $round requests/s, CPU µs/request" "$ROUND_OK" "/ $ROUND_CPU"
      if ((which == 0)); then rps_a+=("$ROUND_OK"); cpu_a+=("$ROUND_CPU"); else rps_b+=("$ROUND_OK"); cpu_b+=("$ROUND_CPU"); fi
    done
  done
  for which in 0 1; do proxy_stop "${pids[$which]}" 60 || true; done
  report_medians "${labels[0]}" "${labels[1]}" "${labels[1]}/${labels[0]}" "$(median "${rps_a[@]}")" "$(median "${rps_b[@]}")" \
    "$(median "${cpu_a[@]}")" "$(median "${cpu_b[@]}")"
}

# Capture with retention removing flows all the time against capture that keeps everything: the
# http_keepalive load through two proxies of the phase's own, one run with --max-flows
# RETENTION_FLOWS (filled past it first, so every round evicts), RULES_ROUNDS rounds alternating.
# Requests/s and CPU µs per request of each and their ratios, and the evicting capture's flow
# count at the end (it must stay near RETENTION_FLOWS).
phase_retention() {
  local url="$ORIGIN_URL/1k" flows
  local -a pids=() ports=()
  section "retention: http keep-alive, capture keeping everything vs --max-flows $RETENTION_FLOWS (evicting), $RULES_ROUNDS rounds of ${DURATION}s each, interleaved"
  start_two_proxies retention --max-flows "$RETENTION_FLOWS"
  # Past the limit before the first measured round.
  wrk_round "$RUN_DIR/wrk-retention-fill.txt" "http://127.0.0.1:${ports[1]}/" "${pids[1]}" "$url"
  alternate_two_proxies retention keep-all evicting "$url" "${pids[@]}" "${ports[@]}"
  flows=$("$PROXYAPP_BIN" flows --count --data-dir "$BENCH_DIR/retention-on" 2>/dev/null || echo n/a)
  report evicting "flows kept (limit $RETENTION_FLOWS)" "$flows"
}
