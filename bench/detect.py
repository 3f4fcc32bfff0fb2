#!/usr/bin/env python3
"""bench/detect: what person detection costs, on one core.

1. Inference: `nvr detect person.jpg --repeat N` (release build, the built-in model, ONNX
   Runtime on one thread, taskset to one core): median and p95 of the model plus decoding its
   outputs, the picture already scaled to 300×300.
2. CPU per camera: one `nvr serve` (release) records N cameras of a 640×360 25 fps scene in
   which a person crosses every 4 s, continuously (Tests/Support/rtsp_camera.py --object
   --cross-seconds 4: motion all the time), twice: motion detection only (every frame, 5 looks
   a second), then with `--detect person` (5 pictures a second offered). The NVR's CPU per
   camera (/proc/<pid>/stat) of the second run minus the first is detection's cost; the
   detector's own counters (/metrics) say how many pictures it looked at and skipped.

Prints a Markdown table and appends it to bench/results/detect-<date>.md. Frigate's CPU
detector for comparison (its documentation): SSDLite-MobileDet 320×320 on TFLite, about 24 ms
an inference on one thread.

Usage: bench/detect [--cameras 2] [--seconds 30] [--warmup 10] [--runs 300]
"""
import argparse
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = os.sysconf("SC_CLK_TCK")
NVR = f"{ROOT}/.build/release/nvr"
PERSON = "/usr/share/darknet/data/person.jpg"


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(d, port):
    cfg = os.path.join(d, "nvr.toml")
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{d}/Storage"\n[recording]\nsegment_seconds = 60\n[plugins]\ndir = "{ROOT}/.build/release"\n'
                f'[http]\nbind = "127.0.0.1:{port}"\n')
    return cfg


def inference(work, runs):
    d = os.path.join(work, "inference")
    os.makedirs(d)
    cfg = config(d, free_port())
    out = subprocess.run(["taskset", "-c", "0", NVR, "detect", PERSON, "--repeat", str(runs), "--json", "--config", cfg],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def serve_cpu(work, name, cameras, detect, warmup, seconds):
    cam = subprocess.Popen(["/usr/bin/python3", f"{ROOT}/Tests/Support/rtsp_camera.py", "--fps", "25", "--pattern", "scene",
                            "--motion", "0-100000", "--light", "100000-100001", "--object", PERSON,
                            "--object-crop", "170,85,120,310", "--cross-seconds", "4"], stdout=subprocess.PIPE, text=True)
    d = os.path.join(work, name)
    os.makedirs(d)
    port = free_port()
    cfg = config(d, port)
    p = None
    try:
        url = f"rtsp://127.0.0.1:{int(cam.stdout.readline().split()[1])}/stream"
        for i in range(cameras):
            subprocess.run([NVR, "camera", "add", f"cam{i}", "--plugin", "rtsp", "--url", url, "--config", cfg], check=True,
                           capture_output=True)
            args = ["--motion", "on", "--motion-frames", "all"] + (["--detect", "person"] if detect else [])
            subprocess.run([NVR, "camera", "set", f"cam{i}", *args, "--config", cfg], check=True, capture_output=True)
        log_path = os.path.join(d, "serve.log")
        p = subprocess.Popen([NVR, "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg], stderr=open(log_path, "w"))
        time.sleep(warmup)
        metrics0 = metrics(port)
        t0, c0 = time.time(), cpu_ticks(p.pid)
        time.sleep(seconds)
        t1, c1 = time.time(), cpu_ticks(p.pid)
        metrics1 = metrics(port)
        if cam.poll() is not None:
            raise RuntimeError("the GStreamer source died during the run")
    finally:
        if p:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
        cam.send_signal(signal.SIGTERM)
        cam.wait(timeout=30)
    log = open(log_path).read()
    if detect and "detection: " not in log:
        raise RuntimeError(f"run {name} had no detector:\n{log[-2000:]}")
    looked = (metrics1.get("inferences", 0) - metrics0.get("inferences", 0)) / (t1 - t0) / cameras
    skipped = (metrics1.get("skipped", 0) - metrics0.get("skipped", 0)) / (t1 - t0) / cameras
    found = (metrics1.get("person", 0) - metrics0.get("person", 0)) / (t1 - t0) / cameras
    return 100.0 * (c1 - c0) / HZ / (t1 - t0) / cameras, looked, skipped, found


def metrics(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out = {}
    for key, pattern in [("inferences", r'^nvr_detect_inferences_total\{[^}]*\} (\S+)'),
                         ("skipped", r'^nvr_detect_skipped_frames_total\{[^}]*\} (\S+)'),
                         ("person", r'^nvr_detect_detections_total\{[^}]*label="person"[^}]*\} (\S+)')]:
        out[key] = sum(float(v) for v in re.findall(pattern, text, re.M))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cameras", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--runs", type=int, default=300)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-detect-")
    inf = inference(work, a.runs)
    motion = serve_cpu(work, "motion", a.cameras, False, a.warmup, a.seconds)
    detect = serve_cpu(work, "detect", a.cameras, True, a.warmup, a.seconds)
    day = datetime.date.today().isoformat()
    rows = [
        "| date | inference on one core (median / p95) | CPU per camera, motion only | + person detection | pictures looked at / skipped / persons found per camera per second |",
        "| --- | --- | --- | --- | --- |",
        f"| {day} | **{inf['medianMs']:.1f} ms / {inf['p95Ms']:.1f} ms** ({inf['runs']} runs) | {motion[0]:.1f} % | "
        f"**+{detect[0] - motion[0]:.1f} %** of a core | {detect[1]:.1f} / {detect[2]:.1f} / {detect[3]:.1f} |",
    ]
    table = "\n".join(rows)
    print(table)
    os.makedirs(f"{ROOT}/bench/results", exist_ok=True)
    with open(f"{ROOT}/bench/results/detect-{day}.md", "a") as f:
        f.write(table + f"\n\n{a.cameras} cameras, {a.seconds} s after {a.warmup} s; runtime: {inf['runtime']}\n\n")


main()
