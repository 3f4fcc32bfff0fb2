#!/usr/bin/env python3
"""The review queue in a real browser (Debian's chromium, playwright). The NVR has recorded an
alert (a person crossing) and a detection (plain motion) in the last minutes. Logs in, opens
Review, and checks: the alert comes first with its thumbnail; J and K move the selection;
Enter plays its clip; R marks it
reviewed and moves on to the detection; "Mark all reviewed" marks the rest. Exits non-zero on
the first thing that is wrong, leaving a screenshot in --shots.

  review_test.py --base http://127.0.0.1:PORT --user U --password PW --shots DIR
"""

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in


def main():
    a = arguments()
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            log_in(page, a)
            page.click("a[href='#/review']")
            page.wait_for_selector(".review-item", timeout=10000)
            items = page.query_selector_all(".review-item")
            check(len(items) == 2, f"{len(items)} items, not 2")
            first, second = items
            check(first.get_attribute("data-severity") == "alert", "the first item is not the alert")
            check("person" in first.inner_text(), f"the alert does not say person: {first.inner_text()!r}")
            check(second.get_attribute("data-severity") == "detection", "the second item is not a detection")
            check("selected" in (first.get_attribute("class") or ""), "the first item is not selected")
            # J and K move the selection.
            page.keyboard.press("j")
            page.wait_for_selector(".review-item.selected[data-severity=detection]", timeout=5000)
            page.keyboard.press("k")
            page.wait_for_selector(".review-item.selected[data-severity=alert]", timeout=5000)
            # Its thumbnail is a picture (the snapshot with the box).
            page.wait_for_function(
                "() => { const i = document.querySelector('.review-item img'); return i && i.complete && i.naturalWidth > 0 }",
                timeout=10000)
            # Enter plays the alert's clip.
            page.keyboard.press("Enter")
            page.wait_for_function(
                "() => { const v = document.querySelector('.stage video'); return v && v.readyState >= 1 && v.duration > 1 }",
                timeout=15000)
            src = page.get_attribute(".stage video", "src") or ""
            check("/clip.mp4" in src, f"the stage plays {src!r}")
            # R marks it reviewed and moves to the detection.
            page.keyboard.press("r")
            page.wait_for_selector(".review-item.reviewed[data-severity=alert]", timeout=10000)
            selected = page.query_selector(".review-item.selected")
            check(selected is not None and selected.get_attribute("data-severity") == "detection",
                  "after R the detection is not selected")
            unreviewed = page.evaluate("async () => (await (await fetch('/api/review?reviewed=false')).json()).items.length")
            check(unreviewed == 1, f"{unreviewed} unreviewed items on the server after R, not 1")
            counted = page.inner_text(".review-count")
            check(counted.startswith("0 alerts, 1 items"), f"the count says {counted!r}")
            page.click("#mark-all")
            page.wait_for_function(
                "() => document.querySelectorAll('.review-item.reviewed').length === 2", timeout=10000)
            unreviewed = page.evaluate("async () => (await (await fetch('/api/review?reviewed=false')).json()).items.length")
            check(unreviewed == 0, f"{unreviewed} unreviewed items after Mark all reviewed")
            print("review queue: ok")
        except Exception as e:
            fail_with_screenshot(page, a.shots, "review", e)
        finally:
            browser.close()


main()
