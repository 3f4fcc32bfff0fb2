#!/usr/bin/env python3
"""The page's "Add cameras" in a real browser (Debian's chromium through playwright), against
an `nvr serve` that has no camera yet, on a network of the test's own where a simulated ONVIF
camera answers WS-Discovery (DiscoveryTests starts both). Prints one line per check and exits
non-zero when one fails, leaving a screenshot in --shots.

  discover_test.py --base http://127.0.0.1:PORT --user admin --password PW --address HOST:PORT \
                   --camera-user admin --camera-password secret --shots DIR
"""
import sys

from playwright.sync_api import sync_playwright

from browser import arguments, launch, log_in

failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + str(detail) if detail else ''}", flush=True)
    if not ok:
        failures.append(name)
    return ok


def main():
    a = arguments("--address", "--camera-user", "--camera-password")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        logs = []
        page.on("console", lambda m: logs.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: logs.append(f"pageerror: {e}"))
        step = "login"
        try:
            log_in(page, a)
            page.wait_for_selector("main a[href='#/discover']", timeout=10000)
            check("with no camera yet, the grid offers to find some", True)

            step = "look"
            page.click("main a[href='#/discover']")
            row = f".found-row[data-address='{a.address}']"
            page.wait_for_selector(row, timeout=15000)
            text = page.inner_text(row)
            check("the ONVIF camera on the network is listed", "SimCam-1" in text and "onvif" in text, text)

            step = "a wrong password"
            page.fill(f"{row} input[name=user]", a.camera_user)
            page.fill(f"{row} input[name=password]", a.camera_password)
            page.fill(f"{row} input[name=name]", "front door")
            page.click(f"{row} button[type=submit]")
            page.wait_for_selector(f"{row} .error:text-matches('.+')", timeout=10000)
            check("a name the NVR refuses is said in the row", True, page.inner_text(f"{row} .error"))

            step = "add"
            page.fill(f"{row} input[name=name]", "front")
            page.click(f"{row} button[type=submit]")
            page.wait_for_selector(f"{row} a[href='#/camera/front']", timeout=10000)
            check("adding it marks the row as added", True)

            step = "grid"
            page.click("nav a[href='#/']")
            page.wait_for_selector(".tile[data-camera='front'] .badge.streaming", timeout=30000)
            check("the added camera streams in the grid", True)
        except Exception as e:  # noqa: BLE001
            check(f"step '{step}' finished", False, e)
        if failures:
            page.screenshot(path=f"{a.shots}/discover-failure.png", full_page=True)
            print("console:\n" + "\n".join(logs[-30:]))
            print(f"screenshot: {a.shots}/discover-failure.png")
        browser.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
