#!/usr/bin/env python3
"""What an admin did with `nvr tls`, `nvr detect` and `nvr retention run`, from the page in a
real browser (Debian's chromium, playwright), against a running `nvr serve` holding
half-hour-old footage of --camera and a [detect] runtime:

- Settings › Server: plain HTTP is said; "Make a self-signed certificate" shows its
  fingerprint and the nvr.toml lines, and the files exist (--root is the storage root); a
  second one replaces it (a new fingerprint).
- The detector on a picture: --picture (a person) finds a person, drawn on it; a file that is
  not a JPEG is refused next to the field. The installed plugins are listed, none failing.
- Settings › Storage: --camera's continuous footage kept 0.01 days (typed in the form); the
  retention preview says what would go, "Run now" deletes it, and the camera then holds none.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  admin_tools_test.py --base URL --user U --password PW --shots DIR --camera NAME
                      --picture JPEG --root DIR --out DIR
"""

import os

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in, says


def main():
    a = arguments("--camera", "--picture", "--root", "--out")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("dialog", lambda d: d.accept())
        try:
            log_in(page, a)
            page.goto(a.base + "/#/settings")
            page.click("nav.subnav a[href='#/settings/server']")
            says(page, "#tls-status", "plain HTTP")
            page.click("#tls-make")
            says(page, "#tls-made", "fingerprint")
            first = page.inner_text("#tls-made .fingerprint")
            config = page.inner_text("#tls-config")
            cert, key = a.root + "/tls/cert.pem", a.root + "/tls/key.pem"
            check(f'tls_cert = "{cert}"' in config and f'tls_key = "{key}"' in config, f"the nvr.toml lines: {config}")
            check(os.path.exists(cert) and os.stat(key).st_mode & 0o077 == 0, "cert.pem, or an owner-only key.pem, missing")
            page.click("#tls-make")
            page.wait_for_function("(f) => document.querySelector('#tls-made .fingerprint')?.textContent !== f", arg=first, timeout=10000)
            print(f"ok: a self-signed certificate made from the page, then replaced ({first[:23]}…)")

            page.set_input_files("#detect-file", a.picture)
            page.click("#detect-run")
            says(page, "#detect-summary", "person", timeout=60000)
            check(page.locator("#detect-found .found-box").count() >= 1, "no box drawn on the picture")
            # Drawn over the person (person.jpg: x 186–275 of 640 px), not beside the picture.
            at = page.evaluate("""() => { const p = document.querySelector('#detect-found img').getBoundingClientRect();
                const b = document.querySelector('#detect-found .found-box').getBoundingClientRect();
                return [(b.left - p.left) / p.width, (b.right - p.left) / p.width, (b.top - p.top) / p.height, (b.bottom - p.top) / p.height]; }""")
            check(0.25 < at[0] < 0.33 and 0.39 < at[1] < 0.47 and 0 < at[2] < at[3] <= 1.01, f"the box is drawn at {at} of the picture")
            print(f"ok: the detector on a picture: {page.inner_text('#detect-summary')}")
            bad = os.path.join(a.out, "not-a-picture.jpg")
            with open(bad, "w") as f:
                f.write("not a picture")
            page.set_input_files("#detect-file", bad)
            page.click("#detect-run")
            says(page, "#detect-error", "JPEG")
            print(f"ok: a file that is not a picture: {page.inner_text('#detect-error')}")
            plugins = page.inner_text("#plugin-list")
            check(all(p in plugins for p in ["rtsp", "onvif", "gopro", "demo"]) and "not loaded" not in plugins,
                  f"the plugins listed: {plugins}")
            print("ok: the installed plugins are listed with what they can do")

            page.goto(a.base + "/#/settings/storage")
            field = f"#keep-continuous-{a.camera}"
            page.wait_for_selector(field, timeout=10000)
            page.fill(field, "0.01")
            page.click("#retention-save")
            page.wait_for_function("async (c) => (await (await fetch('/api/retention')).json()).cameras.find((x) => x.camera === c)?.continuousDays === 0.01",
                                   arg=a.camera, timeout=10000)
            held = "async (c) => (await (await fetch('/api/retention')).json()).cameras.find((x) => x.camera === c).segments"
            before = page.evaluate(held, a.camera)
            page.click("#retention-preview")
            says(page, "#retention-summary", "would delete")
            preview = page.inner_text("#retention-summary")
            # The server's own pass (every minute) may apply the new limit first: then there is
            # nothing left to preview, and that is what the preview must say.
            raced = page.evaluate(held, a.camera) == 0
            check(f"would delete {before} segments" in preview or (raced and "would delete 0 segments" in preview),
                  f"{before} segments held; the preview says: {preview}")
            page.click("#retention-run")
            says(page, "#retention-summary", "deleted")
            print(f"ok: retention previewed ({preview}) and run ({page.inner_text('#retention-summary')})")
            left = page.evaluate("async (c) => (await (await fetch('/api/retention')).json()).cameras.find((x) => x.camera === c)", a.camera)
            check(left and left["segments"] == 0, f"{a.camera} after the pass: {left}")
            others = page.evaluate("async (c) => (await (await fetch('/api/retention')).json()).cameras.filter((x) => x.camera !== c)", a.camera)
            check(all(o["segments"] > 0 for o in others), f"other cameras lost footage: {others}")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "admin-tools", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
