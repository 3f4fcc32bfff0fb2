#!/usr/bin/env python3
"""A camera's detection settings from the page, in a real browser (Debian's chromium,
playwright), as an admin: bad labels are refused next to the field and nothing is saved; labels
and a minimum score are saved; a zone drawn with two points is refused ("at least 3 points"),
with a third it is saved and listed; a required zone is saved; removing the zone removes it
from the requirement too. Each step is checked against GET /api/cameras/NAME/recording-settings.
Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  detection_settings_test.py --base http://127.0.0.1:PORT --user U --password PW --camera NAME --shots DIR
"""

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in


def main():
    a = arguments("--camera")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})

        def settings():
            return page.evaluate(
                f"async () => (await (await fetch('/api/cameras/{a.camera}/recording-settings')).json()).detect")

        def saved_ok():
            page.wait_for_function("() => document.querySelector('#toast') && !document.querySelector('#toast').hidden",
                                   timeout=10000)
            check(page.inner_text("#detection-error") == "", f"an error: {page.inner_text('#detection-error')!r}")

        try:
            log_in(page, a)
            page.goto(f"{a.base}/#/camera/{a.camera}")
            page.click("#detection-settings summary")
            page.wait_for_function("() => document.querySelector('#detection-state').textContent.startsWith('Detection:')",
                                   timeout=10000)
            before = settings()
            # Bad labels: said next to the field, nothing saved.
            page.fill("#detect-labels", "person;rm")
            page.click("#detect-save")
            page.wait_for_function("() => document.querySelector('#detection-error').textContent.length > 0", timeout=10000)
            check("labels are names" in page.inner_text("#detection-error"), page.inner_text("#detection-error"))
            check(settings() == before, "a refused save changed the settings")
            # Labels and a score.
            page.fill("#detect-labels", "person")
            page.fill("#detect-min-score", "0.7")
            page.click("#detect-save")
            page.wait_for_function("() => document.querySelector('#detection-error').textContent === ''", timeout=10000)
            page.wait_for_function(
                f"async () => (await (await fetch('/api/cameras/{a.camera}/recording-settings')).json()).detect.labels[0] === 'person'",
                timeout=10000)
            s = settings()
            check(s["labels"] == ["person"] and abs(s["min_score"] - 0.7) < 1e-9, f"saved {s}")
            # A zone of two points is refused; with a third it is saved.
            box = page.query_selector(".zone-canvas").bounding_box()
            for fx, fy in [(0.5, 0.5), (0.95, 0.5)]:
                page.mouse.click(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
            page.fill("#zone-name", "drive")
            page.click("#zone-save")
            page.wait_for_function("() => document.querySelector('#detection-error').textContent.includes('at least 3 points')",
                                   timeout=10000)
            check(settings()["zones"] == [], "a refused zone was saved")
            # The error above it moved the picture: where it is now.
            box = page.query_selector(".zone-canvas").bounding_box()
            page.mouse.click(box["x"] + 0.95 * box["width"], box["y"] + 0.95 * box["height"])
            page.click("#zone-save")
            page.wait_for_selector("#zone-list li", timeout=10000)
            check("drive (3 points)" in page.inner_text("#zone-list"), page.inner_text("#zone-list"))
            z = settings()["zones"]
            check(len(z) == 1 and z[0]["name"] == "drive" and len(z[0]["points"]) == 3, f"zones {z}")
            check(abs(z[0]["points"][0][0] - 0.5) < 0.02 and abs(z[0]["points"][2][1] - 0.95) < 0.02, f"points {z[0]['points']}")
            check(page.query_selector("#zone-overlay polygon.zone") is not None, "the zone is not drawn on the picture")
            # A requirement, then removing the zone removes it too.
            page.fill("#required-zones", "person=drive")
            page.click("#detect-save")
            page.wait_for_function(
                f"async () => JSON.stringify((await (await fetch('/api/cameras/{a.camera}/recording-settings')).json()).detect.required_zones) === '{{\"person\":[\"drive\"]}}'",
                timeout=10000)
            page.click("#zone-list button[data-zone=drive]")
            page.wait_for_function("() => document.querySelectorAll('#zone-list li').length === 0", timeout=10000)
            s = settings()
            check(s["zones"] == [] and s["required_zones"] == {}, f"after removing the zone: {s}")
            print("detection settings: ok")
        except Exception as e:
            fail_with_screenshot(page, a.shots, "detection-settings", e)
        finally:
            browser.close()


main()
