#!/usr/bin/env bash
# Builds the ClientHello parser with libFuzzer and AddressSanitizer and fuzzes it.
#
#   fuzz/run-tls-client-hello.sh [libFuzzer options]      e.g. -max_total_time=300 -jobs=2
#
# The corpus lives in .build/fuzz/tls-client-hello-corpus (seeded with the hellos captured in
# Tests/ProxyCoreTests/CapturedClientHellos.swift); crashes are written to .build/fuzz/.
# Not part of scripts/test: the deterministic TLSClientHelloFuzzTests run there.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
out=.build/fuzz
corpus=$out/tls-client-hello-corpus
mkdir -p "$corpus"

sources=(Sources/ProxyCore/TLSClientHello.swift Sources/ProxyCore/TLSClientHelloReader.swift Sources/ProxyCore/ClientHelloBodyParser.swift
         Sources/ProxyCore/TLSByteReader.swift Sources/ProxyCore/DNSHostName.swift fuzz/TLSClientHello/main.swift)
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name ProxyCoreFuzz "${sources[@]}" \
  -o "$out/tls-client-hello-fuzzer" 2> >(grep -v "Cannot export local symbol" >&2)

if [[ -z $(ls -A "$corpus") ]]; then
  # One seed file per captured hello: the hex lines of each `bytes(fromHex: [...])` joined.
  python3 - "$corpus" <<'PY'
import pathlib, re, sys
text = pathlib.Path("Tests/ProxyCoreTests/CapturedClientHellos.swift").read_text()
for name, body in re.findall(r"static let (\w+) = bytes\(fromHex: \[(.*?)\]\)", text, re.S):
    pathlib.Path(sys.argv[1], name).write_bytes(bytes.fromhex("".join(re.findall(r'"([0-9a-f]+)"', body))))
PY
fi

exec "$out/tls-client-hello-fuzzer" -artifact_prefix="$out/" -max_len=70000 "$@" "$corpus"
