#!/usr/bin/env python3
"""bench/tls: what HTTPS costs a 1 h view.mp4 download, against plain HTTP.

Builds the hour of 720p25 footage bench/playback makes (60 hard links of one recorded 60 s
segment, each with its own index row), then serves it with the release `nvr serve` twice on
loopback — plain HTTP, and HTTPS with a certificate from `nvr tls self-signed` — and downloads
the hour's view.mp4 with curl (to /dev/null) five times each. Reports wall time, throughput and
the server's CPU seconds per download (/proc/<pid>/stat).

Usage: bench/tls [--runs 5]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import playback  # noqa: E402

NVR = playback.NVR


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(cfg, port, base, scheme, cacert, runs):
    log = open(os.devnull, "w")
    p = subprocess.Popen([NVR, "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg], stdout=log, stderr=log)
    try:
        for _ in range(200):
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"] + (["--cacert", cacert] if cacert else [])
                               + [f"{scheme}://127.0.0.1:{port}/api/health"], capture_output=True, text=True)
            if r.stdout in ("200", "503"):
                break
            time.sleep(0.05)
        walls, cpus, sizes = [], [], []
        for i in range(runs):
            start = base + i * 3600
            url = f"{scheme}://127.0.0.1:{port}/api/cameras/cam/view.mp4?start={start}&end={start + 3600 * 90_000}"
            c0 = cpu_seconds(p.pid)
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}"]
                               + (["--cacert", cacert] if cacert else []) + [url], capture_output=True, text=True, check=True)
            code, total, size = r.stdout.split()
            assert code == "200", r.stdout
            cpus.append(cpu_seconds(p.pid) - c0)
            walls.append(float(total))
            sizes.append(int(size))
        return statistics.median(walls), statistics.median(cpus), sizes[0]
    finally:
        playback.stop(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=playback.ROOT, check=True)
    work = tempfile.mkdtemp(prefix="nvr-bench-tls-")
    try:
        cfg, port, _, base, _, _, _ = playback.make_hour(work)
        subprocess.run([NVR, "tls", "self-signed", "--out-dir", os.path.join(work, "tls")], check=True, capture_output=True)
        http = measure(cfg, port, base, "http", None, a.runs)
        tls_cfg = os.path.join(work, "tls.toml")
        with open(cfg) as f, open(tls_cfg, "w") as g:
            text = f.read()
            g.write(text.replace("[http]\n", f"[http]\ntls_cert = \"{work}/tls/cert.pem\"\ntls_key = \"{work}/tls/key.pem\"\n"))
        https = measure(tls_cfg, port, base, "https", os.path.join(work, "tls", "cert.pem"), a.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = http[2] / 1e6
    lines = [f"view.mp4 of 1 h ({mb:.0f} MB) over loopback, median of {a.runs}:",
             f"  HTTP : {http[0]:.2f} s ({mb / http[0]:.0f} MB/s), nvr CPU {http[1]:.2f} s",
             f"  HTTPS: {https[0]:.2f} s ({mb / https[0]:.0f} MB/s), nvr CPU {https[1]:.2f} s "
             f"(+{https[1] - http[1]:.2f} s, {(https[1] - http[1]) / mb * 1000:.1f} ms per MB)"]
    os.makedirs(os.path.join(playback.ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(playback.ROOT, "bench", "results", "tls.txt"), "a") as f:
        f.write(time.strftime("%Y-%m-%d %H:%M") + "\n" + "\n".join(lines) + "\n\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
