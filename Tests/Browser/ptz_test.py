#!/usr/bin/env python3
"""Pan, tilt and zoom from the page in a real browser (Debian's chromium, playwright), against
a running `nvr serve` with an ONVIF simulator camera (--camera) whose PTZ service ignores a
move's Timeout, so only the page's repeated moves and the NVR's own stops end moves. Where it
points is read from the simulator (--sim, GET /sim/ptz):

- the pad shows over the live picture;
- "Pan right" held for 1.6 s keeps the camera turning past the first move's 1 s (the page
  sends the move again while held), and letting go stops it;
- the left arrow and + keys, while the picture has focus, turn and zoom it; letting go stops;
- a preset saved from the page, then the camera moved away: its button brings it back;
- a page whose connection is lost while a button is held (its repeated moves and its stop
  never arrive): the camera stops anyway, by the NVR's own stop, within two seconds of the
  last move that arrived.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  ptz_test.py --base URL --user U --password PW --shots DIR --token T --camera NAME --sim URL
"""

import json
import time
import urllib.request

from playwright.sync_api import sync_playwright

from browser import arguments, check, eventually, fail_with_screenshot, launch, log_in


def main():
    a = arguments("--token", "--camera", "--sim")

    def sim():
        with urllib.request.urlopen(a.sim + "/sim/ptz", timeout=5) as r:
            return json.load(r)

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        try:
            log_in(page, a)
            page.goto(f"{a.base}/#/camera/{a.camera}")
            page.wait_for_selector("#ptz-pad:not([hidden])", timeout=15000)
            page.wait_for_selector("#ptz-presets .ptz-preset", timeout=10000)
            check(page.locator("#ptz-presets .ptz-preset", has_text="Home").count() == 1, "the camera's Home preset")
            page.screenshot(path=f"{a.shots}/ptz-pad.png")
            print("ok: the pad over the live picture, the camera's presets below")

            # Held: still turning at 1.4 s (past the first move's 1 s), stopped once let go.
            page.hover("#ptz-pad .ptz-right")
            page.mouse.down()
            time.sleep(1.4)
            held = sim()
            check(held["moving"] and held["pan"] > 0.2, f"while held: {held}")
            time.sleep(0.2)
            page.mouse.up()
            let_go = eventually("stopped after letting go", lambda: (lambda s: s if not s["moving"] else None)(sim()), 2)
            check(let_go["pan"] > 0.3, f"panned {let_go['pan']} in 1.6 s at 0.6 speed")
            print(f"ok: held 1.6 s it panned to {let_go['pan']} and stopped when let go")

            # Keys while the picture has focus.
            page.focus(".stage-wrap")
            page.keyboard.down("ArrowLeft")
            time.sleep(0.8)
            check(sim()["moving"], "the left arrow did not turn it")
            page.keyboard.up("ArrowLeft")
            keyed = eventually("stopped after the key", lambda: (lambda s: s if not s["moving"] else None)(sim()), 2)
            check(keyed["pan"] < let_go["pan"] - 0.1, f"left arrow: {let_go['pan']} -> {keyed['pan']}")
            page.keyboard.down("+")
            time.sleep(0.6)
            page.keyboard.up("+")
            zoomed = eventually("stopped after +", lambda: (lambda s: s if not s["moving"] else None)(sim()), 2)
            check(zoomed["zoom"] > 0.05, f"+ did not zoom: {zoomed}")
            print(f"ok: the left arrow panned to {keyed['pan']}, + zoomed to {zoomed['zoom']}")

            # A preset saved here, the camera moved away, the preset's button brings it back.
            page.fill("#ptz-preset-name", "Gate")
            page.click("#ptz-save-preset")
            page.wait_for_selector("#ptz-presets .ptz-preset:has-text('Gate')", timeout=10000)
            page.hover("#ptz-pad .ptz-up")
            page.mouse.down()
            time.sleep(0.7)
            page.mouse.up()
            away = eventually("stopped", lambda: (lambda s: s if not s["moving"] else None)(sim()), 2)
            check(away["tilt"] > zoomed["tilt"] + 0.1, f"did not tilt away: {away}")
            page.click("#ptz-presets .ptz-preset:has-text('Gate')")
            back = eventually("back at Gate", lambda: (lambda s: s if abs(s["tilt"] - zoomed["tilt"]) < 0.01 else None)(sim()), 5)
            check(abs(back["pan"] - zoomed["pan"]) < 0.01 and abs(back["zoom"] - zoomed["zoom"]) < 0.01, f"Gate: {back} vs {zoomed}")
            print("ok: a preset saved from the page brought the camera back")

            # The connection lost in the middle of a move: the repeats and the stop never arrive.
            moves = sim()["moves"]
            page.hover("#ptz-pad .ptz-down")
            page.mouse.down()
            eventually("the move arrived", lambda: sim()["moves"] > moves, 3)
            page.route("**/api/cameras/*/ptz", lambda route: route.abort())
            lost = time.monotonic()
            time.sleep(0.3)
            page.mouse.up()
            state = sim()
            check(state["moves"] == moves + 1, f"a move arrived after the connection was lost: {state}")
            eventually("stopped without the page's stop", lambda: not sim()["moving"], 2)
            print(f"ok: the page's connection lost mid-move; the camera stopped {time.monotonic() - lost:.1f} s later")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            if not page.is_closed():
                fail_with_screenshot(page, a.shots, "ptz", e)
            print(f"FAIL {e}")
            raise SystemExit(1)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
