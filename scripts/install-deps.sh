#!/usr/bin/env bash
# Installs the Debian packages the NVR needs, skipping what is already there.
#   scripts/install-deps.sh run    libraries to build and run the NVR (FFmpeg, libjpeg-turbo, libmosquitto),
#                                  and ONNX Runtime for object detection (from PyPI, into /usr/local/lib/nvr)
#   scripts/install-deps.sh test   plus what the tests use (GStreamer RTSP server, ffmpeg CLI, cc, the
#                                  darknet package's pictures, PostgreSQL)
set -euo pipefail
mode=${1:-run}
# libcurl4-openssl-dev: the plugins that speak HTTP link FoundationNetworking statically in `make deb`.
pkgs=(pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libturbojpeg0-dev libsqlite3-dev libcurl4-openssl-dev libmosquitto-dev
      python3-pip unzip)
if [ "$mode" = test ]; then
  pkgs+=(ffmpeg gcc chromium python3-venv python3-gi gir1.2-gst-plugins-base-1.0 gir1.2-gst-rtsp-server-1.0 gstreamer1.0-rtsp
         gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly
         gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-x prometheus iproute2 curl mosquitto mosquitto-clients darknet
         postgresql)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The tests want promtool only: Debian's prometheus package also starts a server on :9090.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  # Likewise the tests start their own mosquitto brokers: not Debian's on :1883.
  if [[ " ${missing[*]} " == *" mosquitto "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now mosquitto >/dev/null 2>&1 || true
  fi
  # And their own PostgreSQL servers (initdb into a temporary folder): not Debian's on :5432.
  if [[ " ${missing[*]} " == *" postgresql "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now postgresql >/dev/null 2>&1 || true
  fi
fi

# ONNX Runtime, which object detection loads with dlopen (the NVR builds and runs without it):
# its shared library ships only in the PyPI wheel, so the wheel is downloaded and the library
# alone taken out of it, into /usr/local/lib/nvr, where the NVR looks first.
ort_version=1.26.0
ort_dir=/usr/local/lib/nvr
if ! ls "$ort_dir"/libonnxruntime.so.* >/dev/null 2>&1; then
  echo "installing ONNX Runtime $ort_version into $ort_dir (from the onnxruntime wheel on PyPI)"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  wheels=$(mktemp -d)
  if python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$wheels" \
       "onnxruntime==$ort_version" && unzip -q -o -j "$wheels"/onnxruntime-*.whl 'onnxruntime/capi/libonnxruntime.so.*' -d "$wheels/lib"; then
    $sudo install -d "$ort_dir"
    $sudo install -m 644 "$wheels"/lib/libonnxruntime.so.* "$ort_dir/"
  else
    echo "install-deps: could not fetch ONNX Runtime; the NVR runs without object detection" >&2
  fi
  rm -rf "$wheels"
fi

# The tests' Python tools from PyPI, in a venv of Debian's python3 inside .build/ (never
# committed): schemathesis runs the API from its OpenAPI document; playwright drives Debian's
# chromium (no browser download) for the page's tests; tinytuya checks the Tuya simulator;
# onvif-zeep and WSDiscovery check the ONVIF simulator; zeroconf announces the GoPro simulator by mDNS;
# paho-mqtt is the independent MQTT client that checks what the NVR publishes; onnxruntime is
# the runtime the detection tests load, and onnx builds their small models.
if [ "$mode" = test ]; then
  venv="$(dirname "$0")/../.build/test-venv"
  want=(schemathesis==4.32.5 playwright==1.65.2 tinytuya==1.17.4 onvif-zeep==0.2.12 WSDiscovery==2.1.2 zeroconf==0.154.0 paho-mqtt==2.1.0
        onnxruntime==1.26.0 onnx==1.16.2)
  if ! "$venv/bin/python" -c "import schemathesis, playwright, tinytuya, onvif, wsdiscovery, zeroconf, paho.mqtt, onnxruntime, onnx" 2>/dev/null; then
    echo "installing into .build/test-venv: ${want[*]}"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${want[@]}"
  fi
fi
