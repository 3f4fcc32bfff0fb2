#!/usr/bin/env python3
"""Talking through a camera from the page in a real browser (Debian's chromium, playwright)
with a fake microphone playing --tone (a WAV file), against a running `nvr serve` whose camera
(--camera) has an ONVIF audio back-channel (GStreamer's RTSPOnvifMediaFactory, writing what it
hears to a file the calling test then checks for the tone):

- "Hold to talk" is offered (the camera answered that it takes PCMU);
- held for --seconds: the page connects, is told "ready", and sends the microphone;
- meanwhile a second talker (another WebSocket) is told "busy";
- let go: the socket closes and the camera is free again (the plain GET is not "busy");
- a talker whose microphone sends what the NVR cannot convert is refused in one line;
- a talker sending much faster than real time is stopped.

Exits non-zero on the first thing that is wrong, leaving a screenshot in --shots.

  talk_test.py --base URL --user U --password PW --shots DIR --token T --camera NAME --tone WAV --seconds S
"""

import time

from playwright.sync_api import sync_playwright

from browser import CHROMIUM, arguments, call, check, eventually, fail_with_screenshot, log_in

SOCKET = """async ([name, first]) => new Promise((done) => {
  const ws = new WebSocket(`ws://${location.host}/api/cameras/${encodeURIComponent(name)}/talk`);
  const said = [];
  ws.onopen = () => ws.send(first);
  ws.onmessage = (m) => said.push(JSON.parse(m.data));
  ws.onclose = () => done(said);
  setTimeout(() => { ws.close(); done(said); }, 8000);
})"""


FLOOD = """async (name) => new Promise((done) => {
  const ws = new WebSocket(`ws://${location.host}/api/cameras/${encodeURIComponent(name)}/talk`);
  const said = [];
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => ws.send('{"format":"s16le","rate":48000,"channels":1}');
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    said.push(msg);
    if (msg.type === 'ready') for (let i = 0; i < 40; i++) ws.send(new ArrayBuffer(24000));  // 10 s at once
  };
  ws.onclose = () => done(said);
  setTimeout(() => { ws.close(); done(said); }, 8000);
})"""


def main():
    a = arguments("--token", "--camera", "--tone", "--seconds")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={a.tone}"])
        context = browser.new_context(viewport={"width": 1280, "height": 900}, permissions=["microphone"])
        page = context.new_page()
        try:
            log_in(page, a)
            page.goto(f"{a.base}/#/camera/{a.camera}")
            page.wait_for_selector("#talk:not([hidden])", timeout=15000)
            check(page.get_attribute("#talk", "data-codec") == "PCMU", "the camera's codec is not said")
            print("ok: Hold to talk is offered (the camera takes PCMU)")

            page.hover("#talk")
            page.mouse.down()
            page.wait_for_function("() => document.querySelector('#talk').textContent.includes('Talking')", timeout=10000)
            began = time.monotonic()
            # A second talker meanwhile.
            second = page.evaluate(SOCKET, [a.camera, '{"format":"s16le","rate":48000,"channels":1}'])
            check(second and second[-1].get("error") == "busy", f"a second talker: {second}")
            asked, _ = call(a, "GET", f"/api/cameras/{a.camera}/talk")
            check(asked == 409, f"the plain GET while someone talks: {asked}")
            time.sleep(max(0.0, float(a.seconds) - (time.monotonic() - began)))
            page.screenshot(path=f"{a.shots}/talk-held.png")
            page.mouse.up()
            page.wait_for_function("() => document.querySelector('#talk').textContent.includes('Hold to talk')", timeout=5000)
            print(f"ok: held {time.monotonic() - began:.1f} s talking; a second talker was told busy")

            status, probe = eventually("the camera free again", lambda: (lambda r: r if r[0] == 200 else None)(
                call(a, "GET", f"/api/cameras/{a.camera}/talk")), 5)
            check(probe["codec"] == "PCMU", f"probe: {probe}")
            refused = page.evaluate(SOCKET, [a.camera, '{"format":"mp3","rate":44100,"channels":1}'])
            check(refused and refused[-1].get("error") == "bad_format" and "mp3" in refused[-1].get("message", ""),
                  f"an mp3 microphone: {refused}")
            print(f"ok: let go, the camera is free; an mp3 microphone is refused: {refused[-1]['message']}")
            flood = eventually("a flood answered", lambda: page.evaluate(FLOOD, a.camera), 20)
            check(flood[-1].get("error") == "camera_failed" and "faster than real time" in flood[-1].get("message", ""),
                  f"10 s of audio at once: {flood}")
            print(f"ok: 10 s of audio sent at once is stopped: {flood[-1]['message']}")
        except Exception as e:  # noqa: BLE001 — any failure: screenshot, then exit 1
            fail_with_screenshot(page, a.shots, "talk", e)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
