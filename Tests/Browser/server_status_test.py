#!/usr/bin/env python3
"""The page's server status in a real browser (Debian's chromium, playwright): after logging
in, the top bar says how the MQTT broker is (its text and, on hover, its reason). Exits non-zero
when the status does not show --expect (text) and --expect-title (in the title), leaving a
screenshot in --shots.

  server_status_test.py --base http://127.0.0.1:PORT --user U --password PW \
                        --expect "MQTT refused" --expect-title "mqtt.password" --shots DIR
"""
import argparse
import sys

from playwright.sync_api import sync_playwright


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--expect-title", required=True)
    ap.add_argument("--shots", required=True)
    a = ap.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        try:
            page.goto(a.base + "/")
            page.wait_for_selector("#user", timeout=10000)
            page.fill("#user", a.user)
            page.fill("#password", a.password)
            page.click("button[type=submit]")
            page.wait_for_selector("#server:not([hidden])", timeout=10000)
            text = page.inner_text("#server")
            title = page.get_attribute("#server", "title") or ""
            print(f"status: {text!r}, title: {title!r}")
            if a.expect not in text or a.expect_title not in title:
                raise AssertionError(f"wanted {a.expect!r} and a title with {a.expect_title!r}")
        except Exception as e:
            page.screenshot(path=f"{a.shots}/server-status-failure.png", full_page=True)
            print(f"FAIL {e}; screenshot: {a.shots}/server-status-failure.png")
            sys.exit(1)
        finally:
            browser.close()


main()
