# shellcheck shell=bash
# A tiny test harness for the ca/ scripts: each test is a function; pass/fail are counted and
# the closing line is "N passed, N failed, N skipped". Every test runs in a fresh temporary
# directory; a test that returns 77 was skipped (it cannot run here).

# shellcheck disable=SC2034  # used by the test files that source this one
CA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
passed=0
failed=0
skipped=0

fail() {
  echo "    $*" >&2
  return 1
}

# Runs a command that must fail and whose stderr must contain $1.
expect_failure() {
  local message=$1 output
  shift
  if output=$("$@" 2>&1); then
    fail "expected failure, it succeeded: $*"$'\n'"$output"
    return 1
  fi
  [[ $output == *"$message"* ]] || fail "expected '$message' in: $output"
}

# Creates a throwaway CA (certificate + key) in $1: ca.pem, ca.der, ca.key.
make_test_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=ProxyApp Test CA $RANDOM" -addext "basicConstraints=critical,CA:TRUE" \
    -keyout "$1/ca.key" -out "$1/ca.pem" 2>/dev/null
  openssl x509 -in "$1/ca.pem" -outform DER -out "$1/ca.der"
}

run_test() {
  local name=$1 status=0
  work=$(mktemp -d)
  (set -euo pipefail; cd "$work"; "$name") || status=$?
  rm -rf -- "$work"
  if ((status == 0)); then
    passed=$((passed + 1))
    echo "ok   $name"
  elif ((status == 77)); then
    skipped=$((skipped + 1))
    echo "skip $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

finish() {
  echo "$passed passed, $failed failed, $skipped skipped"
  ((failed == 0))
}
