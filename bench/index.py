#!/usr/bin/env python3
"""bench/index: the index on SQLite and on PostgreSQL side by side, holding a year.

For each backend: a storage root whose index (schema made by the release `nvr` itself) holds N
cameras × one 60 s segment a minute for D days (a run a day, 10 s apart; 5 % of segments with
an event, in 3-minute clumps, so a day's timeline has ~50 slices). The rows are bulk-loaded with
SQL (the load's time is shown, not a product figure). Then:

  1. the recording path's writes: `index-bench` applies batches of a segment rollover of every
     camera (complete + insert + progress each) through `RecordingStore.apply`, as the index
     writer does, into the full index: writes a second, segments a second, batch p50/p99;
  2. `GET /api/cameras/NAME/timeline` of the release `nvr serve` over HTTP keep-alive: one local
     day of a random camera (what the page asks), then 30 days: p50, p99, max.

PostgreSQL is Debian's 15, started by this script with initdb in a temporary folder on a free
loopback port (defaults: shared_buffers 128 MB, fsync on). Rows have no frame index (the
timeline never reads it; the writes of step 1 do write one).

Usage: bench/index [--cameras 32] [--days 365] [--batches 300] [--requests 1000]
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVR = os.path.join(ROOT, ".build", "release", "nvr")
BENCH = os.path.join(ROOT, ".build", "release", "index-bench")
PG_BIN = "/usr/lib/postgresql/15/bin"
MINUTE = 60 * 90_000
DAY = 1440 * MINUTE
GAP = 10 * 90_000
START = 1_704_067_200 * 90_000  # 2024-01-01T00:00:00Z


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(args, **kw):
    return subprocess.run(["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + args,
                          check=True, capture_output=True, text=True, **kw)


def start_postgres(work):
    data = os.path.join(work, "pg")
    os.makedirs(data)
    shutil.chown(data, "postgres", "postgres")
    os.chmod(work, 0o755)
    as_postgres([f"{PG_BIN}/initdb", "-D", data, "-A", "trust", "-U", "postgres"])
    port = free_port()
    as_postgres([f"{PG_BIN}/pg_ctl", "-D", data, "-l", data + "/server.log", "-w", "-o",
                 f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start"])
    psql(data, port, "postgres", "CREATE DATABASE nvr")
    return data, port


def psql(data, port, db, sql):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", data, "-p", str(port),
                           "-U", "postgres", "-d", db, "-c", sql], check=True, capture_output=True, text=True).stdout


def nvr(cfg, *args):
    return subprocess.run([NVR, *args, "--config", cfg], check=True, capture_output=True, text=True).stdout


def make_root(work, name, index_url):
    d = os.path.join(work, name)
    os.makedirs(d)
    cfg = os.path.join(d, "nvr.toml")
    port = free_port()
    with open(cfg, "w") as f:
        f.write(f'[storage]\nroot = "{d}/Storage"\n[plugins]\ndir = "{ROOT}/.build/release"\n'
                f'[http]\nbind = "127.0.0.1:{port}"\n')
        if index_url:
            f.write(f'[index]\nurl = "{index_url}"\n')
    nvr(cfg, "user", "add", "bench", "--role", "admin", "--generate")  # makes the schema: the product's migrations
    return d, cfg, port


def fill_sql(cameras, days, dialect):
    """Cameras (disabled: nothing to record), one sample entry, and the year of segments."""
    n = days * 1440
    cams = ", ".join(f"('cam{c}', 'rtsp', '{{}}', 0, {START})" for c in range(cameras))
    blob = "x'00'" if dialect == "sqlite" else "'\\x00'::bytea"
    box = "x'0000000861766331'" if dialect == "sqlite" else "'\\x0000000861766331'::bytea"
    series = (f"(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {n - 1}) SELECT i FROM n)"
              if dialect == "sqlite" else f"(SELECT generate_series(0::bigint, {n - 1}) AS i)")
    event = "(i % 60) < 3" if dialect == "sqlite" else "CASE WHEN i % 60 < 3 THEN 1 ELSE 0 END"
    return [
        f"INSERT INTO camera (name, plugin, config, enabled, created90k) VALUES {cams}",
        f"INSERT INTO sample_entry (codec, rfc6381, width, height, timescale, extradata, box) VALUES "
        f"('h264', 'avc1.64001f', 1280, 720, 90000, {blob}, {box})",
        f"INSERT INTO segment (camera_id, run_id, run_seq, start90k, duration90k, path, bytes, frames, key_frames, "
        f"video_entry_id, state, has_event) SELECT c.id, c.id * 100000 + i / 1440, i % 1440, "
        f"{START} + i * {MINUTE} + (i / 1440) * {GAP}, {MINUTE}, 'recordings/' || c.name || '/' || i || '.mp4', "
        f"30000000, 600, 30, (SELECT min(id) FROM sample_entry), 'complete', {event} FROM {series} AS s, camera c",
    ]


def timeline_latencies(port, token, cameras, days, span_days, requests):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(7)
    out = []
    slices = 0
    for k in range(requests + 20):
        d = rng.randrange(0, max(1, days - span_days + 1))
        start = START + d * (DAY + GAP)
        url = f"/api/cameras/cam{rng.randrange(cameras)}/timeline?start={start}&end={start + span_days * DAY}"
        t = time.perf_counter()
        conn.request("GET", url, headers=headers)
        r = conn.getresponse()
        body = r.read()
        dt = time.perf_counter() - t
        if r.status != 200:
            raise SystemExit(f"{url}: {r.status} {body[:200]!r}")
        if k >= 20:  # the first requests warm the caches
            out.append(dt * 1000)
            slices += len(json.loads(body)["slices"])
    out.sort()
    q = lambda p: out[min(len(out) - 1, int(len(out) * p))]
    return {"p50": q(0.5), "p99": q(0.99), "max": out[-1], "slices": slices / len(out)}


def run_backend(name, work, cameras, days, batches, requests, pg):
    url = f"postgresql://postgres@127.0.0.1:{pg[1]}/nvr" if pg else None
    d, cfg, port = make_root(work, name, url)
    t = time.time()
    statements = fill_sql(cameras, days, "postgres" if pg else "sqlite")
    if pg:
        for s in statements:
            psql(pg[0], pg[1], "nvr", s)
        psql(pg[0], pg[1], "nvr", "ANALYZE")
        size = int(psql(pg[0], pg[1], "nvr", "SELECT pg_database_size('nvr')"))
    else:
        db = sqlite3.connect(os.path.join(d, "Storage", "index.sqlite"))
        for s in statements:
            db.execute(s)
        db.commit()
        db.execute("ANALYZE")
        db.close()
        size = os.path.getsize(os.path.join(d, "Storage", "index.sqlite"))
    fill = time.time() - t
    print(f"{name}: {cameras * days * 1440:,} segments loaded in {fill:.0f} s, {size / 1e9:.2f} GB", flush=True)

    w = subprocess.run([BENCH, "--batches", str(batches)] + (["--postgresql", url] if pg else
                       ["--sqlite", os.path.join(d, "Storage", "index.sqlite")]),
                       check=True, capture_output=True, text=True)
    writes = json.loads(w.stdout)
    print(f"{name}: writes {writes}", flush=True)

    log = open(os.path.join(d, "serve.log"), "w")
    serve = subprocess.Popen([NVR, "serve", "--config", cfg], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        token = nvr(cfg, "token", "add", "--user", "bench", "--name", "bench", "--quiet").strip()
        day = timeline_latencies(port, token, cameras, days, 1, requests)
        month = timeline_latencies(port, token, cameras, days, 30, max(50, requests // 10))
    finally:
        serve.terminate()
        serve.wait()
        log.close()
    print(f"{name}: timeline day {day}, 30 days {month}", flush=True)
    return {"fill": fill, "size": size, "writes": writes, "day": day, "month": month}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cameras", type=int, default=32)
    p.add_argument("--days", type=int, default=365)
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--requests", type=int, default=1000)
    a = p.parse_args()
    for product in ("nvr", "index-bench"):
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="nvr-bench-index-")
    pg = None
    try:
        results = {"SQLite": run_backend("sqlite", work, a.cameras, a.days, a.batches, a.requests, None)}
        pg = start_postgres(work)
        results["PostgreSQL"] = run_backend("postgresql", work, a.cameras, a.days, a.batches, a.requests, pg)
        rows = a.cameras * a.days * 1440
        lines = [f"\n{a.cameras} cameras × {a.days} days = {rows:,} segments\n",
                 "| backend | index size | writes/s | segments/s | batch p50 / p99 | /timeline day p50 / p99 / max | 30 days p50 / p99 |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
        for name, r in results.items():
            w, d, m = r["writes"], r["day"], r["month"]
            lines.append(f"| {name} | {r['size'] / 1e9:.1f} GB | {w['writesPerSecond']:,.0f} | {w['segmentsPerSecond']:,.0f} | "
                         f"{w['batchP50ms']:.1f} / {w['batchP99ms']:.1f} ms | {d['p50']:.1f} / {d['p99']:.1f} / {d['max']:.1f} ms | "
                         f"{m['p50']:.1f} / {m['p99']:.1f} ms |")
        text = "\n".join(lines)
        print(text)
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", "index.txt"), "a") as f:
            f.write(time.strftime("%Y-%m-%d %H:%M") + text + "\n")
    finally:
        if pg:
            subprocess.run(["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--",
                            f"{PG_BIN}/pg_ctl", "-D", pg[0], "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
