#!/usr/bin/env bash
# Runs the tests of the ca/ scripts: ca/tests/run.sh. Exits non-zero when any fails; the last
# line is the total, "N passed, N failed, N skipped".
set -uo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
total_passed=0
total_failed=0
total_skipped=0
for test in "$dir"/test-*.sh; do
  echo "== $(basename "$test")"
  output=$(bash "$test" 2>&1) || true
  echo "$output"
  summary=$(tail -n 1 <<<"$output")
  if [[ $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
    total_skipped=$((total_skipped + BASH_REMATCH[3]))
  else
    echo "$(basename "$test") did not finish" >&2
    total_failed=$((total_failed + 1))
  fi
done
echo "ca-scripts: $total_passed passed, $total_failed failed, $total_skipped skipped"
((total_failed == 0))
