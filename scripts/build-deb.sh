#!/usr/bin/env bash
# Builds the Debian package: make deb  →  .build-deb/nvr_VERSION_ARCH.deb
#   /usr/bin/nvr              built with --static-swift-stdlib: no Swift toolchain needed to run
#   /usr/lib/nvr/*.so         the camera plugins (also static: each carries what it needs)
#   /usr/lib/nvr/libonnxruntime.so.*   ONNX Runtime for object detection (scripts/install-deps.sh run
#                             puts it in /usr/local/lib/nvr, from PyPI's onnxruntime wheel)
#   /usr/share/nvr/models/    the built-in person model, its licence and origin
#   /etc/nvr/nvr.toml         the config (a conffile: an upgrade keeps the admin's changes)
#   /lib/systemd/system/nvr.service   the hardened unit (no demo camera)
#   maintainer scripts: the nvr system user, /var/lib/nvr (nvr, 0750)
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
scratch=.build-deb
# --static-swift-stdlib links the runtime into executables only; -static-stdlib does it for the
# plugins' shared libraries too, and those links need the static libraries' folder (SwiftPM
# passes it for executables only).
# The folder is asked of the toolchain (a `swift` reached through swiftly's proxy links elsewhere).
resources=$("$swift" -print-target-info | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p' | head -1)
static_libs="${resources}_static/linux"
[ -d "$static_libs" ] || { echo "build-deb: no static Swift libraries in $static_libs" >&2; exit 1; }
# Only the package's path goes to stdout (install.sh reads it); the build talks on stderr.
# Only what the package ships (nvr and the plugins): the test support and simulators are not
# built for release.
for product in nvr $(grep -oE 'name: "nvr-plugin-[a-z0-9]+"' Package.swift | cut -d'"' -f2); do
  "$swift" build -c release --static-swift-stdlib -Xswiftc -static-stdlib --scratch-path "$scratch" -Xlinker -L"$static_libs" \
    --product "$product" >&2
done
bin="$scratch/release"
version=$("$bin/nvr" --version)
arch=$(dpkg --print-architecture)
root="$scratch/pkg"
rm -rf "$root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/nvr" "$root/etc/nvr" "$root/lib/systemd/system" \
  "$root/usr/share/doc/nvr/prometheus" "$root/usr/share/nvr/models"
install -m 755 -s "$bin/nvr" "$root/usr/bin/nvr"
for so in "$bin"/libnvr-plugin-*.so; do install -m 644 -s "$so" "$root/usr/lib/nvr/"; done
ort=$(ls /usr/local/lib/nvr/libonnxruntime.so.* 2>/dev/null | sort | tail -1)
[ -n "$ort" ] || { echo "build-deb: no ONNX Runtime in /usr/local/lib/nvr (run scripts/install-deps.sh run)" >&2; exit 1; }
install -m 644 "$ort" "$root/usr/lib/nvr/"
install -m 644 models/person-ssdlite.onnx models/README.md models/LICENSE.person-ssdlite "$root/usr/share/nvr/models/"
install -m 640 deploy/nvr.toml "$root/etc/nvr/nvr.toml"
install -m 644 deploy/nvr.service "$root/lib/systemd/system/nvr.service"
install -m 644 README.md "$root/usr/share/doc/nvr/README.md"
install -m 644 deploy/prometheus/*.yml "$root/usr/share/doc/nvr/prometheus/"
install -m 755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$root/DEBIAN/"
echo /etc/nvr/nvr.toml > "$root/DEBIAN/conffiles"

# Depends: the Debian package of every shared library the binaries link against directly
# (FFmpeg, libjpeg-turbo, SQLite, curl, glibc...); those packages bring their own dependencies.
deps=$(for f in "$root/usr/bin/nvr" "$root"/usr/lib/nvr/*.so*; do
         needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
         ldd "$f" | awk -v want="$needed" 'BEGIN { n = split(want, w, "\n"); for (i = 1; i <= n; i++) keep[w[i]] = 1 }
                                         $2 == "=>" && ($1 in keep) && $3 ~ /^\// { print $3 }'
       done | sort -u | while read -r lib; do
         real=$(readlink -f "$lib")
         dpkg -S "$real" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
       done | cut -d: -f1 | sort -u | while read -r pkg; do
         # At least the version built against: a package built on a newer release must not
         # install on an older one and then fail on missing symbol versions.
         dpkg-query -W -f='${Package} (>= ${Version})\n' "$pkg"
       done | paste -sd, | sed 's/,/, /g')
[ -n "$deps" ] || { echo "build-deb: found no library packages" >&2; exit 1; }
size=$(du -sk "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: nvr
Version: $version
Architecture: $arch
Maintainer: nvr developers <nvr@localhost>
Installed-Size: $size
Depends: adduser, $deps
Section: video
Priority: optional
Homepage: https://github.com/nvr/nvr
Description: network video recorder
 Records IP cameras (RTSP, GoPro, Insta360, Tuya) continuously or on events into
 indexed MP4 segments with almost no CPU, plays back any range as one MP4, and serves
 a web page with live view, timelines and events. Tells a person from a shadow:
 person detection on the CPU (ONNX Runtime and the model are included).
CONTROL
out="$scratch/nvr_${version}_${arch}.deb"
# gzip: xz takes a minute for the ~90 MB of static binaries and saves little.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$out" >/dev/null
echo "$out"
