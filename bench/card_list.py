#!/usr/bin/env python3
"""Listing an Insta360 card: what `nvr card sync --list-only` costs when every video's duration
has to come from its MP4 header (OSC's camera.listFiles has no duration).

The simulated Insta360 (`camsim insta360 --videos N`, release build) holds N one-minute 360
pairs (2N real MP4 files, moov at the end, 640x360 25 fps). `nvr card sync --list-only` lists
them page by page (`list_page_size`) and reads each file's header with Range requests.
Measured from the simulator's counters and the nvr process: bytes read from the card, share
of the card, listFiles pages, wall and CPU time. Appends to bench/results/card-list.md.
"""
import argparse, datetime, json, os, resource, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build", "release")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def stats(port):
    return json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/sim/stats", timeout=5))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--videos", type=int, default=20)
    ap.add_argument("--page", type=int, default=10)
    a = ap.parse_args()
    for product in ["nvr", "nvr-plugin-insta360", "camsim"]:
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="bench-card-list-")
    port = free_port()
    print(f"making {a.videos} one-minute 360 pairs on the simulated card…", flush=True)
    sim = subprocess.Popen([os.path.join(BIN, "camsim"), "insta360", "--port", str(port), "--card", os.path.join(work, "card"),
                            "--videos", str(a.videos)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                stats(port); break
            except Exception:
                time.sleep(0.2)
        config = os.path.join(work, "nvr.toml")
        with open(config, "w") as f:
            f.write(f'[storage]\nroot = "{work}/root"\n[plugins]\ndir = "{BIN}"\n')
        subprocess.run([os.path.join(BIN, "nvr"), "camera", "add", "x3", "--plugin", "insta360", "--option", f"base_url=http://127.0.0.1:{port}",
                        "--option", "stream_key=bench", "--option", f"list_page_size={a.page}", "--config", config], check=True, capture_output=True)
        before = stats(port)
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        r = subprocess.run([os.path.join(BIN, "nvr"), "card", "sync", "--camera", "x3", "--list-only", "--json", "--config", config],
                           capture_output=True, text=True)
        wall = time.monotonic() - t
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            sys.exit(f"nvr card sync failed: {r.stdout} {r.stderr}")
        after = stats(port)
        out = json.loads(r.stdout)
        card_bytes = sum(os.path.getsize(os.path.join(work, "card", "DCIM", "Camera01", n)) for n in after["files"])
        read = after["card_bytes_served"] - before["card_bytes_served"]
        pages = after["commands"].get("camera.listFiles", 0) - before["commands"].get("camera.listFiles", 0)
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        row = (f"| {datetime.date.today()} | {out['files']} | {pages} | {read / 1024:.1f} KB | {read / max(out['files'], 1) / 1024:.1f} KB "
               f"| {100 * read / card_bytes:.3f} % of {card_bytes / 1e6:.0f} MB | {wall:.2f} s | {cpu:.2f} s |")
        print("| date | files | listFiles pages | read from card | per file | share of card | wall | nvr CPU |")
        print(row)
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", "card-list.md"), "a") as f:
            f.write(row + "\n")
    finally:
        sim.terminate()
        sim.wait(timeout=10)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
