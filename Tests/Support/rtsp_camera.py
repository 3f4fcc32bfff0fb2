#!/usr/bin/python3
"""A test camera: GStreamer's RTSP server with a live test pattern.

Run by the test fixtures and by hand, e.g.
  /usr/bin/python3 Tests/Support/rtsp_camera.py --port 8554 --codec h264 --audio
  ffplay rtsp://127.0.0.1:8554/stream
Prints "READY <port>" on stdout once it accepts connections.
"""
import argparse
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402


def pipeline(a):
    video = (
        f"videotestsrc is-live=true pattern={a.pattern} ! "
        f"video/x-raw,width={a.width},height={a.height},framerate={a.fps}/1 ! "
        "timeoverlay font-desc=\"Sans 24\" ! "
    )
    gop = a.fps * a.gop_seconds
    if a.codec == "h264":
        video += (f"x264enc tune=zerolatency speed-preset=ultrafast key-int-max={gop} bitrate={a.kbps} ! "
                  "rtph264pay name=pay0 pt=96 config-interval=-1")
    else:
        video += (f"x265enc tune=zerolatency speed-preset=ultrafast key-int-max={gop} bitrate={a.kbps} ! "
                  "rtph265pay name=pay0 pt=96 config-interval=-1")
    audio = ""
    if a.audio:
        audio = (" audiotestsrc is-live=true wave=sine freq=440 ! audio/x-raw,rate=48000,channels=1 ! "
                 "audioconvert ! avenc_aac bitrate=64000 ! rtpmp4gpay name=pay1 pt=97")
    return "( " + video + audio + " )"


def main():
    # A parent's worker thread may have blocked these; we want to hear them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--path", default="/stream")
    p.add_argument("--codec", choices=["h264", "h265"], default="h264")
    p.add_argument("--audio", action="store_true", help="add an AAC audio stream")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=360)
    p.add_argument("--fps", type=int, default=15)
    p.add_argument("--gop-seconds", type=int, default=1)
    p.add_argument("--kbps", type=int, default=800)
    p.add_argument("--pattern", default="ball")
    p.add_argument("--user", help="require this user (with --password)")
    p.add_argument("--password")
    p.add_argument("--auth", choices=["basic", "digest"], default="digest")
    a = p.parse_args()

    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(a.port))
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(pipeline(a))
    factory.set_shared(True)  # one encoder for every client, as a camera has
    if a.user:
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, "user")
        if a.auth == "digest":
            auth.set_supported_methods(GstRtsp.RTSPAuthMethod.DIGEST)
            auth.add_digest(a.user, a.password, token)
        else:
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(a.user, a.password), token)
        server.set_auth(auth)
        perms = GstRtspServer.RTSPPermissions()
        perms.add_permission_for_role("user", "media.factory.access", True)
        perms.add_permission_for_role("user", "media.factory.construct", True)
        factory.set_permissions(perms)
    server.get_mount_points().add_factory(a.path, factory)
    if server.attach(None) == 0:
        print("ERROR cannot listen", flush=True)
        sys.exit(1)
    print(f"READY {server.get_bound_port()}", flush=True)
    loop = GLib.MainLoop()
    signal.signal(signal.SIGTERM, lambda *_: loop.quit())
    signal.signal(signal.SIGINT, lambda *_: loop.quit())
    GLib.timeout_add(200, lambda: True)  # let Python see signals
    loop.run()


if __name__ == "__main__":
    main()
