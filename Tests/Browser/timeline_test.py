#!/usr/bin/env python3
"""A camera's day bar in a real browser (Debian's chromium, playwright). The NVR holds a short
recording of --camera at --start…--end (a couple of minutes of a day) and a "person" event at
--event. Opens the camera on that day and checks: the recording is drawn at least 3 pixels
wide on the whole day's bar; the wheel zooms to an hour and then ten minutes around the
pointer; a click at ten minutes plays the moment under the pointer; the event's mark says its
label; "24 h" goes back to the whole day; a two-finger pinch and + and - zoom too; a range kept
with a note is listed under Settings › Storage and released from there; the event and then
the range are deleted from the camera view. Exits non-zero on the first thing that is wrong,
leaving a screenshot in --shots.

  timeline_test.py --base URL --user U --password PW --shots DIR --camera NAME
                   --start TICKS --end TICKS --event TICKS
"""
import time

from playwright.sync_api import sync_playwright

from browser import arguments, check, fail_with_screenshot, launch, log_in

SPAN = """() => { const r = document.querySelector('.timeline .span.disk').getBoundingClientRect();
  return {left: r.left, width: r.width, mid: r.left + r.width / 2, y: r.top + r.height / 2}; }"""
LEVEL = "() => document.querySelector('.timeline-zoom button[aria-pressed=true]')?.textContent"


def wait_level(page, name):
    page.wait_for_function(f"() => ({LEVEL})() === {name!r}", timeout=5000)


def visible(page, start, end):
    """Seconds of [start, end) inside the bar's zoomed window."""
    vs, ve = page.evaluate("() => { const s = document.querySelector('.timeline').dataset; return [Number(s.viewStart), Number(s.viewEnd)]; }")
    return max(0, min(end, ve) - max(start, vs)) / 90000


def main():
    a = arguments("--camera", "--start", "--end", "--event")
    start, end, event = int(a.start), int(a.end), int(a.event)
    seconds = (end - start) / 90000
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, has_touch=True)
        try:
            log_in(page, a)
            day = page.evaluate("async (t) => (await import('/app/time.js')).dayString(new Date(t / 90))", start)
            page.goto(f"{a.base}/#/camera/{a.camera}?day={day}")
            page.wait_for_selector(".timeline .span.disk", timeout=15000)
            check(page.evaluate(LEVEL) == "24 h", "the bar does not start on the whole day")
            bar = page.evaluate("() => document.querySelector('.timeline').getBoundingClientRect().width")
            span = page.evaluate(SPAN)
            natural = seconds / 86400 * bar
            check(span["width"] >= 3, f"a {seconds:.0f}-s recording is {span['width']:.1f} px wide on the day's bar")
            print(f"ok: {seconds:.0f} s on the day's bar: {span['width']:.1f} px (its share would be {natural:.1f} px)")

            # The wheel over the recording zooms in around it, one level per turn.
            page.mouse.move(span["mid"], span["y"])
            page.mouse.wheel(0, -120)
            wait_level(page, "1 h")
            hour = page.evaluate(SPAN)
            check(abs(hour["width"] - visible(page, start, end) / 3600 * bar) < 3, f"at 1 h the recording is {hour['width']:.1f} px")
            check(hour["left"] <= span["mid"] + 2 and span["mid"] - 2 <= hour["left"] + hour["width"],
                  "zooming moved the recording from under the pointer")
            time.sleep(0.4)
            page.mouse.move(hour["mid"], hour["y"])
            page.mouse.wheel(0, -120)
            wait_level(page, "10 min")
            ten = page.evaluate(SPAN)
            # Zooming keeps the time under the pointer where it is: late in the day (the
            # pointer far right) part of the recording may lie past the window's end.
            shown = visible(page, start, end)
            check(shown >= min(seconds, 60) and abs(ten["width"] - shown / 600 * bar) < 3,
                  f"at 10 min the recording is {ten['width']:.1f} px ({shown:.0f} s of it in the window)")
            print(f"ok: the wheel zooms to 1 h ({hour['width']:.0f} px) and 10 min ({ten['width']:.0f} px)")

            # The event's mark carries its label.
            mark = page.evaluate("""() => { const m = document.querySelector('.timeline .mark');
                return m && {label: m.dataset.label, alert: m.classList.contains('alert'), title: m.textContent,
                             start: Number(m.dataset.start)}; }""")
            check(mark and mark["label"] == "person" and mark["alert"] and "person" in mark["title"]
                  and mark["start"] == event, f"event mark: {mark}")

            # A click at ten minutes plays the moment under the pointer.
            x = ten["left"] + ten["width"] / 3
            under = page.evaluate("""(x) => { const s = document.querySelector('.timeline'); const r = s.getBoundingClientRect();
                const v0 = Number(s.dataset.viewStart), v1 = Number(s.dataset.viewEnd); return v0 + (x - r.left) / r.width * (v1 - v0); }""", x)
            page.mouse.click(x, ten["y"])
            page.wait_for_function("() => document.querySelector('.where').textContent.startsWith('Recorded')", timeout=10000)
            time.sleep(1)
            shown = page.evaluate("""() => { const s = document.querySelector('.timeline'); const c = s.querySelector('#cursor');
                const v0 = Number(s.dataset.viewStart), v1 = Number(s.dataset.viewEnd); return v0 + Number(c.getAttribute('x1')) / 1000 * (v1 - v0); }""")
            check(abs(shown - under) < 4 * 90000, f"playing {(shown - under) / 90000:.1f} s away from the click")
            print(f"ok: a click at 10 min plays the moment under it ({(shown - under) / 90000:+.1f} s)")

            page.click(".timeline-zoom button[data-level='0']")
            wait_level(page, "24 h")
            check(abs(page.evaluate(SPAN)["width"] - span["width"]) < 1, "24 h is not the whole day again")

            # Two fingers spread on the bar zoom in, pinched together zoom out (touch events as
            # a phone sends them, through the DevTools protocol); + and - do the same from the keyboard.
            cdp = page.context.new_cdp_session(page)
            box = page.evaluate("() => { const r = document.querySelector('.timeline').getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }")

            def pinch(start_gap, end_gap):
                points = lambda gap: [{"x": box["x"] - gap / 2, "y": box["y"], "id": 0}, {"x": box["x"] + gap / 2, "y": box["y"], "id": 1}]
                cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": points(start_gap)})
                for k in range(1, 11):
                    cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": points(start_gap + (end_gap - start_gap) * k / 10)})
                    time.sleep(0.02)
                cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

            pinch(60, 100)  # one level: a wider spread goes on to the next
            wait_level(page, "1 h")
            page.focus(".timeline")
            page.keyboard.press("+")
            wait_level(page, "10 min")
            page.keyboard.press("-")
            wait_level(page, "1 h")
            pinch(100, 60)
            wait_level(page, "24 h")
            print("ok: a pinch zooms in and out, and so do + and -")

            # Keep a range with a note: listed under Settings › Storage, and no longer kept from there.
            page.on("dialog", lambda d: d.accept())
            local = "async (t) => (await import('/app/time.js')).localInput(t)"
            for sel, t in [(".download input[aria-label=From]", start + 10 * 90000), (".download input[aria-label=To]", start + 40 * 90000)]:
                page.fill(sel, page.evaluate(local, t))
                page.dispatch_event(sel, "change")
            page.fill("#keep-note", "the parcel")
            page.click("#keep-range")
            page.wait_for_function("async () => (await (await fetch('/api/clips')).json()).clips.length === 1", timeout=10000)
            clip = page.evaluate("async () => (await (await fetch('/api/clips')).json()).clips[0]")
            check(clip["note"] == "the parcel" and abs(clip["start90k"] - (start + 10 * 90000)) <= 90000, f"kept clip: {clip}")
            page.goto(a.base + "/#/settings/storage")
            page.wait_for_selector(f"li[data-clip='{clip['id']}']", timeout=10000)
            check("the parcel" in page.inner_text(f"li[data-clip='{clip['id']}']"), "the note is not listed")
            page.click(f"li[data-clip='{clip['id']}'] button")
            page.wait_for_function("async () => (await (await fetch('/api/clips')).json()).clips.length === 0", timeout=10000)
            print("ok: a range kept with a note from the camera view, listed and released under Storage")

            # An admin deletes the event from its list, then the recording's range: both are gone
            # from the day, and nothing else was asked for.
            found = page.evaluate(f"async () => (await (await fetch('/api/events?camera={a.camera}&start={event - 90000}&end={event + 90000}')).json()).events")
            check(len(found) == 1, f"events at the mark: {found}")
            mark["id"] = found[0]["id"]
            page.goto(f"{a.base}/#/camera/{a.camera}?day={day}")
            page.wait_for_selector(f".event-list li[data-event-item='{mark['id']}'] .delete-event", timeout=10000)
            page.click(f".event-list li[data-event-item='{mark['id']}'] .delete-event")
            page.wait_for_function("(id) => !document.querySelector(`.event-list li[data-event-item='${id}']`)", arg=mark["id"], timeout=10000)
            gone = page.evaluate(f"async () => (await fetch('/api/events/{mark['id']}')).status")
            check(gone == 404, f"the deleted event answers {gone}")
            for sel, t in [(".download input[aria-label=From]", start - 60 * 90000), (".download input[aria-label=To]", end + 60 * 90000)]:
                page.fill(sel, page.evaluate(local, t))
                page.dispatch_event(sel, "change")
            page.click("#delete-range")
            page.wait_for_function("() => !document.querySelector('.timeline .span.disk')", timeout=10000)
            left = page.evaluate(f"async () => {{ const r = await fetch('/api/cameras/{a.camera}/recordings?start={start - 60 * 90000}&end={end + 60 * 90000}'); return [r.status, await r.json()]; }}")
            check(left[0] == 200 and left[1].get("recordings") == [], f"recordings left after the delete: {str(left)[:300]}")
            print("ok: an event and then the range deleted from the camera view")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "timeline", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
