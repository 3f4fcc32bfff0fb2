#!/usr/bin/env python3
"""Users, your account and storage from the page in a real browser (Debian's chromium,
playwright), against a running `nvr serve` with one camera (--camera). Everything is done by
filling the page's forms and checked through the API (--token, a token of the admin):

- Account: a wrong current password and a repetition that differs are refused next to the
  form; the right one changes it (the API logs in with the new one); a token is shown once and
  works, then is revoked; this browser's login is listed.
- Users: a viewer with one camera (ticked) is added (a bad name refused next to the form), made an
  admin, and removed; the audit log filtered by action shows those changes only.
- Storage: a size that is not one is refused, nothing saved; a cap, a free-space margin and
  a camera's limits are saved; the integrity check says index and files agree.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  access_test.py --base URL --user U --password PW --shots DIR --token T --camera NAME
"""

from playwright.sync_api import sync_playwright

from browser import arguments, call, check, eventually, fail_with_screenshot, launch, log_in, says


def main():
    a = arguments("--token", "--camera")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.on("dialog", lambda d: d.accept())
        try:
            log_in(page, a)
            # Account.
            page.click("#who")
            page.wait_for_selector("#password-current", timeout=10000)
            page.fill("#password-current", "not it")
            page.fill("#password-new", "a new horse battery")
            page.fill("#password-again", "a new horse battery")
            page.click("#password-save")
            says(page, "#password-error", "password")
            page.fill("#password-current", a.password)
            page.fill("#password-again", "something else")
            page.click("#password-save")
            says(page, "#password-error", "differ")
            page.fill("#password-again", "a new horse battery")
            page.click("#password-save")
            page.wait_for_function("() => document.querySelector('#password-current').value === ''", timeout=10000)
            status, _ = call(a, "POST", "/api/login", {"user": a.user, "password": "a new horse battery"})
            check(status == 200, f"logging in with the new password: {status}")
            page.wait_for_selector("#session-list li", timeout=10000)
            check("this browser" in page.inner_text("#session-list"), "this browser's login is not listed")
            page.fill("#token-name", "script")
            page.click("#token-add")
            page.wait_for_selector("#token-value", timeout=10000)
            token = page.inner_text("#token-value").strip()
            status, who = call(a, "GET", "/api/session", token=token)
            check(status == 200 and who["user"] == a.user, f"the new token: {status} {who}")
            page.click("li[data-token='script'] button")
            page.wait_for_function("() => !document.querySelector(\"li[data-token='script']\")", timeout=10000)
            check(call(a, "GET", "/api/session", token=token)[0] == 401, "a revoked token still works")
            print("ok: account (password refusals and change, a token shown once, works, revoked; logins)")

            # Users.
            page.goto(a.base + "/#/settings/users")
            page.wait_for_selector("#user-name", timeout=10000)
            page.fill("#user-name", "no such name!")
            page.fill("#user-password", "a long enough password")
            page.click("#user-add-submit")
            says(page, "#user-add-error", "name")
            page.fill("#user-name", "kid")
            page.select_option("#user-role", "viewer")
            page.check(f"#user-cameras input[value='{a.camera}']")
            page.check("#user-ptz")
            page.check("#user-talk")
            page.click("#user-add-submit")
            page.wait_for_selector("li[data-user='kid']", timeout=10000)
            kid = [u for u in call(a, "GET", "/api/users")[1]["users"] if u["name"] == "kid"]
            check(kid and kid[0]["role"] == "viewer" and kid[0]["cameras"] == [a.camera] and kid[0]["ptz"]
                  and kid[0]["talk"], f"kid: {kid}")
            # The PTZ right taken away in the row, and saved.
            page.uncheck("li[data-user='kid'] input[aria-label='kid may turn and zoom cameras']")
            page.click("li[data-user='kid'] button:text('Save')")
            eventually("kid's PTZ right taken away", lambda: [u for u in call(a, "GET", "/api/users")[1]["users"]
                                                            if u["name"] == "kid" and u["ptz"] is False
                                                            and u["talk"] is True])
            page.reload()  # the list is drawn again after a save: change the row drawn now
            page.wait_for_selector("li[data-user='kid']", timeout=10000)
            page.select_option("li[data-user='kid'] select", "admin")
            page.click("li[data-user='kid'] button:text('Save')")
            kid = eventually("kid made an admin", lambda: [u for u in call(a, "GET", "/api/users")[1]["users"]
                                                           if u["name"] == "kid" and u["role"] == "admin"])
            check(kid and kid[0]["role"] == "admin", f"kid after the change: {kid}")
            page.click("li[data-user='kid'] button.danger")
            page.wait_for_function("() => !document.querySelector(\"li[data-user='kid']\")", timeout=10000)
            check(all(u["name"] != "kid" for u in call(a, "GET", "/api/users")[1]["users"]), "kid is still there")
            page.reload()
            page.wait_for_selector("#audit tr[data-action]", timeout=10000)
            everything = page.eval_on_selector_all("#audit tr[data-action]", "rs => rs.map((r) => r.dataset.action)")
            page.fill("#audit-action", "user.")
            actions = page.eval_on_selector_all("#audit tr[data-action]", "rs => rs.map((r) => r.dataset.action)")
            check({"user.add", "user.update", "user.remove", "user.password"} <= set(actions)
                  and all(x.startswith("user.") for x in actions) and any(not x.startswith("user.") for x in everything),
                  f"audit filtered by 'user.': {actions} of {everything}")
            print(f"ok: users (refused name, viewer added with PTZ and talk, PTZ taken away, made admin, removed; audit: {actions})")

            # Storage.
            page.goto(a.base + "/#/settings/storage")
            page.wait_for_selector("#storage-cap", timeout=10000)
            check("free of" in page.inner_text("#storage-summary"), page.inner_text("#storage-summary"))
            page.fill("#storage-cap", "lots")
            page.click("#retention-save")
            says(page, "#retention-error", "Not saved")
            check(call(a, "GET", "/api/retention")[1]["storage"].get("maxBytes") is None, "a refused cap was saved")
            page.fill("#storage-cap", "50")
            page.fill("#storage-min-free", "5")
            page.fill(f"#keep-continuous-{a.camera}", "7")
            page.fill(f"#keep-max-{a.camera}", "2.5")
            page.click("#retention-save")
            r = eventually("the limits saved", lambda: (lambda r: r if r["storage"].get("maxBytes") else None)(
                call(a, "GET", "/api/retention")[1]))
            cam = [c for c in r["cameras"] if c["camera"] == a.camera][0]
            check(r["storage"]["maxBytes"] == 50_000_000_000 and r["storage"]["minFreePercent"] == 5
                  and cam["continuousDays"] == 7 and cam["maxBytes"] == 2_500_000_000 and cam.get("eventDays") is None,
                  f"retention: {r}")
            page.click("#check-run")
            page.wait_for_selector("#check-ok", timeout=30000)
            print("ok: storage (refused size, limits saved, integrity check clean)")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "access", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
