#!/usr/bin/env python3
"""Checks Tests/Support/onvif_camera.py with independent clients from PyPI: onvif-zeep (the
ONVIF WSDLs through zeep, its own WS-Security digest) and WSDiscovery, so the simulator and
the NVR's plugin are not merely agreeing with each other. Run with .build/test-venv's python:

  onvif_client_check.py --port 8000 --user admin --password secret --clock-offset 3600
  onvif_client_check.py --discover 10.77.0.2:8000   (inside a network namespace whose
                                                      non-loopback link reaches the camera)
Exits 0 and prints OK when every check passed; otherwise says which failed.
"""
import argparse
import os
import sys
import threading
import time
import urllib.request


def fail(msg):
    print("FAILED:", msg, flush=True)
    sys.exit(1)


def check_camera(a):
    import onvif
    from onvif import ONVIFCamera
    from onvif.client import ONVIFService
    wsdl = os.path.join(sys.prefix, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages", "wsdl")
    if not os.path.isdir(wsdl):
        wsdl = os.path.join(os.path.dirname(os.path.dirname(onvif.__file__)), "wsdl")
    cam = ONVIFCamera(a.host, a.port, a.user, a.password, wsdl, adjust_time=True)
    offset = cam.dt_diff.total_seconds() if cam.dt_diff is not None else 0
    if abs(offset - a.clock_offset) > 5:
        fail(f"camera clock offset {offset} s, expected {a.clock_offset}")
    info = cam.devicemgmt.GetDeviceInformation()
    if not info.Model:
        fail("no model")
    media = cam.create_media_service()
    profiles = media.GetProfiles()
    if not profiles:
        fail("no profiles")
    for p in profiles:
        req = media.create_type("GetStreamUri")
        req.ProfileToken = p.token
        req.StreamSetup = {"Stream": "RTP-Unicast", "Transport": {"Protocol": "RTSP"}}
        uri = media.GetStreamUri(req).Uri
        if not uri.startswith("rtsp://"):
            fail(f"profile {p.token}: stream URI {uri}")
        print(f"profile {p.token} {p.VideoEncoderConfiguration.Resolution.Width}x{p.VideoEncoderConfiguration.Resolution.Height} {uri}")
    # Events: the initial state, then a motion report within a long poll.
    pp = cam.create_pullpoint_service()
    first = pp.PullMessages({"Timeout": "PT1S", "MessageLimit": 10})
    if len(first.NotificationMessage) != 1:
        fail(f"{len(first.NotificationMessage)} initial messages")

    def report():
        time.sleep(0.5)
        urllib.request.urlopen(urllib.request.Request(f"http://{a.host}:{a.port}/sim/motion", data=b"true", method="POST")).read()
    threading.Thread(target=report).start()
    began = time.time()
    r = pp.PullMessages({"Timeout": "PT5S", "MessageLimit": 10})
    if len(r.NotificationMessage) != 1 or time.time() - began > 3:
        fail(f"motion: {len(r.NotificationMessage)} messages after {time.time() - began:.1f} s")
    from lxml import etree
    msg = etree.tostring(r.NotificationMessage[0].Message._value_1).decode()
    if 'Name="IsMotion" Value="true"' not in msg:
        fail(f"motion message: {msg[:300]}")
    addr = cam.xaddrs["http://www.onvif.org/ver10/events/wsdl/PullPointSubscription"]
    manager = ONVIFService(addr, a.user, a.password, os.path.join(wsdl, "events.wsdl"), dt_diff=cam.dt_diff,
                           binding_name="{http://www.onvif.org/ver10/events/wsdl}SubscriptionManagerBinding")
    manager.Renew({"TerminationTime": "PT120S"})
    manager.Unsubscribe()
    try:
        pp.PullMessages({"Timeout": "PT1S", "MessageLimit": 10})
        fail("a pull after Unsubscribe was answered")
    except SystemExit:
        raise
    except Exception:
        pass
    # A wrong password, and (with the clock off) a token on the client's own clock, are refused.
    for user, password, adjust, what in [(a.user, a.password + "x", True, "wrong password"),
                                         (a.user, a.password, False, "unadjusted clock")]:
        if what == "unadjusted clock" and abs(a.clock_offset) < 600:
            continue
        try:
            ONVIFCamera(a.host, a.port, user, password, wsdl, adjust_time=adjust)
            fail(f"{what} accepted")
        except SystemExit:
            raise
        except Exception as e:
            if "NotAuthorized" not in str(e) and "not Authorized" not in str(e):
                fail(f"{what}: {e}")
    print("OK camera", info.Manufacturer, info.Model, info.FirmwareVersion, flush=True)
    if a.ptz:
        check_ptz(a, cam, profiles)


def check_ptz(a, cam, profiles):
    """The PTZ service (ver20/ptz/wsdl) through onvif-zeep: the main profile's configuration,
    a continuous move that the camera ends at its Timeout, Stop, presets set and gone to, and
    an absolute zoom; the position read with GetStatus and from /sim/ptz."""
    def sim():
        import json
        with urllib.request.urlopen(f"http://{a.host}:{a.port}/sim/ptz") as r:
            return json.load(r)
    ptz = cam.create_ptz_service()
    token = next((p.token for p in profiles if p.PTZConfiguration is not None), None)
    if token is None:
        fail("no profile has a PTZConfiguration")
    conf = ptz.GetConfigurations()
    if not conf or not conf[0].DefaultContinuousPanTiltVelocitySpace:
        fail(f"GetConfigurations: {conf}")
    home = ptz.GetStatus({"ProfileToken": token}).Position
    ptz.ContinuousMove({"ProfileToken": token, "Velocity": {"PanTilt": {"x": 1.0, "y": 0.0}}, "Timeout": "PT0.4S"})
    time.sleep(0.8)
    moved = ptz.GetStatus({"ProfileToken": token})
    ignores = a.ptz == "ignores-timeout"
    if not moved.Position.PanTilt.x > home.PanTilt.x + 0.1:
        fail(f"ContinuousMove did not pan: {home.PanTilt.x} -> {moved.Position.PanTilt.x}")
    if sim()["moving"] != ignores:
        fail(f"after the Timeout the camera is {'moving' if sim()['moving'] else 'still'}")
    if sim()["last_timeout"] != 0.4:
        fail(f"the Timeout sent was not read: {sim()}")
    ptz.Stop({"ProfileToken": token, "PanTilt": True, "Zoom": True})
    state = sim()  # where it stopped (a camera that ignores the Timeout turned until Stop)
    if state["moving"]:
        fail("still moving after Stop")
    # Not more than the Timeout's worth of movement (0.5 units/s) unless the camera ignores it.
    if not ignores and not 0.15 <= state["pan"] - home.PanTilt.x <= 0.25:
        fail(f"panned {state['pan'] - home.PanTilt.x} in a 0.4 s move")
    saved = ptz.SetPreset({"ProfileToken": token, "PresetName": "Gate"})
    ptz.AbsoluteMove({"ProfileToken": token, "Position": {"PanTilt": {"x": -0.5, "y": 0.5}, "Zoom": {"x": 0.7}}})
    if abs(sim()["zoom"] - 0.7) > 1e-3:
        fail(f"AbsoluteMove: {sim()}")
    names = {p.Name: p.token for p in ptz.GetPresets({"ProfileToken": token})}
    if names.get("Gate") != saved:
        fail(f"GetPresets: {names}, SetPreset gave {saved}")
    ptz.GotoPreset({"ProfileToken": token, "PresetToken": saved})
    back = sim()
    if abs(back["pan"] - state["pan"]) > 0.02 or abs(back["zoom"]) > 1e-3:
        fail(f"GotoPreset: {back}, saved at {state}")
    try:
        ptz.ContinuousMove({"ProfileToken": token, "Velocity": {"PanTilt": {"x": 3.0, "y": 0.0}}})
        fail("a speed of 3 was accepted")
    except SystemExit:
        raise
    except Exception as e:
        if "range" not in str(e):
            fail(f"out-of-range speed: {e}")
    print("OK ptz", flush=True)


def check_discovery(a):
    from wsdiscovery import QName
    from wsdiscovery.discovery import ThreadedWSDiscovery
    wsd = ThreadedWSDiscovery()
    wsd.start()
    try:
        found = wsd.searchServices(types=[QName("http://www.onvif.org/ver10/network/wsdl", "NetworkVideoTransmitter")], timeout=3)
    finally:
        wsd.stop()
    want = f"http://{a.discover}/onvif/device_service"
    xaddrs = [x for s in found for x in s.getXAddrs()]
    if want not in xaddrs:
        fail(f"discovery found {xaddrs}, not {want}")
    print("OK discovery", want, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--user", default="admin")
    p.add_argument("--password", default="admin")
    p.add_argument("--clock-offset", type=float, default=0)
    p.add_argument("--discover", help="host:port the WS-Discovery answer must name")
    p.add_argument("--ptz", choices=["timeout", "ignores-timeout"],
                   help="check the PTZ service too (the camera honours Timeouts, or ignores them)")
    a = p.parse_args()
    if a.port:
        check_camera(a)
    if a.discover:
        check_discovery(a)
    print("OK", flush=True)


if __name__ == "__main__":
    main()
