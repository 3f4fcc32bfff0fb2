"""What the page's browser tests share: Debian's chromium through playwright, the arguments
every test takes, logging in, a check that stops a test with what was wrong, and the
screenshot a failed test leaves."""
import argparse
import json
import sys
import time
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"


def arguments(*extra):
    """--base, --user, --password, --shots, and `extra` (names of more required options)."""
    ap = argparse.ArgumentParser()
    for name in ("--base", "--user", "--password", "--shots", *extra):
        ap.add_argument(name, required=True)
    return ap.parse_args()


def launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])


def log_in(page, a):
    """Opens the page and logs in; returns once the top bar's links show."""
    page.goto(a.base + "/")
    page.wait_for_selector("#user", timeout=10000)
    page.fill("#user", a.user)
    page.fill("#password", a.password)
    page.click("button[type=submit]")
    page.wait_for_selector("#nav:not([hidden])", timeout=10000)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def fail_with_screenshot(page, shots, name, error):
    """Saves the page as SHOTS/NAME-failure.png, says why, and ends the test with status 1."""
    path = f"{shots}/{name}-failure.png"
    page.screenshot(path=path, full_page=True)
    print(f"FAIL {error}; screenshot: {path}")
    sys.exit(1)


def says(page, selector, words, timeout=20000):
    """Waits until the element at `selector` says `words`; fails with what it says instead."""
    try:
        page.wait_for_function("([s, w]) => (document.querySelector(s)?.textContent ?? '').includes(w)",
                               arg=[selector, words], timeout=timeout)
    except Exception:  # noqa: BLE001 — say what was there instead
        shown = page.evaluate("(s) => document.querySelector(s)?.textContent", selector)
        raise AssertionError(f"{selector} does not say {words!r}: {shown!r}") from None


def eventually(what, cond, seconds=15):
    """Waits until `cond()` holds (the server applies a saved form within moments); returns it."""
    deadline = time.monotonic() + seconds
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.2)


def call(a, method, path, body=None, token=None):
    """The API with a token (--token unless `token`): (status, JSON answer or None)."""
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(a.base + path, data=data, method=method,
                               headers={"Authorization": f"Bearer {token or a.token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=20) as f:
            return f.status, json.loads(f.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
