#!/usr/bin/env bash
# Tests ca/install-nss.sh against NSS databases in a temporary HOME (a Chromium ~/.pki/nssdb
# and two Firefox profiles) and an explicit database. Needs certutil (libnss3-tools).
set -euo pipefail
# shellcheck source=ca/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

script="$CA_DIR/install-nss.sh"

if ! command -v certutil >/dev/null 2>&1; then
  echo "certutil missing (Debian: apt-get install libnss3-tools): NSS tests skipped"
  echo "0 passed, 0 failed, 6 skipped"
  exit 0
fi

trust_of() {  # prints the trust flags of "ProxyApp CA" in database $1, or nothing
  certutil -L -d "sql:$1" | awk '/^ProxyApp CA / {print $NF}'
}

setup_home() {
  make_test_ca "$PWD"
  export HOME=$PWD/home
  mkdir -p "$HOME/.mozilla/firefox/abc.default-release" "$HOME/snap/firefox/common/.mozilla/firefox/xyz.default" \
    "$HOME/.mozilla/firefox/old.legacy"
  certutil -N -d "sql:$HOME/.mozilla/firefox/abc.default-release" --empty-password
  certutil -N -d "sql:$HOME/snap/firefox/common/.mozilla/firefox/xyz.default" --empty-password
}

test_installs_into_chromium_and_firefox_profiles() {
  setup_home
  "$script" ca.pem >/dev/null
  [[ $(trust_of "$HOME/.pki/nssdb") == "C,," ]] || fail "not trusted in ~/.pki/nssdb"
  [[ $(trust_of "$HOME/.mozilla/firefox/abc.default-release") == "C,," ]] || fail "not trusted in Firefox profile"
  [[ $(trust_of "$HOME/snap/firefox/common/.mozilla/firefox/xyz.default") == "C,," ]] || fail "not trusted in snap profile"
  [[ ! -e $HOME/.mozilla/firefox/old.legacy/cert9.db ]] || fail "created a database in a profile without one"
  cmp <(certutil -L -d "sql:$HOME/.pki/nssdb" -n "ProxyApp CA" -a | openssl x509 -outform DER) ca.der ||
    fail "stored certificate differs"
}

test_reinstall_replaces_instead_of_duplicating() {
  setup_home
  "$script" ca.pem >/dev/null
  mkdir second && make_test_ca "$PWD/second"
  "$script" second/ca.der >/dev/null
  [[ $(certutil -L -d "sql:$HOME/.pki/nssdb" | grep -c "^ProxyApp CA ") == 1 ]] || fail "more than one ProxyApp CA"
  cmp <(certutil -L -d "sql:$HOME/.pki/nssdb" -n "ProxyApp CA" -a | openssl x509 -outform DER) second/ca.der ||
    fail "the new certificate did not replace the old one"
}

test_remove_from_all() {
  setup_home
  "$script" ca.pem >/dev/null
  "$script" --remove >/dev/null
  [[ -z $(trust_of "$HOME/.pki/nssdb") ]] || fail "still in ~/.pki/nssdb"
  [[ -z $(trust_of "$HOME/.mozilla/firefox/abc.default-release") ]] || fail "still in Firefox profile"
  [[ $("$script" --remove) == *"nothing to remove"* ]] || fail "second removal should say nothing to remove"
}

test_explicit_database_only() {
  setup_home
  mkdir db && certutil -N -d sql:db --empty-password
  "$script" ca.pem "sql:$PWD/db" >/dev/null
  [[ $(trust_of db) == "C,," ]] || fail "not trusted in the explicit database"
  [[ ! -e $HOME/.pki/nssdb ]] || fail "touched ~/.pki/nssdb"
  [[ -z $(trust_of "$HOME/.mozilla/firefox/abc.default-release") ]] || fail "touched a Firefox profile"
  "$script" --remove db >/dev/null
  [[ -z $(trust_of db) ]] || fail "not removed from the explicit database"
  mkdir empty
  expect_failure "has no cert9.db" "$script" ca.pem empty
  expect_failure "no such NSS database directory" "$script" ca.pem nowhere
}

test_refuses_keys_garbage_and_bad_arguments() {
  setup_home
  expect_failure "contains a private key" "$script" ca.key
  echo "not a certificate" > garbage.pem
  expect_failure "is not a PEM or DER X.509 certificate" "$script" garbage.pem
  expect_failure "which certificate" "$script"
  expect_failure "too many arguments" "$script" ca.pem a b
  expect_failure "unknown option" "$script" --frobnicate
  [[ $("$script" --help) == usage:* ]] || fail "no usage on --help"
  [[ ! -e $HOME/.pki/nssdb ]] || fail "created ~/.pki/nssdb for a refused certificate"
}

test_missing_certutil_names_the_package() {
  setup_home
  mkdir bin
  local tool
  for tool in dirname basename openssl grep; do
    ln -s "$(command -v "$tool")" "bin/$tool"
  done
  expect_failure "libnss3-tools" env PATH="$PWD/bin" /bin/bash "$script" ca.pem
}

for test in $(declare -F | awk '$3 ~ /^test_/ {print $3}'); do
  run_test "$test"
done
finish
