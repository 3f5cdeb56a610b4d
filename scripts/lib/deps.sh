# shellcheck shell=bash
# What ProxyApp's scripts need before they can build or run anything: Debian packages, the Swift
# toolchain and the release binary. Sourced by scripts/run, scripts/test and scripts/bench.
#
#   ensure_debian_packages PKG...   install the packages that are missing (apt-get, root or sudo)
#   ensure_swift                    make `swift` callable (adds /opt/swift/usr/bin to PATH if needed)
#   ensure_proxyapp_release         build .build/release/proxyapp (incremental; run from the repo root;
#                                   nothing at all when no input changed since the last build)
#   ensure_release_product NAME     build .build/release/NAME, another product of the package, the same way
#
# A warm call (everything present) asks dpkg once and never touches apt, so it costs milliseconds;
# a warm ensure_proxyapp_release with unchanged sources asks neither dpkg nor swift.
# Run directly, it installs its arguments: scripts/lib/deps.sh wrk nginx

# System libraries the Swift package links (sqlite3 for GRDB, brotli/zlib/zstd for body decoding,
# xxhash for the names of captured body files, re2 for the linear-time regexes of rules and
# filters, c-ares for DNS lookups, qrencode for the CA page's QR code, libcrypt for bcrypt in
# --auth-file, ncursesw for the terminal UI) and pkg-config, which SwiftPM uses to find them.
# (Word-split on purpose by callers: ensure_debian_packages $PROXYAPP_BUILD_PACKAGES.)
PROXYAPP_BUILD_PACKAGES="libsqlite3-dev libbrotli-dev zlib1g-dev libzstd-dev libxxhash-dev libncurses-dev libre2-dev libc-ares-dev libqrencode-dev libcrypt-dev pkg-config"

# Where the toolchain lives on this project's machines, when `swift` is not already on PATH.
PROXYAPP_SWIFT_BIN=${PROXYAPP_SWIFT_BIN:-/opt/swift/usr/bin}

deps_note() { echo "deps: $*" >&2; }
deps_error() { echo "deps: error: $*" >&2; }

# Prints, one per line, the packages among "$@" that dpkg does not report as "install ok installed"
# (never installed, removed, half-configured, ...). One dpkg-query call for all of them.
missing_debian_packages() {
  local -A installed=()
  local name status
  # dpkg-query exits 1 and complains on stderr for names it has never seen: those simply stay
  # out of the table and count as missing.
  while IFS=' ' read -r name status; do
    [[ $status == "install ok installed" ]] && installed[$name]=1
  done < <(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true)
  local pkg
  for pkg in "$@"; do
    [[ -n ${installed[$pkg]:-} ]] || echo "$pkg"
  done
}

# Runs a command as root: directly when we are root, through sudo when it exists, else fails.
deps_as_root() {
  if ((EUID == 0)); then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    return 127
  fi
}

# apt-get update runs at most once per process, and only when something has to be installed.
PROXYAPP_APT_UPDATED=${PROXYAPP_APT_UPDATED:-0}

ensure_debian_packages() {
  (($# > 0)) || return 0
  if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian (macOS, another distribution): the developer installs these by hand.
    deps_note "no dpkg here; make sure these (or their equivalents) are installed: $*"
    return 0
  fi

  local missing=()
  mapfile -t missing < <(missing_debian_packages "$@")
  ((${#missing[@]} > 0)) || return 0

  if ((EUID != 0)) && ! command -v sudo >/dev/null 2>&1; then
    deps_error "missing Debian packages: ${missing[*]}"
    deps_error "not root and no sudo: as root run: apt-get install --no-install-recommends ${missing[*]}"
    return 1
  fi

  # Wait for another apt/dpkg run (a colleague's install) instead of failing on its lock.
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
  if ((PROXYAPP_APT_UPDATED == 0)); then
    deps_note "missing ${missing[*]}: running apt-get update"
    deps_as_root "${apt[@]}" update -qq || { deps_error "apt-get update failed"; return 1; }
    PROXYAPP_APT_UPDATED=1
  fi
  deps_note "installing ${missing[*]}"
  # dpkg's progress goes to stdout (dropped); apt's and dpkg's errors go to stderr (kept).
  if ! deps_as_root "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    deps_error "apt-get install ${missing[*]} failed"
    return 1
  fi

  # Trust dpkg, not apt's exit code alone.
  mapfile -t missing < <(missing_debian_packages "${missing[@]}")
  if ((${#missing[@]} > 0)); then
    deps_error "still not installed after apt-get: ${missing[*]}"
    return 1
  fi
}

ensure_swift() {
  if ! command -v swift >/dev/null 2>&1 && [[ -x $PROXYAPP_SWIFT_BIN/swift ]]; then
    PATH="$PROXYAPP_SWIFT_BIN:$PATH"
    export PATH
  fi
  if ! command -v swift >/dev/null 2>&1; then
    deps_error "swift not found on PATH nor in $PROXYAPP_SWIFT_BIN (set PROXYAPP_SWIFT_BIN to the toolchain's bin directory)"
    return 1
  fi
}

# The release build of the proxy: dynamic exclusivity checks off in every module, SwiftNIO's
# included (Package.swift can only turn them off for our own targets; in NIO they cost ~4% of a
# proxied request, thread-local lookups included). Debug builds and tests keep them.
#
# And its code laid out by use: every function in a section of its own (Swift -function-sections,
# C -ffunction-sections), and gold places first, together, the functions named in
# proxyapp.link-order (those a proxy under load runs, then those only start-up runs; remade by
# scripts/lib/make-link-order.sh). Code is mapped from the file and faulted in 64 KiB at a time:
# spread over the whole binary, the ~5,000 functions a proxy under load runs kept 11.6 MiB of it
# resident, 3 MiB together (and CPU per request fell 1-4 %). A function the order does not name
# (new code) goes after the others: a stale order costs memory, never correctness.
PROXYAPP_LINK_ORDER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/proxyapp.link-order"
PROXYAPP_RELEASE_FLAGS=(-c release -Xswiftc -enforce-exclusivity=unchecked
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
  -Xlinker "--section-ordering-file=$PROXYAPP_LINK_ORDER")

# Builds (or brings up to date) the release binary .build/release/proxyapp. Call from the repo root.
# Only errors are printed; a cold release build takes several minutes on 2 cores.
ensure_proxyapp_release() {
  ensure_release_product proxyapp
}

# The same for any product of the package (scripts/bench builds its load generator this way).
# A warm call skips the package check and `swift build` (which alone costs ~10 s of planning)
# when release_product_is_fresh says nothing the build reads changed since its last success.
ensure_release_product() {  # NAME
  release_product_is_fresh "$1" && return 0
  # shellcheck disable=SC2086  # the package list is meant to split into words
  ensure_debian_packages $PROXYAPP_BUILD_PACKAGES || return 1
  ensure_swift || return 1
  [[ -x .build/release/$1 ]] || deps_note "building $1 (release); the first build takes several minutes"
  # Stamped with the time the build started: a file saved during the build is newer, so the
  # next call builds again. The stamps live in .build/stamps: SwiftPM replaces .build/release
  # (a link to the triple's directory) on a first build, with whatever was made in it.
  local stamp=.build/stamps/$1.stamp
  mkdir -p .build/stamps
  : >"$stamp.pending"
  # SwiftPM does not see the link order (a file named in a flag): a product older than it is
  # removed, so that it is linked again.
  if [[ -e .build/release/$1 && $PROXYAPP_LINK_ORDER -nt .build/release/$1 ]]; then
    rm -f ".build/release/$1"
  fi
  # Nor does it always compile again when the flags change (objects built before
  # -function-sections were kept): release objects built with other flags are removed first.
  local flags=.build/stamps/release-flags
  if [[ ! -f $flags || $(<"$flags") != "${PROXYAPP_RELEASE_FLAGS[*]}" ]]; then
    find .build -path '*/release/*' -name '*.o' -delete 2>/dev/null || true
  fi
  if ! swift build "${PROXYAPP_RELEASE_FLAGS[@]}" --product "$1" --quiet; then
    rm -f "$stamp.pending"
    deps_error "swift build ${PROXYAPP_RELEASE_FLAGS[*]} --product $1 failed"
    return 1
  fi
  printf '%s' "${PROXYAPP_RELEASE_FLAGS[*]}" >"$flags"
  mv -f "$stamp.pending" "$stamp"
}

# What the release build reads, besides the toolchain: a change to any of these (a file saved,
# added or removed: its directory's time changes too) makes the next run build.
PROXYAPP_BUILD_INPUTS=(Sources Package.swift Package.resolved scripts/lib/deps.sh scripts/lib/proxyapp.link-order)

# True when .build/release/NAME exists and no build input is newer than the stamp of its last
# successful build. One `find` over the inputs: a few milliseconds. Call from the repo root.
release_product_is_fresh() {  # NAME
  local stamp=.build/stamps/$1.stamp
  [[ -x .build/release/$1 && -f $stamp ]] || return 1
  local inputs=() input candidates=("${PROXYAPP_BUILD_INPUTS[@]}")
  [[ $1 == proxyapp ]] || candidates+=(Benchmarks)  # the bench tools' sources: the proxy never reads them
  for input in "${candidates[@]}"; do
    [[ -e $input ]] && inputs+=("$input")
  done
  [[ -z $(find "${inputs[@]}" -newer "$stamp" -print -quit 2>/dev/null) ]]
}

# Executed rather than sourced: install the packages named on the command line.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  ensure_debian_packages "$@"
fi
