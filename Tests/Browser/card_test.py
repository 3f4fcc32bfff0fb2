#!/usr/bin/env python3
"""A camera's memory card from the page in a real browser (Debian's chromium, playwright),
against a running `nvr serve` with a GoPro simulator camera (--camera, disabled, so only the
page syncs) whose card holds one video (--file, --size bytes) recorded at --start (ticks):

- the camera view on that day shows "Memory card", with nothing listed until a sync;
- "List and fill gaps now" lists the card and fills the gap: the result says one video and
  segments filled, the table lists the file with (nearly) all of it now on the NVR, and the day bar
  shows the footage;
- "Download" saves the file as the camera has it (--size bytes), under its name.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  card_test.py --base URL --user U --password PW --shots DIR --camera NAME --file NAME
               --size BYTES --start TICKS --out DIR
"""

import os
import re

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in, says


def main():
    a = arguments("--camera", "--file", "--size", "--start", "--out")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000}, accept_downloads=True)
        try:
            log_in(page, a)
            day = page.evaluate("async (t) => (await import('/app/time.js')).dayString(new Date(t / 90))", int(a.start))
            page.goto(f"{a.base}/#/camera/{a.camera}?day={day}")
            page.wait_for_selector("#card:not([hidden])", timeout=15000)
            page.click("#card summary")
            says(page, "#card-videos", "No card videos")
            check(page.locator(".timeline .span").count() == 0, "anything on the bar before any sync")

            page.click("#card-sync")
            says(page, "#card-result", "1 video on the card", timeout=60000)
            result = page.inner_text("#card-result")
            check("segments filled" in result and " 0 segments" not in result, f"the sync filled nothing: {result}")
            row = page.locator(f"#card-videos tr[data-file$='{a.file}']")
            row.wait_for(timeout=10000)
            text = row.inner_text()
            covered = re.search(r"(\d+) %", text)
            check(covered and int(covered.group(1)) >= 90, f"the card's video after the sync: {text}")
            # The backfilled footage is on the NVR now: the day's timeline has it as card footage
            # kept here, drawn on the bar.
            start = int(a.start)
            slices = page.evaluate(f"async () => (await (await fetch('/api/cameras/{a.camera}/timeline?start={start - 90000}&end={start + 40 * 90000}')).json()).slices")
            here = [x for x in slices if x["source"] == "card" and x["location"] == "nvr"]
            check(here and sum(x["end90k"] - x["start90k"] for x in here) >= 25 * 90000, f"card footage on the NVR: {slices}")
            page.wait_for_selector(".timeline .span.card", timeout=10000)
            print(f"ok: the sync listed the card and filled the gap ({result})")

            with page.expect_download(timeout=60000) as d:
                row.locator("a", has_text="Download").click()
            path = os.path.join(a.out, a.file)
            d.value.save_as(path)
            size = os.path.getsize(path)
            check(size == int(a.size), f"downloaded {size} bytes of {a.size}")
            check(d.value.suggested_filename == a.file, f"saved as {d.value.suggested_filename}")
            print(f"ok: the card file downloaded whole ({size} bytes)")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "card", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
