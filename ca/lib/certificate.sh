# shellcheck shell=bash
# Shared by ca/install-*.sh: error reporting and the check that a file is a certificate (PEM or
# DER) and nothing else. These scripts handle only the public CA certificate, never a key.

ca_script=$(basename "$0")

ca_die() {
  echo "$ca_script: error: $*" >&2
  exit 1
}

ca_note() {
  echo "$ca_script: $*"
}

# Prints PEM or DER for a file holding exactly one X.509 certificate; exits with a clear error
# for a missing file, a private key, or anything openssl cannot read as a certificate.
ca_certificate_form() {
  local file=$1
  [[ -e $file ]] || ca_die "no such file: $file (find the CA with: proxyapp ca path)"
  [[ -f $file && -r $file ]] || ca_die "not a readable file: $file"
  command -v openssl >/dev/null 2>&1 || ca_die "openssl is needed to check the certificate (Debian: sudo apt-get install openssl)"
  if grep -aq -- "PRIVATE KEY" "$file"; then
    ca_die "$file contains a private key; give the CA certificate (ProxyCA.pem or ProxyCA.cer), never the key"
  fi
  if openssl x509 -noout -in "$file" -inform PEM 2>/dev/null; then
    echo PEM
  elif openssl x509 -noout -in "$file" -inform DER 2>/dev/null; then
    echo DER
  else
    ca_die "$file is not a PEM or DER X.509 certificate"
  fi
}

# Writes the certificate of $1 (PEM or DER) to $2 as PEM, certificate only.
ca_certificate_to_pem() {
  local file=$1 output=$2 form
  form=$(ca_certificate_form "$file")
  openssl x509 -in "$file" -inform "$form" -outform PEM -out "$output" ||
    ca_die "could not convert $file to PEM"
  if ! openssl x509 -noout -ext basicConstraints -in "$output" 2>/dev/null | grep -q "CA:TRUE"; then
    echo "$ca_script: warning: $file is not a CA certificate (no CA:TRUE); installing it anyway" >&2
  fi
}

# One line naming the certificate: subject and SHA-256 fingerprint.
ca_describe() {
  openssl x509 -noout -subject -fingerprint -sha256 -in "$1" | tr '\n' ' '
}
