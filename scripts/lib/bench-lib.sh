# shellcheck shell=bash
# Helpers for scripts/bench: processes it starts and stops, /proc readers, the nginx origin, the
# proxy under test, wrk output parsing and result formatting. Sourced, never executed.
# Everything here talks to 127.0.0.1 only.

# PIDs of what the bench started; bench_cleanup stops whichever are still set.
ORIGIN_PID=""
declare -A BENCH_PROXIES=()   # every proxyapp started by proxy_start and not yet stopped: pid -> 1
RSS_SAMPLER_PID=""
CHILD_PID=""   # the load generator or download currently running (see run_child)

bench_log() { echo "bench: $*" >&2; }
bench_die() { echo "bench: error: $*" >&2; exit 1; }

# ---- results -------------------------------------------------------------------------------
# Results go to stdout as aligned lines "WHO  WHAT  VALUE  UNIT"; progress notes go to stderr.
section() { printf '\n[%s]\n' "$*"; }
report() { printf '%-8s %-36s %14s%s\n' "$1" "$2" "$3" "${4:+ $4}"; }

# NUM * SCALE / DEN with DIGITS decimals; "n/a" when an operand is not a number or DEN is 0.
div() {  # NUM DEN [SCALE] [DIGITS]
  awk -v n="$1" -v d="$2" -v s="${3:-1}" -v p="${4:-2}" 'BEGIN {
    num = "^[0-9.]+([eE][-+]?[0-9]+)?$"
    if (n !~ num || d !~ num || d + 0 == 0) { print "n/a"; exit }
    printf("%." p "f\n", n * s / d)
  }'
}

# Median of the numbers given as arguments ("n/a" for none).
median() {
  (($# > 0)) || { echo n/a; return 0; }
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---- processes -----------------------------------------------------------------------------
# True while PID exists and has not exited (an exited child stays a zombie until reaped, and
# kill -0 still succeeds on a zombie, so look at its state instead).
proc_running() {  # PID
  local stat
  [[ -n ${1:-} ]] || return 1
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }   # drop "pid (comm) ", comm may hold spaces and parentheses
  [[ ${stat:0:1} != Z ]]
}

# CPU time of a whole process (all its threads), user + system, in clock ticks (getconf CLK_TCK).
proc_cpu_ticks() {  # PID
  local stat fields
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || { echo 0; return 0; }
  # After "pid (comm) " the fields start at field 3 (state): utime is field 14, stime field 15.
  read -r -a fields <<<"${stat##*) }"
  echo $((fields[11] + fields[12]))
}

# Waits until PID has used no CPU for 0.5 s (work it queued behind a load, such as capture
# writes, is done), at most TIMEOUT seconds; prints its CPU ticks then.
proc_cpu_settle() {  # PID [TIMEOUT]
  local pid=$1 timeout=${2:-30} prev now quiet=0 i
  prev=$(proc_cpu_ticks "$pid")
  for ((i = 0; i < timeout * 4 && quiet < 2; i++)); do
    sleep 0.25
    now=$(proc_cpu_ticks "$pid")
    if ((now == prev)); then quiet=$((quiet + 1)); else quiet=0; fi
    prev=$now
  done
  echo "$prev"
}

# A size field of /proc/PID/status (VmRSS, VmHWM, ...) in kB; 0 when the process is gone.
proc_status_kb() {  # PID FIELD
  local key value _
  { while read -r key value _; do
      [[ $key == "$2:" ]] && { echo "$value"; return 0; }
    done <"/proc/$1/status"; } 2>/dev/null || true
  echo 0
}

# Runs a command in the background and waits for it. Bash runs a trap only once the foreground
# command has finished, but it interrupts `wait` at once: so Ctrl-C or SIGTERM reaches
# bench_cleanup immediately, and cleanup stops the command through CHILD_PID.
run_child() {  # CMD...
  local rc=0
  "$@" &
  CHILD_PID=$!
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=""
  return "$rc"
}

# Sends SIGNAL to PID, waits up to TIMEOUT seconds for it to exit, then SIGKILLs it; reaps it and
# returns its exit status.
stop_process() {  # PID SIGNAL TIMEOUT
  local pid=$1 sig=$2 timeout=$3 i rc=0
  kill -s "$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    proc_running "$pid" || break
    sleep 0.1
  done
  if proc_running "$pid"; then
    bench_log "pid $pid still running ${timeout}s after SIG$sig: sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}

# Stops everything the bench started that is still running (trap on EXIT).
bench_cleanup() {
  local pid
  for pid in "$CHILD_PID" "$RSS_SAMPLER_PID"; do
    [[ -n $pid ]] && { kill "$pid" 2>/dev/null || true; }
  done
  # SIGINT: the proxy's graceful shutdown. nginx: SIGTERM is its fast shutdown.
  for pid in "${!BENCH_PROXIES[@]}"; do stop_process "$pid" INT 10 || true; done
  BENCH_PROXIES=()
  [[ -n $ORIGIN_PID ]] && { stop_process "$ORIGIN_PID" TERM 5 || true; }
  CHILD_PID="" RSS_SAMPLER_PID="" ORIGIN_PID=""
  return 0
}

# ---- ports ---------------------------------------------------------------------------------
# A TCP port that no socket on this machine uses (any state, IPv4 or IPv6), picked at random
# below the kernel's ephemeral range so outgoing connections of the load cannot take it.
# Ports named in EXCLUDE are skipped.
pick_free_port() {  # [EXCLUDE...]
  local -A used=()
  local f local_addr port try
  for f in /proc/net/tcp /proc/net/tcp6; do
    [[ -r $f ]] || continue
    # Lines: "sl local_address rem_address st ..."; local_address is HEXIP:HEXPORT.
    while read -r _ local_addr _; do
      [[ $local_addr == *:* ]] && used[$((16#${local_addr##*:}))]=1
    done < <(tail -n +2 "$f")
  done
  for port in "$@"; do used[$port]=1; done
  for ((try = 0; try < 200; try++)); do
    port=$((20000 + RANDOM % 12000))
    [[ -z ${used[$port]:-} ]] && { echo "$port"; return 0; }
  done
  bench_die "no free TCP port found in 20000-31999"
}

# Waits until HOST:PORT accepts a TCP connection (at most TIMEOUT seconds). With PID, gives up
# as soon as that process has exited.
wait_for_port() {  # HOST PORT TIMEOUT [PID]
  local host=$1 port=$2 timeout=$3 pid=${4:-} i
  for ((i = 0; i < timeout * 10; i++)); do
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
    [[ -n $pid ]] && ! proc_running "$pid" && return 1
    sleep 0.1
  done
  return 1
}

# ---- origin: nginx on loopback ---------------------------------------------------------------
# Payloads are random bytes (nothing on the way can compress them), made once and kept.
origin_payloads() {  # WWW_DIR BIG_MIB
  local www=$1 big_bytes=$(($2 * 1024 * 1024))
  mkdir -p "$www"
  [[ $(stat -c %s "$www/1k" 2>/dev/null) == 1024 ]] || head -c 1024 /dev/urandom >"$www/1k"
  if [[ $(stat -c %s "$www/big" 2>/dev/null) != "$big_bytes" ]]; then
    bench_log "generating $www/big ($2 MiB, once)"
    head -c "$big_bytes" /dev/urandom >"$www/big.part"
    mv "$www/big.part" "$www/big"
  fi
  # nginx workers started by root run as an unprivileged user: they must be able to read these.
  chmod -R a+rX "$www"
}

nginx_bin() { command -v nginx || echo /usr/sbin/nginx; }

# Makes, in DIR, a bench-only CA (ca.pem, ca.key) and a certificate it issued for the TLS origin
# (origin.pem, origin.key) naming both 127.0.0.1 (IP SAN) and localhost. ECDSA P-256 keys keep
# the origin's handshakes cheap (RSA-2048 signing would make nginx, not the proxy, the limit
# of the new-connection phase). Remade every run: nothing to expire, nothing to trust twice.
bench_tls_make() {  # DIR
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca.key" &&
      openssl req -x509 -new -key "$dir/ca.key" -sha256 -days 7 -subj "/CN=ProxyApp bench CA, scripts-bench only" \
        -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$dir/ca.pem" &&
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/origin.key" &&
      openssl req -new -key "$dir/origin.key" -subj "/CN=localhost" -out "$dir/origin.csr" &&
      printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
        "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"$dir/origin.ext" &&
      openssl x509 -req -in "$dir/origin.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
        -days 7 -sha256 -extfile "$dir/origin.ext" -out "$dir/origin.pem"
  } >"$dir/openssl.log" 2>&1 || bench_die "openssl could not make the bench CA and origin certificate: $(tail -n 5 "$dir/openssl.log")"
  # nginx workers started by root run as an unprivileged user; the master reads the key.
  chmod a+r "$dir/ca.pem" "$dir/origin.pem"
}

# Starts nginx in the foreground of a background job (so ORIGIN_PID is its master process),
# serving WWW_DIR on 127.0.0.1:PORT, with its config, logs and temp files under DIR. With
# TLS_PORT, CERT and KEY it serves the same files over TLS on 127.0.0.1:TLS_PORT too.
origin_start() {  # DIR WWW_DIR PORT [TLS_PORT CERT KEY]
  local dir=$1 www=$2 port=$3 tls_port=${4:-} cert=${5:-} key=${6:-} nginx tls_server=""
  nginx=$(nginx_bin)
  mkdir -p "$dir/tmp"
  if [[ -n $tls_port ]]; then
    # HTTP/1.1, and h2 for clients that offer it in ALPN (h2_keepalive's direct runs; the proxy
    # offers origins http/1.1 only, so it is always served HTTP/1.1); keep-alive as for HTTP
    # (keepalive_requests bounds h2 connections too); no session resumption (never offered).
    tls_server="server {
    listen 127.0.0.1:$tls_port ssl http2;
    ssl_certificate $cert;
    ssl_certificate_key $key;
    ssl_session_tickets off;
    root $www;
  }"
  fi
  cat >"$dir/nginx.conf" <<EOF
# Generated by scripts/bench: the loopback origin of the benchmark.
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  default_type application/octet-stream;
  access_log off;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  # Connections live for the whole run: measure the proxy, not the origin's connection churn.
  keepalive_timeout 300s;
  keepalive_requests 1000000000;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  server {
    listen 127.0.0.1:$port;
    root $www;
  }
  $tls_server
}
EOF
  "$nginx" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" ||
    bench_die "nginx rejects $dir/nginx.conf"
  "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" </dev/null >"$dir/nginx.out" 2>&1 &
  ORIGIN_PID=$!
  local p
  for p in "$port" $tls_port; do
    wait_for_port 127.0.0.1 "$p" 10 "$ORIGIN_PID" ||
      bench_die "nginx did not listen on 127.0.0.1:$p; $dir/error.log says: $(tail -n 5 "$dir/error.log")"
  done
}

# ---- the proxy under test ------------------------------------------------------------------
# Starts `proxyapp run` on 127.0.0.1:PORT with its database under DATA_DIR; STARTED_PROXY_PID is
# the proxyapp process itself (the subshell execs it), so /proc/STARTED_PROXY_PID is the proxy.
# Arguments after LOG are passed on to `proxyapp run`. bench_cleanup stops it unless proxy_stop
# did.
proxy_start() {  # BIN PORT DATA_DIR LOG [RUN_ARG...]
  local bin=$1 port=$2 data=$3 log=$4
  shift 4
  # Bash starts background jobs with SIGINT ignored; undo that, since SIGINT is how the proxy is
  # asked to flush its capture queue and exit.
  (
    trap - INT
    exec "$bin" run --listen "127.0.0.1:$port" --data-dir "$data" --headless --quiet "$@"
  ) </dev/null >"$log" 2>&1 &
  STARTED_PROXY_PID=$!
  BENCH_PROXIES[$STARTED_PROXY_PID]=1
  wait_for_port 127.0.0.1 "$port" 60 "$STARTED_PROXY_PID" ||
    bench_die "proxyapp did not listen on 127.0.0.1:$port; $log ends with: $(tail -n 10 "$log")"
}

# Stops a proxy started by proxy_start with SIGINT (it flushes its capture queue and exits),
# SIGKILL after TIMEOUT seconds; returns its exit status.
proxy_stop() {  # PID TIMEOUT
  local rc=0
  stop_process "$1" INT "$2" || rc=$?
  unset 'BENCH_PROXIES[$1]'
  return "$rc"
}

# Records in FILE the peak VmRSS (kB) of PID, sampled every 0.2 s until PID exits or the
# sampler is stopped (bounded to 6 hours all the same).
rss_sampler_start() {  # PID FILE
  local pid=$1 file=$2
  (
    peak=0
    for ((i = 0; i < 108000; i++)); do
      proc_running "$pid" || break
      kb=$(proc_status_kb "$pid" VmRSS)
      if ((kb > peak)); then
        peak=$kb
        echo "$peak" >"$file"
      fi
      sleep 0.2
    done
  ) &
  RSS_SAMPLER_PID=$!
}

rss_sampler_stop() {
  [[ -n $RSS_SAMPLER_PID ]] || return 0
  kill "$RSS_SAMPLER_PID" 2>/dev/null || true
  wait "$RSS_SAMPLER_PID" 2>/dev/null || true
  RSS_SAMPLER_PID=""
}

# ---- wrk -----------------------------------------------------------------------------------
# Reads wrk --latency output and prints one line:
#   completed seconds ok_per_s p50_ms p99_ms connect_err read_err write_err timeout_err non2xx
# completed counts every response; ok_per_s only 2xx/3xx ones. Missing figures print as n/a.
wrk_parse() {  # FILE
  awk '
    # wrk prints durations as 785.21us, 1.20ms, 10.00s, 1.00m, 1.00h: convert to ms.
    function to_ms(v,   n, unit) {
      n = v + 0; unit = v; sub(/^[0-9.]+/, "", unit); sub(/,$/, "", unit)
      if (unit == "us") return n / 1000
      if (unit == "ms") return n
      if (unit == "s")  return n * 1000
      if (unit == "m")  return n * 60000
      if (unit == "h")  return n * 3600000
      return "n/a"
    }
    BEGIN { done = "n/a"; secs = "n/a"; p50 = "n/a"; p99 = "n/a"; ce = re = we = te = non2xx = 0 }
    $1 == "50%" { p50 = to_ms($2) }
    $1 == "99%" { p99 = to_ms($2) }
    $2 == "requests" && $3 == "in" { done = $1; secs = to_ms($4) / 1000 }
    $1 == "Socket" && $2 == "errors:" { ce = $4 + 0; re = $6 + 0; we = $8 + 0; te = $10 + 0 }
    $1 == "Non-2xx" { non2xx = $5 + 0 }
    END {
      ok = "n/a"
      if (done != "n/a" && secs + 0 > 0) ok = sprintf("%.1f", (done - non2xx) / secs)
      print done, secs, ok, p50, p99, ce, re, we, te, non2xx
    }' "$1"
}

# ---- proxyapp-load -------------------------------------------------------------------------
# Reads the result line of proxyapp-load and prints:
#   completed seconds rps p50_ms p99_ms errors non2xx responses connections
# (rps counts 2xx/3xx only; responses and connections cover the whole invocation). Missing
# figures print as n/a.
load_parse() {  # FILE
  awk '
    BEGIN { n = split("completed seconds rps p50_ms p99_ms errors non2xx responses connections", keys, " ") }
    /^completed=/ { delete v; for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      line = ""
      for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") ((keys[i] in v) ? v[keys[i]] : "n/a")
      print line
    }' "$1"
}
