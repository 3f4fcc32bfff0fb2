#!/usr/bin/env python3
"""Every camera at one moment, in a real browser (Debian's chromium, playwright). The NVR holds
the same minutes of --cameras, from --start to --end. Opens "All cameras" on that day and
checks: a row of recorded spans per camera; a click inside the recordings shows every
camera's recorded picture of that moment; a click where nothing was recorded says so in
every tile; "Play all" plays them together (within a second of each other). Exits non-zero on
the first thing that is wrong, leaving a screenshot in --shots.

  moment_test.py --base URL --user U --password PW --shots DIR --cameras a,b,c --start T --end T
"""
import time
from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in



def main():
    a = arguments("--cameras", "--start", "--end")
    cameras = a.cameras.split(",")
    start, end = int(a.start), int(a.end)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        try:
            log_in(page, a)
            day = page.evaluate("async (t) => (await import('/app/time.js')).dayString(new Date(t / 90))", start)
            page.click("a[href='#/moment']")
            page.wait_for_selector("#moment-day", timeout=10000)
            page.fill("#moment-day", day)
            page.dispatch_event("#moment-day", "change")
            page.wait_for_function(f"() => new Set([...document.querySelectorAll('.moment-bar rect')].map((r) => r.dataset.row)).size === {len(cameras)}",
                                   timeout=10000)

            # The middle of the first camera's drawn span: inside the recordings by construction.
            x, y = page.evaluate("""() => { const r = document.querySelector('.moment-bar rect[data-row="0"]').getBoundingClientRect();
                return [r.left + r.width / 2, r.top + r.height / 2]; }""")
            page.mouse.click(x, y)
            page.wait_for_function(f"""() => {{ const imgs = [...document.querySelectorAll('.moment .tile img')];
                return imgs.length === {len(cameras)} && imgs.every((i) => i.complete && i.naturalWidth > 0); }}""", timeout=15000)
            shown = page.eval_on_selector_all(".moment .tile img", "is => is.map((i) => Number(new URL(i.src).searchParams.get('at')))")
            check(len(set(shown)) == 1 and all(start <= t < end for t in shown), f"pictures of {shown}, not of one moment in {start}…{end}")
            print(f"ok: every camera's picture at one moment ({len(shown)} tiles)")

            # As far from the recordings as the day allows.
            bar = page.evaluate("() => { const r = document.querySelector('.moment-bar').getBoundingClientRect(); return [r.left, r.width, r.top]; }")
            far = bar[0] + (0.95 if x < bar[0] + bar[1] / 2 else 0.05) * bar[1]
            page.mouse.click(far, bar[2] + 6)
            page.wait_for_function("() => [...document.querySelectorAll('.moment .tile .video')].every((v) => v.textContent.includes('nothing recorded'))",
                                   timeout=5000)
            print("ok: where nothing was recorded, every tile says so")

            page.mouse.click(x, y)
            page.click("#moment-play")
            page.wait_for_function(f"""() => {{ const vs = [...document.querySelectorAll('.moment .tile video')];
                return vs.length === {len(cameras)} && vs.every((v) => v.currentTime > 2); }}""", timeout=20000)
            time.sleep(1.5)
            times = page.eval_on_selector_all(".moment .tile video", "vs => vs.map((v) => v.currentTime)")
            check(max(times) - min(times) < 1.0, f"playing apart: {times}")
            print(f"ok: Play all plays them together: {[round(t, 2) for t in times]}")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "moment", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
