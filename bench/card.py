#!/usr/bin/env python3
"""Backfill from a camera's card: time, CPU and bytes read by `nvr card sync`.

The simulated GoPro (`camsim gopro --no-record`, release build) serves one real MP4 from its
card folder: `--minutes` of 1280x720 30 fps x264 (~4 Mbit/s, 1 s GOP, moov at the end, as a
camera writes it), stamped as recorded an hour ago. Two runs on fresh storage roots:
- window: backfill `--window` seconds from the middle of the file (what closing a short Wi-Fi
  drop costs): bytes read vs the file, wall time;
- whole: backfill the whole file (a long outage): throughput and CPU of the nvr process.
Results are printed and appended to bench/results/card.md.
"""
import argparse, datetime, json, os, resource, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build", "release")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def nvr(config, *args):
    """Runs nvr, returning (stdout, cpu seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    r = subprocess.run([os.path.join(BIN, "nvr"), *args, "--config", config], capture_output=True, text=True)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"nvr {' '.join(args)} failed: {r.stdout} {r.stderr}")
    return r.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--window", type=float, default=10)
    a = ap.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "nvr"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "nvr-plugin-gopro"], cwd=ROOT, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "camsim"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="bench-card-")
    card = os.path.join(work, "card")
    folder = os.path.join(card, "DCIM", "100GOPRO")
    os.makedirs(folder)
    mp4 = os.path.join(folder, "GH010042.MP4")
    seconds = int(a.minutes * 60)
    print(f"making a {seconds} s 720p card file…", flush=True)
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", str(seconds),
                    "-c:v", "libx264", "-preset", "veryfast", "-b:v", "4M", "-g", "30", "-pix_fmt", "yuv420p", mp4], check=True)
    end = int(time.time()) - 3600
    os.utime(mp4, (end, end))
    size = os.path.getsize(mp4)
    port = free_port()
    sim = subprocess.Popen([os.path.join(BIN, "camsim"), "gopro", "--port", str(port), "--card", card, "--no-record"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/gopro/version", timeout=1); break
            except OSError:
                time.sleep(0.1)
        rows = []
        for name, lo, hi in [("window", seconds / 2, seconds / 2 + a.window), ("whole", 0, seconds)]:
            d = os.path.join(work, name)
            os.makedirs(d)
            config = os.path.join(d, "nvr.toml")
            with open(config, "w") as f:
                f.write(f'[storage]\nroot = "{d}/Storage"\n[plugins]\ndir = "{BIN}"\n')
            nvr(config, "camera", "add", "gp", "--plugin", "gopro", "--option", f"base_url=http://127.0.0.1:{port}")
            start90k = (end - seconds) * 90000
            out, cpu, wall = nvr(config, "card", "sync", "--camera", "gp", "--start", str(int(start90k + lo * 90000) - 45000),
                                 "--end", str(int(start90k + hi * 90000) + 45000), "--json")
            r = json.loads(out)
            rows.append((name, r["backfilledSeconds"], r["bytesRead"], wall, cpu, r["segments"]))
        lines = [f"{datetime.date.today()} file {seconds} s, {size / 1e6:.1f} MB ({size * 8 / seconds / 1e6:.1f} Mbit/s)",
                 "| run | video backfilled | read from card | share of file | wall | nvr CPU | MB/s | segments |",
                 "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, secs, read, wall, cpu, segs in rows:
            lines.append(f"| {name} | {secs:.1f} s | {read / 1e6:.1f} MB | {100 * read / size:.1f} % | {wall:.2f} s | {cpu:.2f} s | "
                         f"{read / 1e6 / wall:.0f} | {segs} |")
        text = "\n".join(lines)
        print(text)
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", "card.md"), "a") as f:
            f.write(text + "\n\n")
    finally:
        sim.terminate()
        sim.wait(timeout=10)


if __name__ == "__main__":
    main()
