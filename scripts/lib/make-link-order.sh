#!/usr/bin/env bash
# Remakes scripts/lib/proxyapp.link-order: the functions a running proxy executes, as the release
# build's linker (gold, PROXYAPP_RELEASE_FLAGS in deps.sh) lays them out, first and together. A
# maintainer's tool, not part of the product: run it from the repo root after large changes to the
# hot path (a stale order costs resident memory, never correctness: functions it does not name go
# after those it does), then commit the file.
#
#   scripts/lib/make-link-order.sh
#
# Why: the binary's code is mapped from its file and the kernel faults it in 64 KiB at a time
# (fault-around). The ~5,000 functions a proxy under load runs were spread over the whole 24 MB
# `.text`, so the load kept ~11.6 MiB of it resident; laid out together, 3 MiB.
#
# How: the release build (function sections) runs under link-order-trace.c, which turns every
# function entry into a breakpoint taken once, against a loopback nginx with the bench's loads
# (HTTPS and plain keep-alive, a new TLS connection per request, HTTP/2, 10 MiB downloads). The
# order lists what ran after start-up first (in the order it first ran), then what ran only at
# start-up: the proxy gives start-up's code pages back two seconds after it starts
# (IdlePageRelease), and they should not share pages with the steady state's. An instrumented
# build is not enough (compiler-made functions carry no counters), nor are sampled stacks (code run
# once per connection is never sampled).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
# shellcheck source=deps.sh
source scripts/lib/deps.sh
# shellcheck source=bench-lib.sh
source scripts/lib/bench-lib.sh
bench_die() { echo "make-link-order: error: $*" >&2; exit 1; }

# shellcheck disable=SC2086  # the package list is meant to split into words
ensure_debian_packages $PROXYAPP_BUILD_PACKAGES nginx curl openssl procps binutils || bench_die "cannot install the tools it needs"
ensure_swift || exit 1
ensure_proxyapp_release || exit 1
ensure_release_product proxyapp-load || exit 1
BIN=$ROOT/.build/release/proxyapp
LOAD=$ROOT/.build/release/proxyapp-load

WORK=$(mktemp -d /tmp/proxyapp-link-order.XXXXXX)
chmod 755 "$WORK"
trap 'bench_cleanup; rm -rf "$WORK"' EXIT
clang=$(dirname "$(command -v swift)")/clang
"$clang" -O2 -shared -fPIC -o "$WORK/trace.so" scripts/lib/link-order-trace.c || bench_die "cannot compile link-order-trace.c"
# Every function symbol with a size: its address (the breakpoints) and its names (for the order).
nm -S --defined-only "$BIN" | awk '$3 ~ /^[tTwW]$/ && $2 !~ /^0+$/ { sub(/^0+/, "", $1); print $1, $4 }' >"$WORK/functions"
awk '{ print $1 }' "$WORK/functions" | sort -u >"$WORK/entries"

origin_payloads "$WORK/www" 10
bench_tls_make "$WORK/tls"
origin_port=$(pick_free_port)
tls_port=$(pick_free_port "$origin_port")
proxy_port=$(pick_free_port "$origin_port" "$tls_port")
origin_start "$WORK/nginx" "$WORK/www" "$origin_port" "$tls_port" "$WORK/tls/origin.pem" "$WORK/tls/origin.key"

echo "make-link-order: tracing the proxy under the bench's loads" >&2
LD_PRELOAD=$WORK/trace.so LINK_ORDER_TRACE_LIST=$WORK/entries LINK_ORDER_TRACE_OUT=$WORK/ran \
  proxy_start "$BIN" "$proxy_port" "$WORK/data" "$WORK/proxy.log" --upstream-ca "$WORK/tls/ca.pem"
pid=$STARTED_PROXY_PID
sleep 3  # start-up, and the start-up page release (IdlePageRelease, 2 s)
kill -USR2 "$pid"  # from here on: the steady state
sleep 0.2
proxy=http://127.0.0.1:$proxy_port
ca=$WORK/data/ca/ProxyCA.pem
plain=http://127.0.0.1:$origin_port
tls=https://127.0.0.1:$tls_port
"$LOAD" --url "$tls/1k" --cacert "$ca" --connections 20 --duration 4 --timeout 10 --proxy "$proxy" >/dev/null
"$LOAD" --url "$plain/1k" --connections 20 --duration 4 --timeout 10 --proxy "$proxy" >/dev/null
"$LOAD" --url "$tls/1k" --cacert "$ca" --connections 10 --duration 3 --timeout 10 --proxy "$proxy" \
  --new-connection-per-request >/dev/null
"$LOAD" --url "$tls/1k" --cacert "$ca" --connections 4 --duration 3 --timeout 10 --proxy "$proxy" --h2 >/dev/null
for _ in 1 2 3; do
  curl -sf -o /dev/null -x "$proxy" "$plain/big"
  curl -sf -o /dev/null --cacert "$ca" --http1.1 -x "$proxy" "$tls/big"
  curl -sf -o /dev/null --cacert "$ca" --http2 -x "$proxy" "$tls/1k"
  curl -s -o /dev/null -x "$proxy" "$plain/missing"
done
sleep 2  # the capture writer's idle trim
proxy_stop "$pid" 30 || true

[[ -s $WORK/ran ]] || bench_die "the traced proxy recorded nothing ($WORK/proxy.log: $(tail -n 5 "$WORK/proxy.log"))"
# Steady state first, in the order it first ran; then start-up only. One line per section name
# (.text.SYMBOL: function sections), every name of a function (aliases) included; gold reads `*`.
awk '
  FNR == NR { names[$1] = names[$1] " " $2; next }
  $1 == "-" { steady = 1; next }
  steady { if (!($1 in later)) { later[$1] = 1; order[++n] = $1 }; next }
  { if (!($1 in early)) { early[$1] = 1; first[++m] = $1 } }
  END {
    steady_count = n
    for (i = 1; i <= m; i++) if (!(first[i] in later)) order[++n] = first[i]
    for (i = 1; i <= n; i++) {
      k = split(names[order[i]], list, " ")
      for (j = 1; j <= k; j++) print ".text." list[j]
      # Functions with assembler-local names (object destroyers, thunks) have no symbol to trace
      # and one section name in many objects: all of them (0.2 MiB) go after the steady state.
      if (i == steady_count) print ".text..L*"
    }
  }
' "$WORK/functions" "$WORK/ran" >"$WORK/order"
lines=$(wc -l <"$WORK/order")
((lines > 2000)) || bench_die "only $lines functions ran: the loads did not reach the proxy"
# No comment line: gold reads every line as a section name.
cp "$WORK/order" scripts/lib/proxyapp.link-order
echo "make-link-order: scripts/lib/proxyapp.link-order names $lines functions; the next release build relinks with it" >&2
