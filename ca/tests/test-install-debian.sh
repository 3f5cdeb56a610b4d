#!/usr/bin/env bash
# Tests ca/install-debian.sh against a temporary store directory and a stand-in for
# update-ca-certificates (PROXYAPP_CA_STORE_DIR, PROXYAPP_UPDATE_CA_CMD): no root, no change
# to the machine.
set -euo pipefail
# shellcheck source=ca/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

script="$CA_DIR/install-debian.sh"

setup_store() {
  mkdir store
  make_test_ca "$PWD"
  export PROXYAPP_CA_STORE_DIR=$PWD/store
  # The stand-in records each call, so the tests see the store was refreshed.
  printf '#!/bin/sh\necho update >> "%s/updates"\n' "$PWD" > update.sh
  chmod +x update.sh
  export PROXYAPP_UPDATE_CA_CMD=$PWD/update.sh
}

test_installs_pem_and_refreshes_store() {
  setup_store
  "$script" ca.pem >/dev/null
  cmp <(openssl x509 -in store/proxyapp-ca.crt -outform DER) ca.der || fail "installed certificate differs"
  [[ $(cat updates) == update ]] || fail "update command not run once"
  [[ $(stat -c %a store/proxyapp-ca.crt) == 644 ]] || fail "mode is not 0644"
}

test_converts_der_to_pem() {
  setup_store
  "$script" ca.der >/dev/null
  grep -q "BEGIN CERTIFICATE" store/proxyapp-ca.crt || fail "not stored as PEM"
  cmp <(openssl x509 -in store/proxyapp-ca.crt -outform DER) ca.der || fail "installed certificate differs"
}

test_remove() {
  setup_store
  "$script" ca.pem >/dev/null
  "$script" --remove >/dev/null
  [[ ! -e store/proxyapp-ca.crt ]] || fail "certificate still there"
  [[ $(wc -l < updates) -eq 2 ]] || fail "update not run on removal"
  [[ $("$script" --remove) == *"nothing to remove"* ]] || fail "second removal should say nothing to remove"
}

test_refuses_private_key_and_garbage() {
  setup_store
  expect_failure "contains a private key" "$script" ca.key
  cat ca.pem ca.key > both.pem
  expect_failure "contains a private key" "$script" both.pem
  echo "hello" > garbage.txt
  expect_failure "is not a PEM or DER X.509 certificate" "$script" garbage.txt
  expect_failure "no such file" "$script" missing.pem
  [[ -z $(ls store) ]] || fail "something was installed"
  [[ ! -e updates ]] || fail "update command ran"
}

test_usage_and_argument_errors() {
  setup_store
  [[ $("$script" -h) == usage:* ]] || fail "no usage on -h"
  expect_failure "which certificate" "$script"
  expect_failure "unknown option: --frobnicate" "$script" --frobnicate
  expect_failure "--remove takes no certificate" "$script" --remove ca.pem
  expect_failure "one certificate at a time" "$script" ca.pem ca.der
}

test_unwritable_store_asks_for_root() {
  ((EUID != 0)) || return 77  # root can write anywhere
  setup_store
  chmod 555 store
  expect_failure "run it as root" "$script" ca.pem
}

test_missing_store_names_the_problem() {
  setup_store
  export PROXYAPP_CA_STORE_DIR=$PWD/no-such-dir
  expect_failure "does not exist" "$script" ca.pem
}

for test in $(declare -F | awk '$3 ~ /^test_/ {print $3}'); do
  run_test "$test"
done
finish
