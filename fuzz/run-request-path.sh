#!/usr/bin/env bash
# Fuzzes the proxy's request path with libFuzzer and AddressSanitizer: random client bytes through
# the real client pipeline (in memory, EngineHarness), what reaches the origin checked by an
# independent strict HTTP/1.1 parser (see fuzz/RequestPath/RequestPathFuzzer.swift for what traps).
#
#   fuzz/run-request-path.sh [libFuzzer options]      e.g. -runs=1000000   -max_total_time=600
#
# Builds the package with `--sanitize fuzzer --sanitize address` in .build-fuzz (the first build
# takes a long while: every dependency is instrumented), seeds .build-fuzz/request-path-corpus with
# requests that try to bend their framing, and runs the fuzzer. Not part of scripts/test: the
# framing tests there (FramingDifferentialTests, FramingTranscriptTests) check the same property.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
out=.build-fuzz
corpus=$out/request-path-corpus
mkdir -p "$corpus"

PROXYAPP_FUZZ=1 swift build --scratch-path "$out" --sanitize fuzzer --sanitize address \
  --product proxyapp-fuzz-request-path 2> >(grep -v "Cannot export local symbol" >&2)

if [[ -z $(ls -A "$corpus") ]]; then
  python3 - "$corpus" <<'PY'
import pathlib, sys
out = pathlib.Path(sys.argv[1])
smuggled = "GET /smuggled HTTP/1.1\r\nHost: s.test\r\n\r\n"
def chunked(payload, ext="", trailers=""):
    return f"{len(payload):x}{ext}\r\n{payload}\r\n0\r\n{trailers}\r\n"
seeds = []
for method in ["GET", "POST", "HEAD", "TRACE", "PURGE", "DELETE"]:
    for extra in ["", "Connection: Content-Length\r\n", "Proxy-Connection: host\r\n"]:
        seeds.append(f"{method} http://a.test/x HTTP/1.1\r\nHost: a.test\r\n{extra}Content-Length: {len(smuggled)}\r\n\r\n{smuggled}")
    for coding in ["chunked", "Chunked", "gzip, chunked", "identity, chunked", "chunked, chunked"]:
        seeds.append(f"{method} http://a.test/x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: {coding}\r\n\r\n{chunked(smuggled)}")
seeds.append("POST http://a.test/x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding\r\n\r\n" + chunked(smuggled, ";e=1", "X-T: 1\r\n"))
seeds.append("GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n")
seeds.append("GET http://a.test/1 HTTP/1.0\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc")
seeds.append("GET /x HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
seeds.append("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
for index, seed in enumerate(seeds):
    (out / f"seed-{index:03}").write_bytes(seed.encode())
PY
fi

exec "$out/debug/proxyapp-fuzz-request-path" -artifact_prefix="$out/" -max_len=4096 "$@" "$corpus"
