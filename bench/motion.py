#!/usr/bin/env python3
"""bench/motion: CPU of motion detection per camera, at 360p (a sub-stream), 720p and 1080p.

One GStreamer RTSP server per resolution (Tests/Support/rtsp_camera.py, 25 fps, key frame
every second, the moving `ball` pattern over SMPTE-like bars is not used: `smpte` bars with a
burned-in clock, so every frame changes a little) feeds N cameras of one `nvr serve` (release
build), three times: motion off, motion at the default rate (frames=auto: key frames only for
pictures over 0.5 MP), and motion decoding every frame (frames=all, looking 5 times a second).
The NVR's CPU (utime + stime from /proc over the window) per camera, minus the motion-off run,
is the detector's cost. Prints a Markdown table and appends it to bench/results/motion-<date>.md.

Usage: bench/motion [--cameras 4] [--seconds 30] [--warmup 10]
"""
import argparse
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = os.sysconf("SC_CLK_TCK")
NVR = f"{ROOT}/.build/release/nvr"


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def nvr(args, cfg):
    subprocess.run([NVR, *args, "--config", cfg], check=True, capture_output=True, text=True)


def measure(work, name, size, cameras, motion, warmup, seconds):
    """CPU of one `nvr serve` recording `cameras` copies of one camera, as % of one core per
    camera. A fresh GStreamer source per run: its shared media does not survive every client
    leaving and new ones arriving at once (an assertion in gst-rtsp-server 1.22)."""
    width, height, kbps = size
    cam = subprocess.Popen(["/usr/bin/python3", f"{ROOT}/Tests/Support/rtsp_camera.py", "--width", str(width), "--height",
                            str(height), "--fps", "25", "--kbps", str(kbps), "--gop-seconds", "1", "--pattern", "smpte"],
                           stdout=subprocess.PIPE, text=True)
    d = os.path.join(work, name)
    os.makedirs(d)
    cfg = os.path.join(d, "nvr.toml")
    p = None
    try:
        url = f"rtsp://127.0.0.1:{int(cam.stdout.readline().split()[1])}/stream"
        with open(cfg, "w") as f:
            f.write(f'[storage]\nroot = "{d}/Storage"\n[recording]\nsegment_seconds = 60\n[plugins]\ndir = "{ROOT}/.build/release"\n'
                    f'[http]\nbind = "127.0.0.1:0"\n')
        for i in range(cameras):
            nvr(["camera", "add", f"cam{i}", "--plugin", "rtsp", "--url", url], cfg)
            if motion == "off":
                nvr(["camera", "set", f"cam{i}", "--motion", "off"], cfg)
            else:
                nvr(["camera", "set", f"cam{i}", "--motion", "on", "--motion-frames", motion], cfg)
        log_path = os.path.join(d, "serve.log")
        p = subprocess.Popen([NVR, "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg], stderr=open(log_path, "w"))
        time.sleep(warmup)
        t0, c0 = time.time(), cpu_ticks(p.pid)
        time.sleep(seconds)
        t1, c1 = time.time(), cpu_ticks(p.pid)
        if cam.poll() is not None:
            raise RuntimeError("the GStreamer source died during the run")
    finally:
        if p:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
        cam.send_signal(signal.SIGTERM)
        cam.wait(timeout=30)
    segs = subprocess.run(["find", d, "-name", "*.mp4"], capture_output=True, text=True).stdout.split()
    log = open(log_path).read()
    if not segs or "motion detection off" in log:
        raise RuntimeError(f"run {name} recorded nothing or had no detector:\n{log[-2000:]}")
    return 100.0 * (c1 - c0) / HZ / (t1 - t0) / cameras


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cameras", type=int, default=4)
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="nvr-bench-motion-")
    rows = []
    try:
        # 640x360 is a typical sub-stream: there the default decodes every frame.
        for size in [(640, 360, 800), (1280, 720, 2500), (1920, 1080, 4000)]:
            cpu = {}
            for m in ["off", "auto", "all"]:
                for attempt in range(3):  # gst-rtsp-server 1.22 sometimes asserts (gst_rtsp_media_get_rates); run again
                    try:
                        cpu[m] = measure(work, f"{size[1]}-{m}-{attempt}", size, a.cameras, m, a.warmup, a.seconds)
                        break
                    except RuntimeError as e:
                        print(f"run {size[1]}-{m} failed ({e}); again", file=sys.stderr)
                else:
                    raise RuntimeError(f"run {size[1]}-{m} failed three times")
                print(f"{size[1]}p motion={m}: {cpu[m]:.2f} % of a core per camera", file=sys.stderr)
            rows.append((f"{size[1]}p25, {size[2] / 1000:g} Mbit/s, GOP 1 s", cpu))

        date = datetime.date.today().isoformat()
        table = (f"### {date}: {a.cameras} cameras per run, {a.seconds} s measured after {a.warmup} s, release build, "
                 f"{os.cpu_count()} cores\n\n"
                 "| stream | recording, motion off | + motion, default (key frames over 0.5 MP, else every frame) | + motion, every frame at 5 fps |\n"
                 "| --- | --- | --- | --- |\n")
        for name, c in rows:
            table += (f"| {name} | {c['off']:.2f} % | **+{c['auto'] - c['off']:.2f} %** ({c['auto']:.2f} %) | "
                      f"+{c['all'] - c['off']:.2f} % ({c['all']:.2f} %) |\n")
        table += "\nCPU as % of one core per camera (the NVR process only, not the GStreamer source).\n"
        print(table)
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", f"motion-{date}.md"), "a") as f:
            f.write(table + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
