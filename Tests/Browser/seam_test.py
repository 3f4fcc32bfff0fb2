#!/usr/bin/env python3
"""One view.mp4 across a change of resolution, played in a real browser: Debian's chromium
opens the URL (its own media page, as a user who follows a link sees it) and plays it to the
end. Prints the picture sizes it showed and exits non-zero unless it played through every
size given, leaving a screenshot in --shots when it did not (started by PlaybackTests).

  seam_test.py --url http://127.0.0.1:PORT/api/cameras/cam/view.mp4?... --sizes 854x480,1920x1080 --shots DIR
"""
import argparse
import sys
import time

from playwright.sync_api import sync_playwright


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--sizes", required=True, help="picture sizes that must be shown, in order")
    ap.add_argument("--shots", required=True)
    ap.add_argument("--rate", type=float, default=2.0)
    a = ap.parse_args()
    wanted = a.sizes.split(",")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
        page = browser.new_page()
        page.goto(a.url)
        page.wait_for_selector("video")
        page.evaluate(f"""() => {{ const v = document.querySelector('video'); v.muted = true;
                                   v.playbackRate = {a.rate}; return v.play(); }}""")
        seen, state = [], {}
        deadline = time.time() + 120
        while time.time() < deadline:
            state = page.evaluate("""() => { const v = document.querySelector('video');
                return { t: v.currentTime, d: v.duration, ended: v.ended, w: v.videoWidth, h: v.videoHeight,
                         error: v.error && (v.error.code + ' ' + v.error.message),
                         frames: v.getVideoPlaybackQuality().totalVideoFrames }; }""")
            size = f"{state['w']}x{state['h']}"
            if state["w"] and (not seen or seen[-1] != size):
                seen.append(size)
            if state["ended"] or state["error"]:
                break
            time.sleep(0.05)
        # Chromium scales the natural size by the aspect ratio the file declares (the first
        # picture's), so a size may be off by a pixel or two.
        def near(a, b):
            (aw, ah), (bw, bh) = (map(int, a.split("x")), map(int, b.split("x")))
            return abs(aw - bw) <= max(2, bw // 200) and abs(ah - bh) <= max(2, bh // 200)
        ok = (state.get("ended") and not state.get("error") and state["t"] >= state["d"] - 0.5
              and len(seen) == len(wanted) and all(near(x, y) for x, y in zip(seen, wanted)))
        print(f"{'ok  ' if ok else 'FAIL'} played {state.get('t', 0):.2f} of {state.get('d', 0):.2f} s, "
              f"{state.get('frames')} frames, sizes {seen} (wanted {wanted}), error {state.get('error')}", flush=True)
        if not ok:
            page.screenshot(path=f"{a.shots}/seam-failure.png")
        browser.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
