#!/usr/bin/env python3
"""The Export view in a real browser (Debian's chromium, playwright). The NVR holds footage of
--cameras from before --start to after --end. Logs in, opens Export, and checks: every camera
is offered; bad input (no camera, an end before the start, a range with nothing recorded, a
speed of 1) is said next to its field and leaves no download; the three cameras' range
downloads as one ZIP whose MP4s ffprobe reads with the range's duration; a 60× timelapse of
it downloads too, 60 times shorter. Exits non-zero on the first thing that is wrong, leaving
a screenshot in --shots.

  export_test.py --base URL --user U --password PW --shots DIR --cameras a,b,c
                 --start TICKS --end TICKS --out DIR
"""
import json
import os
import subprocess
import zipfile

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in


def local_input(page, ticks):
    """The datetime-local value the page's own time.js makes for `ticks` (the browser's zone)."""
    return page.evaluate("async (t) => (await import('/app/time.js')).localInput(t)", ticks)


def set_field(page, selector, value):
    page.fill(selector, value)
    page.dispatch_event(selector, "change")


def error_says(page, selector, words):
    page.wait_for_function(
        "([s, w]) => (document.querySelector(s)?.textContent ?? '').includes(w)", arg=[selector, words], timeout=10000)
    check(page.get_attribute("#export-download", "href") is None, f"a download is offered despite: {words}")


def download(page, path):
    page.wait_for_selector("#export-download[href]", timeout=15000)
    with page.expect_download(timeout=60000) as d:
        page.click("#export-download")
    d.value.save_as(path)
    # The page read it itself to show its progress: the bar is full and says so.
    page.wait_for_function("() => document.querySelector('#export-progress-text').textContent.startsWith('Done')", timeout=10000)
    bar = page.evaluate("() => { const p = document.querySelector('#export-progress'); return [p.value, p.max]; }")
    check(bar[0] == bar[1] == os.path.getsize(path), f"progress {bar} for a file of {os.path.getsize(path)} bytes")
    return path


def durations(zip_path, out_dir):
    """Each MP4's duration in the ZIP (after zipfile checked every CRC), by entry name."""
    with zipfile.ZipFile(zip_path) as z:
        check(z.testzip() is None, f"{zip_path}: a bad CRC")
        z.extractall(out_dir)
        names = z.namelist()
    found = {}
    for n in names:
        if n.endswith(".mp4"):
            r = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json",
                                os.path.join(out_dir, n)], capture_output=True, text=True)
            found[n] = float(json.loads(r.stdout)["format"]["duration"])
    return names, found


def main():
    a = arguments("--cameras", "--start", "--end", "--out")
    cameras = a.cameras.split(",")
    start, end = int(a.start), int(a.end)
    seconds = (end - start) / 90000
    os.makedirs(a.out, exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        try:
            log_in(page, a)
            page.click("a[href='#/export']")
            page.wait_for_selector("input[name=camera]", timeout=10000)
            offered = page.eval_on_selector_all("input[name=camera]", "xs => xs.map((x) => [x.value, x.checked])")
            check(sorted(v for v, _ in offered) == sorted(cameras), f"cameras offered: {offered}")
            check(all(c for _, c in offered), "not every camera is ticked at first")

            set_field(page, "#export-from", local_input(page, start))
            set_field(page, "#export-to", local_input(page, end))
            page.wait_for_selector("#export-download[href]", timeout=15000)

            # Bad input, each said next to its field.
            for c in cameras:
                page.uncheck(f"input[name=camera][value='{c}']")
            error_says(page, "#export-cameras-error", "at least one camera")
            for c in cameras:
                page.check(f"input[name=camera][value='{c}']")
            set_field(page, "#export-to", local_input(page, start - 90000))
            error_says(page, "#export-range-error", "after the start")
            set_field(page, "#export-from", local_input(page, start - 86400 * 90000))
            set_field(page, "#export-to", local_input(page, start - 86000 * 90000))
            error_says(page, "#export-range-error", "nothing recorded")
            set_field(page, "#export-from", local_input(page, start))
            set_field(page, "#export-to", local_input(page, end))
            page.select_option("#export-speed", "other")
            page.dispatch_event("#export-speed", "change")
            set_field(page, "#export-other-speed", "1")
            error_says(page, "#export-speed-error", "2 to 100000")

            # Every frame: one ZIP, an MP4 per camera of the range's length.
            page.select_option("#export-speed", "")
            page.dispatch_event("#export-speed", "change")
            page.wait_for_function("() => /3 cameras, [0-9.]+ (KB|MB)/.test(document.querySelector('#export-summary').textContent)",
                                   timeout=15000)
            names, found = durations(download(page, a.out + "/all.zip"), a.out + "/all")
            check(sorted(names) == sorted([c + ".mp4" for c in cameras] + ["export.txt"]), f"entries: {names}")
            check(all(abs(d - seconds) < 0.2 for d in found.values()), f"durations {found} for {seconds} s")
            print(f"ok: {len(found)} cameras × {seconds:.0f} s in one ZIP: {found}")

            # A 60× timelapse of the same range.
            page.select_option("#export-speed", "60")
            page.dispatch_event("#export-speed", "change")
            page.wait_for_function("() => document.querySelector('#export-download')?.href?.includes('speed=60')",
                                   timeout=15000)
            _, fast = durations(download(page, a.out + "/timelapse.zip"), a.out + "/timelapse")
            check(len(fast) == len(cameras) and all(abs(d - seconds / 60) < 0.2 for d in fast.values()),
                  f"timelapse durations {fast} for {seconds / 60} s")
            print(f"ok: the timelapse at 60×: {fast}")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "export", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
