# shellcheck shell=bash
# The syscalls phase of scripts/bench: the proxy's system calls per request, counted by perf on
# the kernel's syscall tracepoints while a keep-alive load runs through it. A regression such as
# an epoll_ctl per request (two, until RequestEndReadAhead) shows here as a count, where CPU per
# request hides it in noise. Sourced by scripts/bench after bench-lib.sh, never executed.

SYSCALL_NAMES=(read write writev epoll_ctl epoll_wait futex pwrite64 pread64)

# Counts the proxy's SYSCALL_NAMES while COMMAND runs (perf stat attached to PROXY_PID), into FILE
# as perf's CSV (count,unit,event,...).
syscalls_during() {  # FILE COMMAND...
  local file=$1 events perf_pid
  shift
  events=$(printf 'syscalls:sys_enter_%s,' "${SYSCALL_NAMES[@]}")
  perf stat -x, -e "${events%,}" -p "$PROXY_PID" -o "$file" &
  perf_pid=$!
  sleep 0.5  # perf attaches before the load starts
  "$@"
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true  # perf exits non-zero on SIGINT
}

# Reports each counted call per response of the load (RESPONSES) as "LABEL NAME" lines.
syscalls_report() {  # LABEL FILE RESPONSES
  local label=$1 file=$2 responses=$3 name count
  for name in "${SYSCALL_NAMES[@]}"; do
    count=$(awk -F, -v e="syscalls:sys_enter_$name" '$3 == e { print $1 }' "$file")
    report proxied "$label $name per request" "$(div "${count:-x}" "$responses" 1 2)"
  done
}

phase_syscalls() {
  local out=$RUN_DIR/syscalls
  section "system calls per request: http and https keep-alive through the proxy, ${SYSCALL_SECONDS}s each, $CONC connections, proxyapp-load (perf stat on syscall tracepoints)"
  if ! command -v perf >/dev/null; then
    report proxied "system calls" "skipped: no perf (apt-get install linux-perf)"
    return 0
  fi
  if ! perf stat -e syscalls:sys_enter_read -p "$PROXY_PID" -o /dev/null -- sleep 0.1 2>/dev/null; then
    report proxied "system calls" "skipped: perf cannot read syscall tracepoints (root, or kernel.perf_event_paranoid=-1)"
    return 0
  fi
  local scheme url ca responses
  for scheme in http https; do
    if [[ $scheme == http ]]; then url=$ORIGIN_URL/1k ca=$BENCH_CA; else url=$TLS_ORIGIN_URL/1k ca=$PROXY_CA; fi
    if ((WARMUP > 0)); then
      load_run "$out-$scheme-warmup.txt" "$WARMUP" "$url" "$ca" "$PROXY_URL"
      read -r _ _ _ _ _ _ _ responses _ < <(load_parse "$out-$scheme-warmup.txt")
      [[ $responses =~ ^[0-9]+$ ]] && PROXIED_REQUESTS=$((PROXIED_REQUESTS + responses))
    fi
    syscalls_during "$out-$scheme.csv" load_run "$out-$scheme.txt" "$SYSCALL_SECONDS" "$url" "$ca" "$PROXY_URL"
    read -r _ _ _ _ _ _ _ responses _ < <(load_parse "$out-$scheme.txt")
    [[ $responses =~ ^[0-9]+$ ]] || responses=0
    PROXIED_REQUESTS=$((PROXIED_REQUESTS + responses))
    report proxied "$scheme responses counted" "$responses"
    syscalls_report "$scheme" "$out-$scheme.csv" "$responses"
  done
}
