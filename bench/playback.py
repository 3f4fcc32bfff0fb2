#!/usr/bin/env python3
"""bench/playback: view.mp4, snapshots and /timeline against what other recorders do.

1. Records ~65 s of a 1280x720 25 fps ~4 Mbit/s H.264 RTSP camera (Tests/Support/rtsp_camera.py,
   2 s GOP) with the release `nvr serve` into a 60 s segment, then makes an hour of footage from
   it: 60 copies (hard links) of that segment file, each with its own index row 60 s after the
   previous one (the rows are the recorder's own, with start times shifted).
2. view.mp4 of the whole hour over HTTP: time to first byte and total time (written to a file),
   against `ffmpeg -f concat -safe 0 -i list -c copy out.mp4` of the same 60 files (Frigate's clip
   export). Targets: first byte < 20 ms; the hour >= 50x faster than the concat export.
3. snapshot.jpg?at=T at random times (mid-GOP, so frames up to T are decoded) against
   `ffmpeg -ss T -i SEGMENT -frames:v 1 out.jpg`. Target: >= 5x faster.
4. /timeline?date= for one day on an index of 32 cameras x 1 year of 60 s segments (synthetic
   rows, 16.8 M). Target: p99 < 5 ms.

Usage: bench/playback [--timeline-cameras 32] [--timeline-days 365] [--requests 200]
"""
import argparse
import http.client
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REL = os.path.join(ROOT, ".build", "release")
NVR = os.path.join(REL, "nvr")
MINUTE = 60 * 90_000
DAY = 1440 * MINUTE


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def start_camera():
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(ROOT, "Tests/Support/rtsp_camera.py"), "--port", "0", "--width", "1280",
                          "--height", "720", "--fps", "25", "--kbps", "4000", "--gop-seconds", "2", "--pattern", "ball"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert line.startswith("READY "), line
    return p, int(line.split()[1])


def serve(cfg, port, log):
    p = subprocess.Popen([NVR, "serve", "--no-demo", "--allow-unauthenticated", "--config", cfg], stdout=log, stderr=log)
    for _ in range(200):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/api/cameras")
            c.getresponse().read()
            return p
        except OSError:
            time.sleep(0.05)
    raise SystemExit("nvr serve did not answer")


def stop(p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()


def get(conn, path, out=None):
    """Returns (status, seconds to first body byte, total seconds)."""
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    first = r.read(1)
    t1 = time.perf_counter()
    if out:
        out.write(first)
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            out.write(b)
    else:
        r.read()
    return r.status, t1 - t0, time.perf_counter() - t0


def make_hour(work):
    root = os.path.join(work, "Storage")
    cfg = os.path.join(work, "nvr.toml")
    port = 18081
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{root}"\n[http]\nbind = "127.0.0.1:{port}"\n[recording]\nsegment_seconds = 60\n[plugins]\ndir = "{REL}"\n')
    cam, cam_port = start_camera()
    subprocess.run([NVR, "camera", "add", "cam", "--plugin", "rtsp", "--url", f"rtsp://127.0.0.1:{cam_port}/stream", "--config", cfg],
                   check=True, capture_output=True)
    subprocess.run([NVR, "retention", "set", "--min-free", "0%", "--config", cfg], check=True, capture_output=True)
    log = open(os.path.join(work, "serve.log"), "w")
    print("recording ~65 s of 720p25 for a 60 s segment…", file=sys.stderr)
    p = serve(cfg, port, log)
    db_path = os.path.join(root, "index.sqlite")
    deadline = time.time() + 150
    while time.time() < deadline:
        time.sleep(2)
        n = sqlite3.connect(db_path).execute("SELECT COUNT(*) FROM segment WHERE state='complete' AND duration90k > 59*90000").fetchone()[0]
        if n >= 1:
            break
    stop(p)
    cam.terminate()
    db = sqlite3.connect(db_path)
    seg = db.execute("SELECT * FROM segment WHERE state='complete' AND duration90k > 59*90000 ORDER BY id LIMIT 1").fetchone()
    cols = [d[0] for d in db.execute("SELECT * FROM segment LIMIT 0").description]
    s = dict(zip(cols, seg))
    frames = db.execute("SELECT video_index, audio_index, fragment_index, audio_start90k FROM segment_frames WHERE segment_id=?", (s["id"],)).fetchone()
    db.execute("DELETE FROM segment_frames")
    db.execute("DELETE FROM segment")
    db.execute("UPDATE camera SET enabled = 0")
    src = os.path.join(root, s["path"])
    base = s["start90k"]
    files = []
    for i in range(60):
        rel = f"recordings/hour/{i:02d}.mp4"
        os.makedirs(os.path.join(root, "recordings/hour"), exist_ok=True)
        os.link(src, os.path.join(root, rel))
        files.append(os.path.join(root, rel))
        start = base + i * s["duration90k"]
        cur = db.execute("INSERT INTO segment(camera_id, run_id, run_seq, start90k, duration90k, path, bytes, frames, key_frames,"
                         " video_entry_id, audio_entry_id, state, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,'complete','live')",
                         (s["camera_id"], s["run_id"], i, start, s["duration90k"], rel, s["bytes"], s["frames"], s["key_frames"],
                          s["video_entry_id"], s["audio_entry_id"]))
        db.execute("INSERT INTO segment_frames(segment_id, video_index, audio_index, fragment_index, audio_start90k) VALUES (?,?,?,?,?)",
                   (cur.lastrowid, frames[0], frames[1], frames[2], None if frames[3] is None else frames[3] - base + start))
    db.commit()
    db.close()
    return cfg, port, files, base, s["duration90k"], s["bytes"], log


def bench_view_and_snapshots(work, a):
    cfg, port, files, base, seg_dur, seg_bytes, log = make_hour(work)
    p = serve(cfg, port, log)
    results = {}
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        end = base + 60 * seg_dur
        ttfb, total, seek = [], [], []
        for i in range(5):
            # A different start each time: no cached moov, every run builds the hour from the index.
            start = base + i * 90_000 // 25
            url = f"http://127.0.0.1:{port}/api/cameras/cam/view.mp4?start={start}&end={start + 3600 * 90_000}"
            # curl writes the file, as a download would; it reports first byte and total.
            r = subprocess.run(["curl", "-s", "-o", os.path.join(work, "view.mp4"), "-w", "%{http_code} %{time_starttransfer} %{time_total}", url],
                               capture_output=True, text=True, check=True)
            code, t1, t2 = r.stdout.split()
            assert code == "200", code
            ttfb.append(float(t1)); total.append(float(t2))
            # A player seeking to the middle of an hour it has not opened yet: 1 MiB from there.
            other = f"/api/cameras/cam/view.mp4?start={start + 45}&end={start + 45 + 3600 * 90_000}"
            t0 = time.perf_counter()
            conn.request("GET", other, headers={"Range": "bytes=150000000-151048575"})
            resp = conn.getresponse()
            assert resp.status == 206, resp.status
            resp.read()
            seek.append(time.perf_counter() - t0)
        size = os.path.getsize(os.path.join(work, "view.mp4"))
        chk = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", os.path.join(work, "view.mp4")],
                             capture_output=True, text=True)
        results["view"] = (statistics.median(ttfb), statistics.median(total), size, chk.stdout.strip(), statistics.median(seek))
        with open(os.path.join(work, "list.txt"), "w") as f:
            for path in files:
                f.write(f"file '{path}'\n")
        ff = []
        for i in range(3):
            t0 = time.perf_counter()
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", os.path.join(work, "list.txt"),
                            "-c", "copy", os.path.join(work, "concat.mp4")], check=True)
            ff.append(time.perf_counter() - t0)
        results["concat"] = statistics.median(ff)

        # Snapshots at random mid-GOP times within the hour.
        rnd = random.Random(7)
        times = [base + rnd.randrange(5 * 90_000, seg_dur - 5 * 90_000) + rnd.randrange(60) * seg_dur for _ in range(a.snapshots)]
        ours, theirs = [], []
        for t in times:
            st, _, t2 = get(conn, f"/api/cameras/cam/snapshot.jpg?at={t}")
            assert st == 200, st
            ours.append(t2)
        for t in times:
            seg = (t - base) // seg_dur
            offset = ((t - base) % seg_dur) / 90_000
            t0 = time.perf_counter()
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-ss", f"{offset:.3f}", "-i", files[seg], "-frames:v", "1",
                            os.path.join(work, "snap.jpg")], check=True)
            theirs.append(time.perf_counter() - t0)
        results["snap"] = (statistics.median(ours), pct(ours, 95), statistics.median(theirs), pct(theirs, 95))
        # The newest key frame, uncached (once a second) and cached.
        latest_cold, latest_hot = [], []
        for _ in range(5):
            time.sleep(1.1)
            latest_cold.append(get(conn, "/api/cameras/cam/snapshot.jpg")[2])
            latest_hot.append(get(conn, "/api/cameras/cam/snapshot.jpg")[2])
        results["latest"] = (statistics.median(latest_cold), statistics.median(latest_hot))
    finally:
        stop(p)
    return results


def bench_timeline(work, a):
    d = os.path.join(work, "timeline")
    os.makedirs(d)
    cfg = os.path.join(d, "nvr.toml")
    port = 18082
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{d}/Storage"\n[http]\nbind = "127.0.0.1:{port}"\n[plugins]\ndir = "{REL}"\n')
    for c in range(a.timeline_cameras):
        subprocess.run([NVR, "camera", "add", f"cam{c}", "--plugin", "rtsp", "--url", "rtsp://192.0.2.1/x", "--config", cfg],
                       check=True, capture_output=True)
    db = sqlite3.connect(os.path.join(d, "Storage", "index.sqlite"))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("UPDATE camera SET enabled = 0")
    db.execute("INSERT INTO sample_entry(codec, rfc6381, width, height, timescale, extradata, box) VALUES "
               "('h264','avc1.64001f',1280,720,90000,x'00',x'00')")
    entry = db.execute("SELECT id FROM sample_entry").fetchone()[0]
    cams = [r[0] for r in db.execute("SELECT id FROM camera ORDER BY id")]
    per = a.timeline_days * 1440
    end = (int(time.time()) // 86400) * 86400 * 90_000
    first = end - a.timeline_days * DAY
    print(f"writing {len(cams) * per:,} segment rows…", file=sys.stderr)
    t0 = time.time()
    for cam in cams:
        # Continuous footage with a 10-minute outage every 6 hours, so days have several slices.
        rows = ((cam, 1, i, first + i * MINUTE, MINUTE, f"r/{cam}/{i}.mp4", 30_000_000, 1500, 30, entry)
                for i in range(per) if (i % 360) >= 10)
        db.executemany("INSERT INTO segment(camera_id, run_id, run_seq, start90k, duration90k, path, bytes, frames, key_frames,"
                       " video_entry_id, state) VALUES (?,?,?,?,?,?,?,?,?,?,'complete')", rows)
    db.commit()
    rows = db.execute("SELECT COUNT(*) FROM segment").fetchone()[0]
    db.close()
    print(f"{rows:,} rows in {time.time() - t0:.0f} s", file=sys.stderr)
    log = open(os.path.join(d, "serve.log"), "w")
    p = serve(cfg, port, log)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        rnd = random.Random(3)
        lat = []
        for i in range(a.requests + 20):
            day = time.strftime("%Y-%m-%d", time.gmtime((first + rnd.randrange(a.timeline_days) * DAY) / 90_000 + 43200))
            st, _, t = get(conn, f"/api/cameras/cam{rnd.randrange(len(cams))}/timeline?date={day}&tz=UTC")
            assert st == 200, st
            if i >= 20:  # the first requests warm the page cache
                lat.append(t)
        return rows, statistics.median(lat), pct(lat, 99), max(lat)
    finally:
        stop(p)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timeline-cameras", type=int, default=32)
    p.add_argument("--timeline-days", type=int, default=365)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--snapshots", type=int, default=20)
    a = p.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="nvr-bench-playback-")
    try:
        r = bench_view_and_snapshots(work, a)
        tl = bench_timeline(work, a)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ttfb, total, size, dur, seek = r["view"]
    snap = r["snap"]
    lines = [
        f"view.mp4, 1 h ({size / 1e6:.0f} MB, ffprobe {dur} s): first byte {ttfb * 1000:.1f} ms, total {total:.2f} s; "
        f"ffmpeg concat -c copy {r['concat']:.2f} s -> {r['concat'] / total:.1f}x faster to download it all; "
        f"playable and seekable after {ttfb * 1000:.1f} ms -> {r['concat'] / ttfb:.0f}x sooner than the export; "
        f"a seek (1 MiB Range at 150 MB of a new hour) {seek * 1000:.1f} ms",
        f"snapshot.jpg?at= (720p, mid-GOP): median {snap[0] * 1000:.1f} ms, p95 {snap[1] * 1000:.1f} ms; "
        f"ffmpeg -ss T -i SEG -frames:v 1: median {snap[2] * 1000:.0f} ms, p95 {snap[3] * 1000:.0f} ms -> {snap[2] / snap[0]:.1f}x faster",
        f"snapshot.jpg (newest key frame): uncached {r['latest'][0] * 1000:.1f} ms, cached {r['latest'][1] * 1000:.2f} ms",
        f"timeline?date= on {tl[0]:,} rows: median {tl[1] * 1000:.2f} ms, p99 {tl[2] * 1000:.2f} ms, max {tl[3] * 1000:.2f} ms",
    ]
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "playback.txt"), "a") as f:
        f.write(time.strftime("%Y-%m-%d %H:%M") + "\n" + "\n".join(lines) + "\n\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
