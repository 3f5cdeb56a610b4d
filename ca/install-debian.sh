#!/usr/bin/env bash
# Trust (or stop trusting) the ProxyApp root CA in the Debian/Ubuntu system store, which curl,
# wget, Python, Go, Node (with --use-openssl-ca) and other OpenSSL/GnuTLS programs read.
#
#   sudo ca/install-debian.sh CERT        install CERT (PEM or DER) as proxyapp-ca.crt
#   sudo ca/install-debian.sh --remove    remove it again
#
# For tests: PROXYAPP_CA_STORE_DIR replaces /usr/local/share/ca-certificates and
# PROXYAPP_UPDATE_CA_CMD replaces update-ca-certificates.
set -euo pipefail

# shellcheck source=ca/lib/certificate.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/certificate.sh"

store_dir=${PROXYAPP_CA_STORE_DIR:-/usr/local/share/ca-certificates}
update_command=${PROXYAPP_UPDATE_CA_CMD:-update-ca-certificates}
installed_name=proxyapp-ca.crt

usage() {
  cat <<USAGE
usage: $ca_script CERT          trust CERT (the ProxyApp CA, PEM or DER) system-wide
       $ca_script --remove      stop trusting it

Copies the certificate to $store_dir/$installed_name and runs $update_command.
Needs root (run it with sudo). Find the certificate with: proxyapp ca path
USAGE
}

run_update() {
  # shellcheck disable=SC2086  # the command may carry arguments
  command -v ${update_command%% *} >/dev/null 2>&1 ||
    ca_die "${update_command%% *} not found: install it with 'sudo apt-get install ca-certificates'"
  # shellcheck disable=SC2086
  $update_command
}

check_writable() {
  [[ -d $store_dir ]] || ca_die "$store_dir does not exist (is this Debian or Ubuntu? see ca/README.md for other systems)"
  [[ -w $store_dir ]] || ca_die "cannot write to $store_dir: run it as root (sudo $0 $*)"
}

remove=0
certificate=
for argument in "$@"; do
  case $argument in
    -h | --help) usage; exit 0 ;;
    --remove) remove=1 ;;
    -*) usage >&2; ca_die "unknown option: $argument" ;;
    *)
      [[ -z $certificate ]] || { usage >&2; ca_die "one certificate at a time (got '$certificate' and '$argument')"; }
      certificate=$argument
      ;;
  esac
done

if ((remove)); then
  [[ -z $certificate ]] || ca_die "--remove takes no certificate: it removes $store_dir/$installed_name"
  if [[ ! -e $store_dir/$installed_name ]]; then
    ca_note "nothing to remove: $store_dir/$installed_name is not there"
    exit 0
  fi
  check_writable --remove
  rm -f -- "$store_dir/$installed_name"
  run_update
  ca_note "removed $store_dir/$installed_name; the system store no longer trusts it"
  exit 0
fi

[[ -n $certificate ]] || { usage >&2; ca_die "which certificate? (e.g. $ca_script ~/.proxyapp/ca/ProxyCA.pem)"; }
ca_certificate_form "$certificate" >/dev/null
check_writable "$certificate"
scratch=$(mktemp -d)
trap 'rm -rf -- "$scratch"' EXIT
ca_certificate_to_pem "$certificate" "$scratch/$installed_name"
install -m 0644 "$scratch/$installed_name" "$store_dir/$installed_name"
run_update
ca_note "installed $store_dir/$installed_name: $(ca_describe "$store_dir/$installed_name")"
ca_note "remove it again with: sudo $0 --remove"
