#!/usr/bin/env bash
# Builds nvr from this source tree and installs it as a Debian package (run as root from the
# repository): the same package `make deb` makes, so removing it is `apt remove nvr`.
# Swift is found like the Makefile does: $SWIFT, else `swift` on PATH, else /opt/swift.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (sudo deploy/install.sh)" >&2; exit 1; }
scripts/install-deps.sh run
export SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
[ -x "$SWIFT" ] || { echo "install.sh: no Swift toolchain (README: Building from source)" >&2; exit 1; }
deb=$(scripts/build-deb.sh | tail -1)
apt-get install -y "./$deb"
