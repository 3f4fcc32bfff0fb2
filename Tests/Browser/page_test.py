#!/usr/bin/env python3
"""The page in a real browser: Debian's chromium driven by playwright, against a running
`nvr serve` (started by PageTests). Prints one line per check and exits non-zero when one fails,
leaving a screenshot of the page at that moment in --shots.

  page_test.py --base http://127.0.0.1:PORT --user admin --password PW --cameras a,b \
               --event-id 1 --event-camera a --shots DIR
"""
import argparse
import json
import sys
import time

from playwright.sync_api import sync_playwright

failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + str(detail) if detail else ''}", flush=True)
    if not ok:
        failures.append(name)
    return ok


def video_state(page, selector):
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map(v => ({
        t: v.currentTime, frames: v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality().totalVideoFrames : -1,
        ready: v.readyState, error: v.error && v.error.message, w: v.videoWidth, h: v.videoHeight }))""", selector)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--cameras", required=True)
    ap.add_argument("--event-id", type=int, required=True)
    ap.add_argument("--event-camera", required=True)
    ap.add_argument("--shots", required=True)
    a = ap.parse_args()
    cameras = a.cameras.split(",")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        logs = []
        page.on("console", lambda m: logs.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: logs.append(f"pageerror: {e}"))
        step = "start"
        try:
            step = "login"
            page.goto(a.base + "/")
            page.wait_for_selector("#user", timeout=10000)
            page.fill("#password", "wrong password")
            page.fill("#user", a.user)
            page.click("button[type=submit]")
            page.wait_for_selector("form.login .error:text-matches('wrong', 'i')", timeout=10000)
            check("a wrong password is refused on the page", True)
            page.fill("#password", a.password)
            page.click("button[type=submit]")
            page.wait_for_selector(".tile", timeout=10000)
            check("logs in and shows the grid", len(page.query_selector_all(".tile")) == len(cameras), page.inner_text("main")[:200])

            step = "live grid"
            time.sleep(1)
            first = video_state(page, ".tile video")
            time.sleep(3)
            later = video_state(page, ".tile video")
            check("every camera's live video plays (time advances, frames decode)",
                  len(later) == len(cameras) and all(b["t"] > x["t"] + 1 and b["frames"] > x["frames"] + 5 and not b["error"] for x, b in zip(first, later)),
                  json.dumps(later))

            step = "one camera"
            cam = a.event_camera
            page.click(f".tile[data-camera='{cam}']")
            page.wait_for_selector(".timeline .span", timeout=15000)
            spans = page.evaluate("""() => [...document.querySelectorAll('.timeline .span')].map(r => ({cls: r.getAttribute('class'), start: Number(r.getAttribute('data-start'))}))""")
            check("the timeline shows the recorded spans", any("disk" in s["cls"] for s in spans), spans)
            time.sleep(2)
            live = video_state(page, ".stage video")
            check("the camera plays live, large", live and live[0]["t"] > 0.5 and live[0]["w"] > 0, live)

            step = "play from the timeline"
            # A moment 20 s ago, clicked on the day's bar (its width is the local day).
            want = page.evaluate("() => Math.round(Date.now() * 90) - 20 * 90000")
            x = page.evaluate("""(t) => { const svg = document.querySelector('.timeline'); const r = svg.getBoundingClientRect();
                const d = new Date(); d.setHours(0, 0, 0, 0); const start = d.getTime() * 90;
                const next = new Date(d); next.setDate(d.getDate() + 1); const end = next.getTime() * 90;
                return {x: r.left + (t - start) / (end - start) * r.width, y: r.top + r.height / 2, pxTicks: (end - start) / r.width}; }""", want)
            page.mouse.click(x["x"], x["y"])
            page.wait_for_function("() => document.querySelector('.where').textContent.startsWith('Recorded')", timeout=10000)
            time.sleep(2)
            shown = page.evaluate("""() => { const v = document.querySelector('.stage video');
                const base = new URL(v.src).searchParams.get('start'); return {t: v.currentTime, start: Number(base), paused: v.paused, ready: v.readyState}; }""")
            # One pixel of the bar is ~70 s of the day: the request starts where the click fell.
            check("clicking the timeline plays that moment", abs(shown["start"] - want) <= x["pxTicks"] + 90000 and shown["t"] > 0.5 and not shown["paused"],
                  {**shown, "wanted": want})

            step = "event clip"
            page.wait_for_selector(f"button.event[data-event='{a.event_id}']", timeout=10000)
            page.click(f"button.event[data-event='{a.event_id}']")
            page.wait_for_function("() => { const v = document.querySelector('.stage video'); return v && v.src.includes('/clip.mp4') && v.currentTime > 1; }", timeout=15000)
            clip = video_state(page, ".stage video")
            check("an event's clip plays", clip and clip[0]["t"] > 1 and not clip[0]["error"], clip)

            step = "events page"
            page.click("nav a[href='#/events']")
            page.wait_for_selector(f"button.event[data-event='{a.event_id}'] img", timeout=10000)
            loaded = page.evaluate(f"() => {{ const i = document.querySelector(\"button.event[data-event='{a.event_id}'] img\"); return i.complete && i.naturalWidth > 0; }}")
            check("the events page shows the event's snapshot", loaded)

            step = "download link"
            page.click(f".tile[data-camera='{cam}']") if page.query_selector(".tile") else page.goto(a.base + f"/#/camera/{cam}")
            page.wait_for_selector(".download a", timeout=10000)
            href = page.get_attribute(".download a", "href")
            check("the download link is a view.mp4 of the range", href and "/view.mp4?start=" in href, href)

            step = "phone"
            # 375 px wide (an iPhone SE or mini): live video, a camera on its sub-stream, the review
            # queue, nothing wider than the screen, and what installs the page to a home screen.
            page.set_viewport_size({"width": 375, "height": 812})
            sockets = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(a.base + "/#/")
            page.wait_for_selector(".tile video", timeout=10000)
            widths = page.evaluate("() => [...document.querySelectorAll('.tile')].map(t => t.getBoundingClientRect().width)")
            check("readable on a phone: one camera per row", all(300 < w <= 375 for w in widths), widths)
            page.wait_for_function("() => [...document.querySelectorAll('.tile video')].every(v => v.currentTime > 0.5)", timeout=15000)
            check("live video plays in every tile on a phone", True, video_state(page, ".tile video"))
            overflow = "() => document.documentElement.scrollWidth"
            check("the grid fits the phone's width", page.evaluate(overflow) <= 375, page.evaluate(overflow))
            sub = [c for c in cameras if c != cam][0] if len(cameras) > 1 else cam
            sockets.clear()
            page.goto(a.base + f"/#/camera/{sub}")
            page.wait_for_function("() => { const v = document.querySelector('.stage video'); return v && v.currentTime > 0.5; }", timeout=15000)
            first = next((u for u in sockets if f"/cameras/{sub}/live" in u), "")
            check("a camera on a phone asks for its sub-stream first", "stream=sub" in first, sockets)
            check("the camera view fits the phone's width", page.evaluate(overflow) <= 375, page.evaluate(overflow))
            page.click("nav a[href='#/review']")
            page.wait_for_selector(".review-item img", timeout=10000)
            page.wait_for_function("() => { const i = document.querySelector('.review-item img'); return i.complete && i.naturalWidth > 0; }", timeout=10000)
            item = page.evaluate("() => document.querySelector('.review-item').getBoundingClientRect().width")
            check("the review queue shows its items on a phone", 300 < item <= 375, item)
            check("the review queue fits the phone's width", page.evaluate(overflow) <= 375, page.evaluate(overflow))
            manifest = page.evaluate("""async () => { const href = document.querySelector('link[rel=manifest]').href;
                const m = await (await fetch(href, {credentials: 'omit'})).json();
                const icons = await Promise.all(m.icons.map(async (i) => { const img = new Image(); img.src = new URL(i.src, href);
                    await img.decode(); return {sizes: i.sizes, w: img.naturalWidth, h: img.naturalHeight}; }));
                return {name: m.name, display: m.display, start: m.start_url, icons}; }""")
            sized = [i for i in manifest["icons"] if i["sizes"] != "any"]
            check("a web app manifest with icons of the sizes it says (home screen)",
                  manifest["display"] == "standalone" and manifest["start"] == "/" and len(sized) >= 2
                  and all(i["sizes"] == f"{i['w']}x{i['h']}" for i in sized) and all(i["w"] > 0 for i in manifest["icons"]),
                  manifest)
        except Exception as e:  # noqa: BLE001
            check(f"step '{step}' finished", False, e)
        if failures:
            page.screenshot(path=f"{a.shots}/page-failure.png", full_page=True)
            print("console:\n" + "\n".join(logs[-30:]))
            print(f"screenshot: {a.shots}/page-failure.png")
        browser.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
