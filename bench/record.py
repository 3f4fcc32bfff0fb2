#!/usr/bin/env python3
"""bench/record: CPU and memory of recording N RTSP cameras, nvr vs ffmpeg side by side.

One GStreamer RTSP server (Tests/Support/rtsp_camera.py, one shared 720p25 ~4 Mbit/s H.264
encoder) feeds N cameras to one `nvr serve` (release build) and, at the same time, to N
`ffmpeg -rtsp_transport tcp -i URL -c copy -f segment -segment_time 60 -segment_format mp4
-reset_timestamps 1` processes (the per-camera recorder Frigate runs).

Reports CPU per stream (% of one core, from /proc/<pid>/stat over a measuring window) and RSS
per added camera (nvr: (RSS with N cameras - RSS with 1) / (N-1); ffmpeg: mean RSS of one
process, since each camera is its own process). Prints a Markdown table and appends it to
bench/results/record-<date>.md.

--perf also profiles `nvr serve` with `perf record -g` over the measuring window and prints
its ten largest symbols (kernel and user), to see where the time goes.

Usage: bench/record [--cameras 16] [--seconds 60] [--warmup 15] [--perf]
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


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def cpu_split(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def switches(pid):
    """Voluntary context switches of all the process's threads (a thread that sleeps to wait)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def nvr(args, cfg, **kw):
    return subprocess.run([f"{ROOT}/.build/release/nvr", *args, "--config", cfg], check=True, capture_output=True, text=True, **kw)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cameras", type=int, default=16)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--warmup", type=int, default=15)
    p.add_argument("--perf", action="store_true")
    a = p.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="nvr-bench-")
    procs = []
    try:
        cam = subprocess.Popen(["/usr/bin/python3", f"{ROOT}/Tests/Support/rtsp_camera.py", "--width", "1280", "--height", "720",
                                "--fps", "25", "--kbps", "4000", "--gop-seconds", "2", "--pattern", "smpte"],
                               stdout=subprocess.PIPE, text=True)
        procs.append(cam)
        port = int(cam.stdout.readline().split()[1])
        url = f"rtsp://127.0.0.1:{port}/stream"

        def config(name):
            d = os.path.join(work, name)
            os.makedirs(d)
            cfg = os.path.join(d, "nvr.toml")
            with open(cfg, "w") as f:
                f.write(f'[storage]\nroot = "{d}/Storage"\n[recording]\nsegment_seconds = 60\n'
                        f'[plugins]\ndir = "{ROOT}/.build/release"\n')
            return cfg

        # Phase 1: one camera, for nvr's baseline memory.
        cfg1 = config("one")
        nvr(["camera", "add", "cam0", "--plugin", "rtsp", "--url", url], cfg1)
        one = subprocess.Popen([f"{ROOT}/.build/release/nvr", "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg1], stderr=subprocess.DEVNULL)
        procs.append(one)
        time.sleep(a.warmup)
        rss_one = rss_kb(one.pid)
        one.send_signal(signal.SIGINT)
        one.wait(timeout=30)

        # Phase 2: N cameras in nvr and N ffmpeg processes side by side.
        cfgn = config("many")
        for i in range(a.cameras):
            nvr(["camera", "add", f"cam{i}", "--plugin", "rtsp", "--url", url], cfgn)
        many = subprocess.Popen([f"{ROOT}/.build/release/nvr", "serve", "--no-demo", "--allow-unauthenticated", "--config", cfgn], stderr=subprocess.DEVNULL)
        procs.append(many)
        ff_dir = os.path.join(work, "ffmpeg")
        os.makedirs(ff_dir)
        ffs = []
        for i in range(a.cameras):
            f = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-rtsp_transport", "tcp", "-i", url, "-c", "copy",
                                  "-f", "segment", "-segment_time", "60", "-segment_format", "mp4", "-reset_timestamps", "1",
                                  os.path.join(ff_dir, f"cam{i}-%03d.mp4")])
            ffs.append(f)
            procs.append(f)
        time.sleep(a.warmup)
        t0 = time.time()
        c0 = {pr.pid: cpu_ticks(pr.pid) for pr in [many, cam, *ffs]}
        s0, w0 = cpu_split(many.pid), switches(many.pid)
        perf_data = os.path.join(work, "perf.data")
        profiler = subprocess.Popen(["perf", "record", "-q", "-F", "999", "-g", "-p", str(many.pid), "-o", perf_data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if a.perf else None
        time.sleep(a.seconds)
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait(timeout=60)
        t1 = time.time()
        c1 = {pr.pid: cpu_ticks(pr.pid) for pr in [many, cam, *ffs]}
        s1, w1 = cpu_split(many.pid), switches(many.pid)
        rss_many = rss_kb(many.pid)
        ff_rss = [rss_kb(f.pid) for f in ffs]
        wall = t1 - t0

        def pct(pid):
            return 100.0 * (c1[pid] - c0[pid]) / HZ / wall

        nvr_cpu = pct(many.pid) / a.cameras
        ff_cpu = sum(pct(f.pid) for f in ffs) / a.cameras
        nvr_rss = (rss_many - rss_one) / max(a.cameras - 1, 1) / 1024
        ff_rss_mb = sum(ff_rss) / len(ff_rss) / 1024
        src_cpu = pct(cam.pid)
        many.send_signal(signal.SIGINT)
        many.wait(timeout=60)
        segs = subprocess.run(["find", os.path.join(work, "many", "Storage", "recordings"), "-name", "*.mp4"],
                              capture_output=True, text=True).stdout.split()

        date = datetime.date.today().isoformat()
        table = (
            f"### {date}: {a.cameras} × RTSP 720p25 ~4 Mbit/s, {a.seconds} s measured after {a.warmup} s warm-up\n\n"
            f"| recorder | CPU per stream (% of a core) | RSS per added camera |\n| --- | --- | --- |\n"
            f"| nvr (1 process, release) | {nvr_cpu:.2f} % | {nvr_rss:.2f} MB |\n"
            f"| ffmpeg -c copy -f segment (1 process per camera) | {ff_cpu:.2f} % | {ff_rss_mb:.1f} MB |\n"
            f"| **ratio nvr / ffmpeg** | **{nvr_cpu / ff_cpu:.2f}×** | **{nvr_rss / ff_rss_mb:.3f}×** |\n\n"
            f"nvr total: {pct(many.pid):.1f} % CPU ({100.0 * (s1[0] - s0[0]) / HZ / wall:.1f} % user, "
            f"{100.0 * (s1[1] - s0[1]) / HZ / wall:.1f} % system; {(w1 - w0) / wall / a.cameras:.0f} thread wake-ups a second "
            f"per camera), RSS {rss_one / 1024:.1f} MB with 1 camera, {rss_many / 1024:.1f} MB with "
            f"{a.cameras}; {len(segs)} segment files written. The shared GStreamer source used {src_cpu:.1f} % "
            f"(encoding once and serving {2 * a.cameras} clients). Machine: {os.cpu_count()} cores.\n")
        if profiler:
            top = subprocess.run(["perf", "report", "-i", perf_data, "--no-children", "--sort", "sym", "--stdio"],
                                 capture_output=True, text=True).stdout
            lines = [line.rstrip()[:110] for line in top.splitlines() if line.strip()[:1].isdigit()][:10]
            table += "\nperf, nvr serve over the window, largest symbols (self):\n\n" + "\n".join(f"    {x}" for x in lines) + "\n"
        print(table)
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", f"record-{date}.md"), "a") as f:
            f.write(table + "\n")
    finally:
        for pr in reversed(procs):
            if pr.poll() is None:
                pr.send_signal(signal.SIGINT if pr is not procs[0] else signal.SIGTERM)
                try:
                    pr.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pr.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
