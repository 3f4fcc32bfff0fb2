#!/usr/bin/env python3
"""bench/retention: how fast retention deletes and `nvr db check` checks, on a big index.

Builds a synthetic but real storage root with the release `nvr`'s own schema: an index made by
`nvr camera add` (so migrations are the product's), N cameras × one segment a minute, and a
file per segment (sparse, of the row's size, so `db check` finds sizes right). Then times:

  1. `nvr retention run` deleting one day of 32 cameras (32 × 1440 = 46,080 segments; target < 5 s)
  2. `nvr db check` over 1,000,000 segments (target < 30 s)

Usage: bench/retention [--cameras 32] [--check-segments 1000000]
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVR = os.path.join(ROOT, ".build", "release", "nvr")
MINUTE = 60 * 90_000
DAY = 1440 * MINUTE


def make_root(work, name, cameras, per_camera, start90k):
    d = os.path.join(work, name)
    os.makedirs(d)
    cfg = os.path.join(d, "nvr.toml")
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{d}/Storage"\n[plugins]\ndir = "{ROOT}/.build/release"\n')
    for c in range(cameras):
        subprocess.run([NVR, "camera", "add", f"cam{c}", "--plugin", "rtsp", "--url", "rtsp://192.0.2.1/x", "--config", cfg],
                       check=True, capture_output=True)
    db = sqlite3.connect(os.path.join(d, "Storage", "index.sqlite"))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("INSERT INTO sample_entry(codec, rfc6381, width, height, timescale, extradata, box) VALUES "
               "('h264','avc1.64001f',1280,720,90000,x'00',x'0000000861766331')")
    entry = db.execute("SELECT id FROM sample_entry").fetchone()[0]
    cams = [r[0] for r in db.execute("SELECT id FROM camera ORDER BY id")]
    rows, frames = [], []
    seg_id = 0
    for ci, cam in enumerate(cams):
        cdir = os.path.join(d, "Storage", "recordings", f"cam{ci}")
        os.makedirs(cdir, exist_ok=True)
        for i in range(per_camera):
            seg_id += 1
            t = start90k + i * MINUTE
            rel = f"recordings/cam{ci}/s{i:07d}.mp4"
            rows.append((seg_id, cam, 1, i, t, MINUTE, rel, 30_000_000, 1500, 30, entry))
            frames.append((seg_id, b"\x01\x00", b"\x01\x01"))
            with open(os.path.join(d, "Storage", rel), "wb") as f:
                f.truncate(30_000_000)  # sparse: the size the row claims, no disk used
    db.executemany("INSERT INTO segment(id, camera_id, run_id, run_seq, start90k, duration90k, path, bytes, frames, key_frames,"
                   " video_entry_id, state) VALUES (?,?,?,?,?,?,?,?,?,?,?,'complete')", rows)
    db.executemany("INSERT INTO segment_frames(segment_id, video_index, fragment_index) VALUES (?,?,?)", frames)
    db.commit()
    db.close()
    return cfg


def timed(args):
    t = time.time()
    r = subprocess.run(args, capture_output=True, text=True)
    return time.time() - t, r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cameras", type=int, default=32)
    p.add_argument("--check-segments", type=int, default=1_000_000)
    a = p.parse_args()
    subprocess.run(["swift", "build", "-c", "release", "--product", "nvr"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="nvr-bench-retention-")
    try:
        now90k = int(time.time() * 90_000)
        # 1. Two days per camera, the older one past a 1-day limit.
        t0 = time.time()
        cfg = make_root(work, "delete", a.cameras, 2 * 1440, now90k - 2 * DAY - MINUTE)
        print(f"built {a.cameras} cameras × 2 days in {time.time() - t0:.0f} s", flush=True)
        for c in range(a.cameras):
            subprocess.run([NVR, "retention", "set", "--camera", f"cam{c}", "--continuous-days", "1", "--config", cfg], check=True,
                           capture_output=True)
        subprocess.run([NVR, "retention", "set", "--min-free", "0%", "--config", cfg], check=True, capture_output=True)
        delete_s, r = timed([NVR, "retention", "run", "--json", "--config", cfg])
        deleted = r.stdout.split('"segments" : ')[-1].split(",")[0].split("\n")[0] if r.returncode == 0 else r.stderr
        print(f"retention run: {delete_s:.2f} s, deleted {deleted} segments", flush=True)

        # 2. db check over a million segments.
        per = a.check_segments // a.cameras
        t0 = time.time()
        cfg2 = make_root(work, "check", a.cameras, per, now90k - per * MINUTE)
        print(f"built {a.cameras * per} segments in {time.time() - t0:.0f} s", flush=True)
        check_s, r = timed([NVR, "db", "check", "--config", cfg2])
        print(f"db check: {check_s:.2f} s, exit {r.returncode}: {r.stdout.strip()[:200]}", flush=True)

        print(f"\n| what | measured | target |\n| --- | --- | --- |\n"
              f"| `nvr retention run`: one day of {a.cameras} cameras ({a.cameras * 1440} segments) | {delete_s:.2f} s | < 5 s |\n"
              f"| `nvr db check`: {a.cameras * per} segments | {check_s:.2f} s | < 30 s |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
