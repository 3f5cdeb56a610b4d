#!/usr/bin/env bash
# Trust (or stop trusting) the ProxyApp root CA in NSS databases: the per-user ~/.pki/nssdb
# that Chromium and Chrome read on Linux, and the database of every Firefox profile found.
#
#   ca/install-nss.sh CERT [NSSDB]           add CERT (PEM or DER) as "ProxyApp CA"
#   ca/install-nss.sh --remove [NSSDB]       delete "ProxyApp CA" again
#
# NSSDB names one database directory and replaces the default list. No root needed; restart
# the browsers afterwards.
set -euo pipefail

# shellcheck source=ca/lib/certificate.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/certificate.sh"

nickname="ProxyApp CA"

usage() {
  cat <<USAGE
usage: $ca_script CERT [NSSDB]         trust CERT (the ProxyApp CA, PEM or DER) in NSS databases
       $ca_script --remove [NSSDB]     remove "$nickname" from them

Without NSSDB: ~/.pki/nssdb (Chromium, Chrome; created when missing) and every Firefox
profile under ~/.mozilla/firefox and ~/snap/firefox/common/.mozilla/firefox.
Needs certutil (Debian/Ubuntu: sudo apt-get install libnss3-tools; Fedora: nss-tools).
Find the certificate with: proxyapp ca path
USAGE
}

# The databases to change, one directory per line.
default_databases() {
  echo "$HOME/.pki/nssdb"
  local profile
  for profile in "$HOME"/.mozilla/firefox/*/ "$HOME"/snap/firefox/common/.mozilla/firefox/*/; do
    [[ -f $profile/cert9.db ]] && echo "${profile%/}"
  done
  return 0
}

has_certificate() {
  certutil -L -d "sql:$1" -n "$nickname" >/dev/null 2>&1
}

# Deletes every certificate stored under the nickname (a regenerated CA may have left two).
delete_all() {
  local database=$1 attempts=0
  while has_certificate "$database"; do
    ((attempts++ < 20)) || ca_die "could not delete \"$nickname\" from $database"
    certutil -D -d "sql:$database" -n "$nickname" || ca_die "certutil could not delete \"$nickname\" from $database"
  done
}

remove=0
positional=()
for argument in "$@"; do
  case $argument in
    -h | --help) usage; exit 0 ;;
    --remove) remove=1 ;;
    -*) usage >&2; ca_die "unknown option: $argument" ;;
    *) positional+=("$argument") ;;
  esac
done

command -v certutil >/dev/null 2>&1 ||
  ca_die "certutil not found: install it with 'sudo apt-get install libnss3-tools' (Debian/Ubuntu) or 'sudo dnf install nss-tools' (Fedora)"

certificate=
if ((remove)); then
  ((${#positional[@]} <= 1)) || { usage >&2; ca_die "--remove takes at most one NSSDB directory"; }
  explicit_database=${positional[0]:-}
else
  ((${#positional[@]} >= 1)) || { usage >&2; ca_die "which certificate? (e.g. $ca_script ~/.proxyapp/ca/ProxyCA.pem)"; }
  ((${#positional[@]} <= 2)) || { usage >&2; ca_die "too many arguments: CERT [NSSDB]"; }
  certificate=${positional[0]}
  explicit_database=${positional[1]:-}
fi

if [[ -n $explicit_database ]]; then
  explicit_database=${explicit_database#sql:}
  [[ -d $explicit_database ]] || ca_die "no such NSS database directory: $explicit_database"
  [[ -f $explicit_database/cert9.db ]] ||
    ca_die "$explicit_database has no cert9.db (create one with: certutil -N -d sql:$explicit_database --empty-password)"
  databases=("$explicit_database")
else
  mapfile -t databases < <(default_databases)
fi

if ((remove)); then
  for database in "${databases[@]}"; do
    if [[ -f $database/cert9.db ]] && has_certificate "$database"; then
      delete_all "$database"
      ca_note "removed \"$nickname\" from $database"
    else
      ca_note "nothing to remove in $database"
    fi
  done
  exit 0
fi

ca_certificate_form "$certificate" >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf -- "$scratch"' EXIT
ca_certificate_to_pem "$certificate" "$scratch/ProxyCA.pem"
for database in "${databases[@]}"; do
  if [[ ! -f $database/cert9.db ]]; then
    mkdir -p -- "$database"
    certutil -N -d "sql:$database" --empty-password || ca_die "could not create an NSS database in $database"
    ca_note "created NSS database $database"
  fi
  delete_all "$database"
  # C,, : a trusted CA for TLS server certificates (not for e-mail or code signing).
  certutil -A -d "sql:$database" -n "$nickname" -t "C,," -i "$scratch/ProxyCA.pem" ||
    ca_die "certutil could not add the certificate to $database"
  ca_note "trusted \"$nickname\" in $database"
done
ca_note "$(ca_describe "$scratch/ProxyCA.pem")"
ca_note "restart the browsers to pick it up; remove it again with: $0 --remove"
