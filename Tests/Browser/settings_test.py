#!/usr/bin/env python3
"""Camera settings from the page in a real browser (Debian's chromium, playwright), against a
running `nvr serve` with no cameras and an RTSP camera at --camera-url. Everything is done by
filling the page's forms, and checked through the API (--token):

- adding a camera: a URL that cannot be read is refused next to the URL (nothing added); a bad
  name and a taken name next to the name; the right URL says what the stream is, then adds it;
- its connection: an unknown option refused, then a known one and a new name, then disabled and
  enabled again;
- recording: events mode with a schedule painted on the week grid (Monday 08:00-18:00
  continuous) and a pre-roll; a negative pre-roll and a schedule that paints nothing are
  refused next to the form, nothing saved;
- motion: what the detector sees drawn over live video; sensitivity, and a mask drawn on the
  picture (two points are refused);
- removing it with its recordings.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  settings_test.py --base URL --user U --password PW --shots DIR --camera-url rtsp://… --token T
"""

from playwright.sync_api import sync_playwright

from browser import arguments, call, check, eventually, fail_with_screenshot, launch, log_in, says


def main():
    a = arguments("--camera-url", "--token")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("dialog", lambda d: d.accept())
        try:
            log_in(page, a)
            page.click("#nav-settings")
            page.wait_for_selector("#add-name", timeout=10000)

            # A URL nothing answers at: refused next to the URL, nothing added.
            page.fill("#add-name", "porch")
            page.select_option("#add-plugin", "rtsp")
            page.fill("#add-url", "rtsp://127.0.0.1:9/nothing")
            page.click("#add-submit")
            says(page, "#add-url-error", "nothing was added")
            check(page.is_visible("#add-anyway"), "no 'Add anyway' after a failed test")
            check(call(a, "GET", "/api/cameras")[1]["cameras"] == [], "a camera was added despite its URL")
            # A bad name: said next to the name.
            page.fill("#add-name", "my porch!")
            page.fill("#add-url", a.camera_url)
            page.click("#add-submit")
            says(page, "#add-name-error", "invalid camera name")
            # The right URL: what the stream is, then the camera.
            page.fill("#add-name", "porch")
            page.click("#add-test")
            says(page, "#add-probe", "Read: h264")
            page.click("#add-submit")
            page.wait_for_selector("#edit-url", timeout=20000)
            cams = call(a, "GET", "/api/cameras")[1]["cameras"]
            check([c["name"] for c in cams] == ["porch"], f"cameras after adding: {cams}")
            # The same name again is refused next to the name.
            page.goto(a.base + "/#/settings")
            page.wait_for_selector("#add-name", timeout=10000)
            page.fill("#add-name", "porch")
            page.fill("#add-url", a.camera_url)
            page.click("#add-anyway") if page.is_visible("#add-anyway") else page.click("#add-submit")
            says(page, "#add-name-error", "already exists")
            print("ok: adding a camera (refused URL, bad and taken names, probe, added)")

            # Connection: an option and a new name.
            page.click("a[data-camera='porch']")
            page.wait_for_selector("#edit-options", timeout=10000)
            page.fill("#edit-options", "rtsp_transport=tcp")
            page.click("#edit-save")
            says(page, "#connection-error", "unknown option 'rtsp_transport'")
            check("rtsp_transport" not in call(a, "GET", "/api/cameras/porch/config")[1]["options"], "a refused option was kept")
            page.fill("#edit-options", "transport=tcp")
            page.fill("#edit-name", "front-door")
            page.click("#edit-save")
            page.wait_for_function("() => location.hash === '#/settings/camera/front-door'", timeout=20000)
            config = call(a, "GET", "/api/cameras/front-door/config")[1]
            check(config["options"].get("transport") == "tcp" and config["options"].get("url") == a.camera_url,
                  f"config after the change: {config}")
            page.wait_for_selector("#edit-enabled", timeout=10000)
            saves = "() => Number(document.querySelector('#connection').dataset.saved ?? 0)"
            page.uncheck("#edit-enabled")
            page.click("#edit-save")
            page.wait_for_function(f"() => ({saves})() === 1", timeout=10000)
            eventually("disabled", lambda: call(a, "GET", "/api/cameras/front-door/config")[1]["enabled"] is False)
            page.check("#edit-enabled")
            page.click("#edit-save")
            page.wait_for_function(f"() => ({saves})() === 2", timeout=10000)
            eventually("enabled again", lambda: call(a, "GET", "/api/cameras/front-door/config")[1]["enabled"] is True)
            print("ok: connection (option, rename, disable, enable)")

            # Recording: bad input first, then a painted schedule.
            page.wait_for_selector("#rec-mode", timeout=10000)
            page.select_option("#rec-mode", "events")
            page.fill("#rec-pre-roll", "-3")
            page.click("#rec-save")
            says(page, "#recording-error", "pre-roll")
            check(call(a, "GET", "/api/cameras/front-door/recording-settings")[1]["mode"] == "continuous", "a refused save was kept")
            page.fill("#rec-pre-roll", "4")
            page.check("#rec-use-schedule")
            page.click("#rec-save")
            says(page, "#recording-error", "paint the hours")
            page.check("input[name=brush][value=continuous]")
            page.click(".hour[data-day=mon][data-hour='8']")
            # A stroke across Monday from 09:00 to 17:00 paints every hour it passes.
            centre = "(s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }"
            x0, y0 = page.evaluate(centre, ".hour[data-day=mon][data-hour='9']")
            x1, y1 = page.evaluate(centre, ".hour[data-day=mon][data-hour='17']")
            page.mouse.move(x0, y0)
            page.mouse.down()
            page.mouse.move(x1, y1, steps=25)
            page.mouse.up()
            says(page, "#rec-schedule-text", "mon 08:00-18:00 continuous")
            page.click("#rec-save")
            rec = eventually("the recording settings saved", lambda: (lambda r: r if r["mode"] == "events" else None)(
                call(a, "GET", "/api/cameras/front-door/recording-settings")[1]))
            check(rec["schedule"] == "mon 08:00-18:00 continuous" and rec["preRollSeconds"] == 4 and
                  page.inner_text("#recording-error") == "", f"recording settings: {rec}")
            print(f"ok: recording (refusals, then events with schedule {rec['schedule']!r})")

            # What the detector sees now (events mode: it runs), over live video: the moving ball's box.
            says(page, "#motion-now", "Changed now", timeout=30000)
            page.wait_for_function("() => document.querySelector('.motion-live rect.motion-box')", timeout=30000)
            page.wait_for_function("() => { const v = document.querySelector('.motion-live video'); return v && v.currentTime > 0.5; }", timeout=20000)
            look = page.evaluate("async () => (await (await fetch('/api/cameras/front-door/motion')).json()).look")
            check(look and 0 < look["changed"] < 0.6 and look["box"] and all(0 <= v <= 1 for v in look["box"]), f"motion look: {look}")
            print(f"ok: what the detector sees, over live video: {look['changed'] * 100:.2f} % changed, box {look['box']}")

            # Motion: sensitivity and a mask drawn on the picture.
            page.fill("#motion-sensitivity", "70")
            page.click("#motion-save")
            eventually("sensitivity saved", lambda: call(a, "GET", "/api/cameras/front-door/recording-settings")[1]["motion"]["sensitivity"] == 70)
            page.wait_for_function("() => { const i = document.querySelector('#mask-picture'); return i.complete && i.naturalWidth > 0; }",
                                   timeout=20000)
            def click_picture(fx, fy):
                # Where the picture is now (scrolled into view: the page is longer than the window).
                page.locator("#mask-canvas").scroll_into_view_if_needed()
                box = page.eval_on_selector("#mask-canvas", "e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; }")
                page.mouse.click(box["x"] + fx * box["w"], box["y"] + fy * box["h"])
            for fx, fy in [(0.1, 0.1), (0.4, 0.1)]:
                click_picture(fx, fy)
            page.click("#mask-save")
            says(page, "#motion-error", "at least 3 points")
            click_picture(0.4, 0.4)
            page.click("#mask-save")
            page.wait_for_selector("#mask-list li", timeout=10000)
            masks = call(a, "GET", "/api/cameras/front-door/recording-settings")[1]["motion"]["masks"]
            check(len(masks) == 1 and len(masks[0]) == 3 and abs(masks[0][1][0] - 0.4) < 0.01, f"masks: {masks}")
            print(f"ok: motion (sensitivity, a 2-point mask refused, a mask saved: {masks[0]})")

            # Remove it with its recordings.
            page.check("#remove-delete")
            page.click("#remove-camera")
            page.wait_for_function("() => location.hash === '#/settings'", timeout=10000)
            check(call(a, "GET", "/api/cameras")[1]["cameras"] == [], "the camera is still there")
            print("ok: removed with its recordings")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "settings", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
