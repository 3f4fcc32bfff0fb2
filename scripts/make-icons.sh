#!/bin/sh
# Renders the page's icon (web/icon.svg) into the PNG sizes the web app manifest names, with
# ffmpeg's librsvg decoder. Run after editing the icon, then scripts/embed-web.py.
set -eu
cd "$(dirname "$0")/.."
for size in 192 512; do
  ffmpeg -v error -y -width $size -height $size -i web/icon.svg "web/icon-$size.png"
done
