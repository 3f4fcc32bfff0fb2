"""What the page's browser tests share: Debian's chromium through playwright, the arguments
every test takes, logging in, and a check that stops a test with what was wrong."""
import argparse

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
