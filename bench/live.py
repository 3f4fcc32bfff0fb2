#!/usr/bin/env python3
"""bench/live: the live view — glass-to-glass latency in Chromium, the server's CPU per viewer,
and how many viewers of one 1080p camera one `nvr serve` feeds.

Latency: a GStreamer RTSP camera (Tests/Support/rtsp_camera.py --pattern flash, 1920×1080,
25 fps, key frame every 2 s) turns its picture dark and bright at known wall-clock times. The
release `nvr serve` records it; Debian's chromium (playwright) opens the page's camera view,
which plays the live WebSocket through Media Source Extensions. A script in the page reads the
video's pixels at every presented frame (requestVideoFrameCallback, 16×9 canvas) and notes when
the picture flips; the flip's latency is that moment minus the moment the camera pushed the
frame into its encoder (same machine, same clock). So the figure includes the camera's encoder
and RTP packetizer, the network (loopback), nvr, the WebSocket, MSE buffering, decoding and
compositing — what a person looking at the screen would see.

First picture: the same page load, from navigation to the video's first decodable frame
(readyState ≥ 2, polled at every animation frame). No one watched the camera before, so its
live view starts from the segment being written (design/live-view.md).

Viewers: a 1080p camera (videotestsrc snow, x264 at --kbps, 15 fps, 2 s GOP, so every frame
has a realistic size) and N WebSocket viewers (a Python asyncio client that reads every
message). The server's CPU over --seconds (utime+stime from /proc) with N viewers minus with
none, per viewer; a viewer is fed when it received ≥ 95 % of the camera's frames and was never
told to skip.

Usage: bench/live [--latency-seconds 40] [--viewers 1,20,50,100] [--seconds 20] [--kbps 4000] [--skip-build]
"""
import argparse
import asyncio
import base64
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from playback import ROOT, NVR, pct, stop  # noqa: E402
from tls import cpu_seconds  # noqa: E402
PYTHON = os.path.join(ROOT, ".build", "test-venv", "bin", "python")


def start_camera(args):
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(ROOT, "Tests/Support/rtsp_camera.py"), "--port", "0", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert line.startswith("READY "), line
    return p, int(line.split()[1])


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(work, camera_url):
    port = free_port()
    cfg = os.path.join(work, "nvr.toml")
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{work}/Storage"\n[recording]\nsegment_seconds = 60\n'
                f'[plugins]\ndir = "{ROOT}/.build/release"\n[http]\nbind = "127.0.0.1:{port}"\n')
    subprocess.run([NVR, "camera", "add", "cam", "--plugin", "rtsp", "--url", camera_url, "--config", cfg], check=True, capture_output=True)
    log = open(os.path.join(work, "serve.log"), "w")
    p = subprocess.Popen([NVR, "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg], stdout=log, stderr=log)
    import urllib.request
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/cameras/cam", timeout=2) as r:
                if b'"streaming' in r.read():
                    return p, port
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("the camera did not start streaming in nvr serve")


# MARK: latency

PROBE = """(seconds) => new Promise((done) => {
  const v = document.querySelector('.stage video');
  const c = document.createElement('canvas'); c.width = 16; c.height = 9;
  const g = c.getContext('2d', { willReadFrequently: true });
  const flips = []; let last = null, frames = 0;
  const end = performance.now() + seconds * 1000;
  const look = (now, meta) => {
    g.drawImage(v, 0, 0, 16, 9);
    const d = g.getImageData(0, 0, 16, 9).data;
    let sum = 0; for (let i = 0; i < d.length; i += 4) sum += d[i];
    const bright = sum / (d.length / 4) > 128;
    // expectedDisplayTime: when the compositor shows this frame.
    if (last !== null && bright !== last) flips.push({ bright, at: performance.timeOrigin + meta.expectedDisplayTime });
    last = bright; frames++;
    if (performance.now() < end) v.requestVideoFrameCallback(look); else done({ flips, frames });
  };
  v.requestVideoFrameCallback(look);
})"""


def bench_latency(work, seconds, period):
    t0_file = os.path.join(work, "t0")
    cam, cam_port = start_camera(["--width", "1920", "--height", "1080", "--fps", "25", "--gop-seconds", "2", "--kbps", "4000",
                                  "--pattern", "flash", "--flash-period", str(period), "--t0-file", t0_file])
    server, port = serve(work, f"rtsp://127.0.0.1:{cam_port}/stream")
    script = os.path.join(work, "probe.py")
    with open(script, "w") as f:
        f.write(f"""
import json, sys
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
    page = b.new_page(viewport={{"width": 1280, "height": 900}})
    page.goto("http://127.0.0.1:{port}/#/camera/cam")
    # The first picture: from the page's navigation to a decodable frame (no one watched the
    # camera before: its live view starts from the segment being written).
    page.wait_for_function("() => {{ const v = document.querySelector('.stage video'); return v && v.readyState >= 2; }}", polling="raf", timeout=20000)
    first = page.evaluate("() => performance.now()")
    page.wait_for_function("() => {{ const v = document.querySelector('.stage video'); return v && v.currentTime > 2; }}", timeout=20000)
    print(json.dumps({{**page.evaluate({PROBE!r}, {seconds}), "first": first}}))
    b.close()
""")
    try:
        r = subprocess.run([PYTHON, script], capture_output=True, text=True, timeout=seconds + 90)
        if r.returncode != 0:
            raise SystemExit("the browser probe failed:\n" + r.stderr[-3000:])
        import json
        out = json.loads(r.stdout.strip().splitlines()[-1])
        with open(t0_file) as f:
            t0 = float(f.read()) * 1000
    finally:
        stop(server)
        stop(cam)
    lat = []
    for flip in out["flips"]:
        # The newest change of this kind at or before the moment seen: bright in odd periods.
        k = int((flip["at"] - t0) // (period * 1000))
        if (k % 2 == 1) != flip["bright"]:
            k -= 1
        lat.append(flip["at"] - (t0 + k * period * 1000))
    return lat, out["frames"], out["first"]


# MARK: viewers

async def viewer(port, seconds, stats):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET /api/cameras/cam/live HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    frames = skips = size = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            h = await asyncio.wait_for(reader.readexactly(2), max(0.01, end - time.monotonic()))
        except asyncio.TimeoutError:
            break
        n = h[1] & 0x7F
        if n == 126:
            n = int.from_bytes(await reader.readexactly(2), "big")
        elif n == 127:
            n = int.from_bytes(await reader.readexactly(8), "big")
        payload = await reader.readexactly(n)
        if h[0] & 0x0F == 2:
            frames += 1
            size += n
        elif h[0] & 0x0F == 1 and b'"skip"' in payload:
            skips += 1
    writer.close()
    stats.append((frames, skips, size))


async def viewers(port, n, seconds):
    stats = []
    await asyncio.gather(*(viewer(port, seconds, stats) for _ in range(n)))
    return stats


def bench_viewers(work, counts, seconds, kbps):
    fps = 15
    cam, cam_port = start_camera(["--width", "1920", "--height", "1080", "--fps", str(fps), "--gop-seconds", "2", "--kbps", str(kbps),
                                  "--pattern", "snow"])
    server, port = serve(work, f"rtsp://127.0.0.1:{cam_port}/stream")
    rows = []
    try:
        time.sleep(5)
        c0 = cpu_seconds(server.pid)
        time.sleep(seconds)
        base = (cpu_seconds(server.pid) - c0) / seconds * 100
        for n in counts:
            # Joining costs a handshake and a GOP each; measure the steady state after it.
            warm = 3
            loop_task = subprocess.Popen([sys.executable, __file__, "--client", str(port), str(n), str(seconds + warm)],
                                         stdout=subprocess.PIPE, text=True)
            time.sleep(warm)
            c0 = cpu_seconds(server.pid)
            time.sleep(seconds)
            cpu = (cpu_seconds(server.pid) - c0) / seconds * 100
            out, _ = loop_task.communicate(timeout=seconds + 60)
            stats = [tuple(map(int, line.split())) for line in out.split("\n") if line.strip()]
            want = fps * (seconds + warm)
            fed = sum(1 for f, s, _ in stats if f >= 0.95 * want and s == 0)
            rate = statistics.median(b for _, _, b in stats) * 8 / (seconds + warm) / 1e6
            rows.append((n, cpu, (cpu - base) / n, fed, len(stats), statistics.median(f for f, _, _ in stats) / (seconds + warm), rate))
    finally:
        stop(server)
        stop(cam)
    return base, rows


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        port, n, seconds = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
        for f, s, b in asyncio.run(viewers(port, n, seconds)):
            print(f, s, b)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency-seconds", type=float, default=40)
    ap.add_argument("--flash-period", type=float, default=1.0)
    ap.add_argument("--viewers", default="1,20,50,100")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--kbps", type=int, default=4000)
    ap.add_argument("--skip-build", action="store_true")
    a = ap.parse_args()
    if not a.skip_build:
        subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    lines = []
    work = tempfile.mkdtemp(prefix="nvr-bench-live-")
    try:
        os.makedirs(os.path.join(work, "latency"))
        lat, frames, first = bench_latency(os.path.join(work, "latency"), a.latency_seconds, a.flash_period)
        lines.append(f"first picture, opening the page at the camera no one watched (1080p25, 2 s GOP): {first:.0f} ms "
                     "from navigation to a decodable frame")
        lines.append(f"glass-to-glass latency, 1080p25 flash camera → nvr → Chromium (MSE), {len(lat)} changes over "
                     f"{a.latency_seconds:.0f} s, {frames} frames presented:")
        if lat:
            lines.append(f"  median {statistics.median(lat):.0f} ms, p90 {pct(lat, 90):.0f} ms, min {min(lat):.0f} ms, max {max(lat):.0f} ms")
        os.makedirs(os.path.join(work, "viewers"))
        base, rows = bench_viewers(os.path.join(work, "viewers"), [int(x) for x in a.viewers.split(",")], a.seconds, a.kbps)
        lines.append(f"viewers of one 1080p15 camera (x264 snow at --kbps {a.kbps}, 2 s GOP), {a.seconds:.0f} s each; "
                     f"nvr recording it with no viewer: {base:.1f} % of a core")
        lines.append("  | viewers | nvr CPU (% of a core) | per viewer | fed (≥95 % of frames, no skip) | median frames/s | Mbit/s per viewer |")
        lines.append("  | --- | --- | --- | --- | --- | --- |")
        for n, cpu, per, fed, got, fps, rate in rows:
            lines.append(f"  | {n} | {cpu:.1f} | {per:.2f} | {fed}/{got} | {fps:.1f} | {rate:.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "live.txt"), "a") as f:
        f.write(time.strftime("%Y-%m-%d %H:%M") + "\n" + "\n".join(lines) + "\n\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
