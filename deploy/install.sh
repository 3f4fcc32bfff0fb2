#!/usr/bin/env bash
# Builds a release and installs nvr as a systemd service (run as root from the repository).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
swift build -c release
install -d /usr/local/lib/nvr /etc/nvr
install -m 755 .build/release/nvr /usr/local/bin/nvr
install -m 755 .build/release/libnvr-plugin-*.so /usr/local/lib/nvr/
# The Swift runtime libraries the binaries link against.
echo "/opt/swift/usr/lib/swift/linux" > /etc/ld.so.conf.d/nvr-swift.conf && ldconfig
id nvr >/dev/null 2>&1 || useradd --system --home /var/lib/nvr --shell /usr/sbin/nologin nvr
install -d -o nvr -g nvr /var/lib/nvr
[ -f /etc/nvr/nvr.toml ] || install -m 644 deploy/nvr.toml.example /etc/nvr/nvr.toml
install -m 644 deploy/nvr.service /etc/systemd/system/nvr.service
systemctl daemon-reload
echo "installed; add cameras with: sudo -u nvr nvr camera add NAME --plugin rtsp --url rtsp://... --config /etc/nvr/nvr.toml"
echo "then: systemctl enable --now nvr"
