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
# What the install.sh before the package left: it would shadow the package (a unit in /etc
# overrides /lib, /usr/local/bin comes first on PATH) and its config named its plugin folder.
if grep -qs /usr/local/bin/nvr /etc/systemd/system/nvr.service; then rm -f /etc/systemd/system/nvr.service; fi
rm -f /usr/local/bin/nvr /etc/ld.so.conf.d/nvr-swift.conf
rm -rf /usr/local/lib/nvr
if [ -f /etc/nvr/nvr.toml ] && ! dpkg -S /etc/nvr/nvr.toml >/dev/null 2>&1; then
  sed -i 's|/usr/local/lib/nvr|/usr/lib/nvr|' /etc/nvr/nvr.toml
fi
ldconfig
deb=$(scripts/build-deb.sh)   # the build's messages go to stderr, the package's path to stdout
# --force-confold: an existing /etc/nvr/nvr.toml is the admin's; keep it.
apt-get install -y -o Dpkg::Options::=--force-confold "./$deb"
