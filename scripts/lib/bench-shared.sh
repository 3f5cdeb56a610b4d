# shellcheck shell=bash
# The shared-capture phase of scripts/bench: SHARED_PROXIES proxies under load at once, all
# writing into one PostgreSQL (`run --store`), against the same number writing their own SQLite
# captures, in the same run. Sourced by scripts/bench after bench-lib.sh, never executed.

SHARED_PG_DIR=""   # the throwaway cluster while the phase runs (stopped by shared_pg_stop)

# Debian's newest /usr/lib/postgresql/N/bin.
shared_pg_bin() {
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [[ -x $dir/initdb ]] || bench_die "no PostgreSQL under /usr/lib/postgresql (package postgresql)"
  echo "$dir"
}

# Runs a PostgreSQL tool, as the postgres user when root (PostgreSQL refuses root).
shared_pg_run() {  # TOOL ARG...
  local tool=$1
  shift
  if ((EUID == 0)); then
    runuser -u postgres -- "$(shared_pg_bin)/$tool" "$@"
  else
    "$(shared_pg_bin)/$tool" "$@"
  fi
}

# A new cluster in DIR on 127.0.0.1:PORT, PostgreSQL's default settings (fsync on): what a team
# would run. Trust authentication on loopback.
shared_pg_start() {  # DIR PORT
  local dir=$1 port=$2
  rm -rf "$dir"
  mkdir -p "$dir"
  ((EUID == 0)) && chown postgres: "$dir"
  chmod 700 "$dir"
  shared_pg_run initdb -D "$dir/data" -U proxyapp --auth=trust -E UTF8 --no-locale >"$RUN_DIR/shared-initdb.log" 2>&1 ||
    bench_die "initdb failed: $(tail -n 5 "$RUN_DIR/shared-initdb.log")"
  SHARED_PG_DIR=$dir
  shared_pg_run pg_ctl -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='$dir'" start </dev/null >/dev/null 2>&1 ||
    bench_die "PostgreSQL did not start: $(tail -n 5 "$dir/server.log")"
}

shared_pg_stop() {
  [[ -n $SHARED_PG_DIR ]] || return 0
  shared_pg_run pg_ctl -D "$SHARED_PG_DIR/data" -m fast -w stop </dev/null >/dev/null 2>&1 || true
  rm -rf "$SHARED_PG_DIR"
  SHARED_PG_DIR=""
}

# CPU ticks used so far by every PostgreSQL process of the cluster (server and backends).
shared_pg_ticks() {
  local total=0 pid
  for pid in $(pgrep -u postgres -f "postgres" 2>/dev/null); do
    total=$((total + $(proc_cpu_ticks "$pid" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

# Rows in the shared capture.
shared_pg_count() {  # PORT
  psql -tA -h 127.0.0.1 -p "$1" -U proxyapp -c "SELECT count(*) FROM proxyapp_flows" postgres 2>/dev/null || echo 0
}

# One round: SHARED_PROXIES wrk processes (CONC/SHARED_PROXIES connections each) load one proxy
# each for DURATION s. Sets SR_RPS (sum of 2xx/3xx per second), SR_CPU (proxy CPU µs per request,
# over all the proxies), SR_STORED (flows stored per second: rows added from start to the end of
# the load, each proxy's queue flushed within 0.1 s), SR_SERVER_CPU (PostgreSQL's CPU µs per flow
# stored; meaningless in the SQLite rounds) and, with a STORE, SR_LAGS (ms from a probe's
# response to it being listed by `proxyapp flows --store` in another process).
shared_round() {  # MODE COUNT_CMD STORE PIDS PORTS
  local mode=$1 count_cmd=$2 store=$3 url="$ORIGIN_URL/1k" i p k c t0 t1 before after start end secs completed rps
  local -a pids ports wrks=()
  read -r -a pids <<<"$4"
  read -r -a ports <<<"$5"
  local conns=$((CONC / ${#pids[@]} > 0 ? CONC / ${#pids[@]} : 1))
  before=$($count_cmd)
  t0=0
  for i in "${!pids[@]}"; do t0=$((t0 + $(proc_cpu_ticks "${pids[i]}"))); done
  local pg0 pg1
  pg0=$(shared_pg_ticks)
  start=$(date +%s%N)
  for i in "${!pids[@]}"; do
    timeout $((DURATION + 30)) wrk -t1 -c"$conns" -d"${DURATION}s" --latency --timeout 10s \
      -s "$ROOT/scripts/lib/wrk-absolute-form.lua" "http://127.0.0.1:${ports[i]}/" -- "$url" \
      >"$RUN_DIR/wrk-shared-$mode-$i.txt" 2>&1 &
    wrks+=($!)
  done
  SR_LAGS=()
  if [[ -n $store ]]; then
    sleep 1
    local probe sent seen since
    for ((p = 0; p < SHARED_PROBES; p++)); do
      probe="probe-$mode-$RANDOM-$p"
      # The listing looks back 2 s only (--since), as a user watching for a request would.
      since=$(date -u -d "@$(($(date +%s) - 2))" +%FT%TZ)
      curl -s -o /dev/null -x "http://127.0.0.1:${ports[0]}" "$url?$probe" || true
      sent=$(date +%s%N)
      seen=""
      for ((k = 0; k < 200; k++)); do
        if "$PROXYAPP_BIN" flows --store "$store" --since "$since" --limit 1 --filter "~u $probe" 2>/dev/null |
          grep -q "$probe"; then
          seen=$(date +%s%N)
          break
        fi
      done
      [[ -n $seen ]] && SR_LAGS+=("$(((seen - sent) / 1000000))")
    done
  fi
  for i in "${!wrks[@]}"; do wait "${wrks[i]}" || bench_log "wrk $i of the $mode round exited with $?"; done
  end=$(date +%s%N)
  t1=0
  for i in "${!pids[@]}"; do t1=$((t1 + $(proc_cpu_ticks "${pids[i]}"))); done
  sleep 0.3  # the last batches (0.1 s) reach the store
  after=$($count_cmd)
  pg1=$(shared_pg_ticks)
  completed=0 SR_RPS=0
  for i in "${!pids[@]}"; do
    read -r c _ rps _ < <(wrk_parse "$RUN_DIR/wrk-shared-$mode-$i.txt")
    [[ $c =~ ^[0-9]+$ ]] && completed=$((completed + c))
    [[ $rps =~ ^[0-9.]+$ ]] && SR_RPS=$(awk -v a="$SR_RPS" -v b="$rps" 'BEGIN { printf "%.1f", a + b }')
  done
  secs=$(div $((end - start)) 1000000000 1 3)
  SR_CPU=$(div "$(div $((t1 - t0)) "$CLK_TCK" 1 3)" "$completed" 1e6 1)
  SR_STORED=$(div $((after - before)) "$secs" 1 1)
  SR_SERVER_CPU=$(div "$(div $((pg1 - pg0)) "$CLK_TCK" 1 3)" $((after - before)) 1e6 1)
}

# Sum of the flows in the SQLite captures of the phase's local proxies.
shared_sqlite_count() {
  local total=0 i n
  for ((i = 0; i < SHARED_PROXIES; i++)); do
    n=$("$PROXYAPP_BIN" flows --count --data-dir "$BENCH_DIR/shared-sqlite-$i" 2>/dev/null || echo 0)
    total=$((total + ${n//[[:space:]]/}))
  done
  echo "$total"
}

# SHARED_PROXIES proxies into one PostgreSQL vs into their own SQLite, SHARED_ROUNDS rounds of
# DURATION s each, interleaved; medians and ratios.
phase_shared() {
  local pgport store i round
  local -a pg_pids=() pg_ports=() sq_pids=() sq_ports=() pg_rps=() pg_cpu=() pg_stored=() sq_rps=() sq_cpu=() sq_stored=() lags=()
  local -a pg_server=()
  section "shared: $SHARED_PROXIES proxies under http keep-alive load at once, into one PostgreSQL (--store) vs each into its own SQLite, $SHARED_ROUNDS rounds of ${DURATION}s each, interleaved"
  pgport=$(pick_free_port)
  shared_pg_start "$BENCH_DIR/shared-pg" "$pgport"
  store="postgres://proxyapp@127.0.0.1:$pgport/postgres?sslmode=disable"
  for ((i = 0; i < SHARED_PROXIES; i++)); do
    pg_ports+=("$(pick_free_port "${pg_ports[@]}" "$pgport")")
    rm -rf "$BENCH_DIR/shared-pg-data-$i"
    proxy_start "$PROXYAPP_BIN" "${pg_ports[i]}" "$BENCH_DIR/shared-pg-data-$i" "$RUN_DIR/shared-pg-proxy-$i.log" \
      "${PROXY_RUN_ARGS[@]}" --store "$store" --name "bench-$i"
    pg_pids+=("$STARTED_PROXY_PID")
    sq_ports+=("$(pick_free_port "${pg_ports[@]}" "${sq_ports[@]}" "$pgport")")
    rm -rf "$BENCH_DIR/shared-sqlite-$i"
    proxy_start "$PROXYAPP_BIN" "${sq_ports[i]}" "$BENCH_DIR/shared-sqlite-$i" "$RUN_DIR/shared-sqlite-proxy-$i.log" \
      "${PROXY_RUN_ARGS[@]}"
    sq_pids+=("$STARTED_PROXY_PID")
  done
  for ((round = 1; round <= SHARED_ROUNDS; round++)); do
    shared_round postgres "shared_pg_count $pgport" "$store" "${pg_pids[*]}" "${pg_ports[*]}"
    pg_rps+=("$SR_RPS") pg_cpu+=("$SR_CPU") pg_stored+=("$SR_STORED") lags+=("${SR_LAGS[@]}") pg_server+=("$SR_SERVER_CPU")
    report postgres "round $round requests/s, stored/s, CPU µs" "$SR_RPS $SR_STORED $SR_CPU"
    shared_round sqlite shared_sqlite_count "" "${sq_pids[*]}" "${sq_ports[*]}"
    sq_rps+=("$SR_RPS") sq_cpu+=("$SR_CPU") sq_stored+=("$SR_STORED")
    report sqlite "round $round requests/s, stored/s, CPU µs" "$SR_RPS $SR_STORED $SR_CPU"
  done
  report postgres "requests/s, all proxies (median)" "$(median "${pg_rps[@]}")"
  report sqlite "requests/s, all proxies (median)" "$(median "${sq_rps[@]}")"
  report postgres "flows stored/s (median)" "$(median "${pg_stored[@]}")"
  report sqlite "flows stored/s (median)" "$(median "${sq_stored[@]}")"
  report postgres "proxy CPU per request (median)" "$(median "${pg_cpu[@]}")" µs
  report sqlite "proxy CPU per request (median)" "$(median "${sq_cpu[@]}")" µs
  report postgres "server CPU per flow stored (median)" "$(median "${pg_server[@]}")" µs
  report ratio "CPU per request postgres/sqlite" "$(div "$(median "${pg_cpu[@]}")" "$(median "${sq_cpu[@]}")" 1 3)"
  report ratio "requests/s postgres/sqlite" "$(div "$(median "${pg_rps[@]}")" "$(median "${sq_rps[@]}")" 1 3)"
  if ((${#lags[@]} > 0)); then
    report postgres "lag response → listed, median of ${#lags[@]}" "$(median "${lags[@]}")" ms
    report postgres "lag response → listed, max" "$(printf '%s\n' "${lags[@]}" | sort -n | tail -n 1)" ms
  fi
  report postgres "flows in the shared capture" "$(shared_pg_count "$pgport")"
  for i in "${!pg_pids[@]}"; do
    proxy_stop "${pg_pids[i]}" 30 || true
    proxy_stop "${sq_pids[i]}" 30 || true
  done
  shared_pg_stop
}
