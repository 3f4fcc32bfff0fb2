#!/usr/bin/python3
"""A test camera: GStreamer's RTSP server with a live test pattern.

Run by the test fixtures and by hand, e.g.
  /usr/bin/python3 Tests/Support/rtsp_camera.py --port 8554 --codec h264 --audio
  ffplay rtsp://127.0.0.1:8554/stream
Prints "READY <port>" on stdout once it accepts connections.

--pattern scene draws a scripted scene instead of a test pattern, for motion detection:
a still, textured picture; a bright square crossing it during --motion A-B (seconds after
the first frame); the whole picture 40 % brighter during --light C-D. The wall-clock time of
the first frame goes to --t0-file, so a test knows when everything happened. With --object
PICTURE (and --object-crop x,y,w,h, in the picture's pixels), that part of a picture, half the
scene's height and in colour, crosses the scene from left to right instead of the square, its
top at a quarter of the height: object detection's tests know where it is at every moment
(--cross-seconds P: it crosses again every P seconds, for benchmarks).

--pattern flash shows a dark picture, then a bright one, each for --flash-period seconds, on
the same clock (--t0-file): the picture turns bright at t0 + (2k+1)·period and dark at
t0 + 2k·period, so a viewer that reads the pixels knows how late it sees each change
(bench/live measures glass-to-glass latency with it).

--backchannel FILE makes it an ONVIF camera with a speaker: GStreamer's RTSPOnvifServer and
RTSPOnvifMediaFactory, whose answer to a DESCRIBE with `Require: www.onvif.org/ver20/backchannel`
adds a sendonly audio section (--backchannel-codec pcmu, payload type 0; pcma, 8; or aac, 96:
AAC-LC at 16 kHz mono, RFC 3640 AAC-hbr); what a client sends there is appended to FILE as it
comes (G.711 raw at 8000 Hz mono; AAC as ADTS). Each SETUP and TEARDOWN a client sends is a
line ("setup", "teardown") in FILE.sessions. Each client
gets its own pipeline then (ONVIF media are not shared), all appending to the one file.
"""
import argparse
import signal
import subprocess
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtsp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtsp, GstRtspServer  # noqa: E402


def pipeline(a):
    if a.pattern in ("scene", "flash"):
        video = (f"appsrc name=scene is-live=true do-timestamp=true format=time "
                 f"caps=video/x-raw,format=I420,width={a.width},height={a.height},framerate={a.fps}/1 ! videoconvert ! ")
    else:
        video = (
            f"videotestsrc is-live=true pattern={a.pattern} ! "
            f"video/x-raw,width={a.width},height={a.height},framerate={a.fps}/1 ! "
            "timeoverlay font-desc=\"Sans 24\" ! "
        )
    gop = a.fps * a.gop_seconds
    # config-interval 0: the parameter sets go out only in the SDP, never with the key frames,
    # as with many cameras and every MP4 on a camera's card (x264 repeats them unless told not to).
    avc = "option-string=repeat-headers=0 ! video/x-h264,stream-format=avc,alignment=au ! " if a.config_interval == 0 else "! "
    # A scripted picture is coded at a constant quantizer on one thread, so every key frame of
    # a still scene decodes to the same picture. At a bit rate, x264's rate control ramps up:
    # the first key frame was a third the size of later ones and decoded differently (up to 40
    # grey levels), and a motion detector looking at key frames that took it as its background
    # saw motion in a still scene (MotionEventTests failed so once in CI).
    rate = "pass=quant quantizer=22 threads=1" if a.pattern in ("scene", "flash") else f"bitrate={a.kbps}"
    if a.codec == "h264":
        video += (f"x264enc tune=zerolatency speed-preset=ultrafast key-int-max={gop} {rate} {avc}"
                  f"rtph264pay name=pay0 pt=96 config-interval={a.config_interval}")
    else:
        video += (f"x265enc tune=zerolatency speed-preset=ultrafast key-int-max={gop} bitrate={a.kbps} ! "
                  f"rtph265pay name=pay0 pt=96 config-interval={a.config_interval}")
    # The audio formats IP cameras send: AAC as RFC 3640 (mpeg4-generic) or RFC 3016
    # (MP4A-LATM), G.711 (PCMU, PCMA) and G.726, each with GStreamer's own payloader.
    tone = " audiotestsrc is-live=true wave=sine freq=440 ! "
    audio = {
        None: "",
        "aac": tone + "audio/x-raw,rate=48000,channels=1 ! audioconvert ! avenc_aac bitrate=64000 ! rtpmp4gpay name=pay1 pt=97",
        "latm": tone + "audio/x-raw,rate=48000,channels=1 ! audioconvert ! avenc_aac bitrate=64000 ! rtpmp4apay name=pay1 pt=97",
        "pcmu": tone + "audio/x-raw,rate=8000,channels=1 ! audioconvert ! mulawenc ! rtppcmupay name=pay1",
        "pcma": tone + "audio/x-raw,rate=8000,channels=1 ! audioconvert ! alawenc ! rtppcmapay name=pay1",
        "g726": tone + "audio/x-raw,rate=8000,channels=1 ! audioconvert ! avenc_g726 bitrate=32000 ! rtpg726pay name=pay1 pt=97",
    }[a.audio]
    return "( " + video + audio + " )"


class Scene:
    """Frames of the scripted scene, pushed in real time by a thread of their own."""

    def __init__(self, a):
        self.a = a
        w, h = a.width, a.height
        # Texture: a gradient with darker and lighter blocks, all within 40..150 so a 40 %
        # brighter copy does not clip.
        y = bytearray(w * h)
        for row in range(h):
            for col in range(w):
                v = 40 + (col * 60) // w + (row * 30) // h
                if (col // 80 + row // 60) % 2 == 0:
                    v += 20
                y[row * w + col] = v
        self.still = bytes(y)
        self.bright = bytes(min(255, (v * 14) // 10) for v in y)
        self.chroma = bytes([128]) * (2 * (w // 2) * (h // 2))
        self.motion = tuple(float(x) for x in a.motion.split("-"))
        self.sprite = Scene.load_sprite(a) if a.object else None
        self.light = tuple(float(x) for x in a.light.split("-"))
        self.t0 = None
        self.lock = threading.Lock()

    @staticmethod
    def load_sprite(a):
        """The object as I420 planes (ffmpeg cuts and scales it): (width, height, y, u, v)."""
        x, y, w, h = (int(v) for v in a.object_crop.split(","))
        sh = (a.height // 2) & ~1
        sw = max(2, int(w * sh / h)) & ~1
        raw = subprocess.run(
            ["ffmpeg", "-v", "error", "-i", a.object, "-vf", f"crop={w}:{h}:{x}:{y},scale={sw}:{sh}",
             "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
        ys, cs = sw * sh, (sw // 2) * (sh // 2)
        return sw, sh, raw[:ys], raw[ys:ys + cs], raw[ys + cs:ys + 2 * cs]

    def sprite_frame(self, t, base):
        """The scene with the object where it is at t (see --object)."""
        a = self.a
        w, h = a.width, a.height
        sw, sh, sy, su, sv = self.sprite
        m0, m1 = self.motion
        period = a.cross_seconds or (m1 - m0)
        x0 = (int(((t - m0) % period) / period * (w - sw))) & ~1
        y0 = (h // 4) & ~1
        y = bytearray(base)
        for row in range(sh):
            y[(y0 + row) * w + x0:(y0 + row) * w + x0 + sw] = sy[row * sw:(row + 1) * sw]
        cw, csw = w // 2, sw // 2
        u = bytearray(self.chroma[:len(self.chroma) // 2])
        v = bytearray(self.chroma[len(self.chroma) // 2:])
        for row in range(sh // 2):
            at = (y0 // 2 + row) * cw + x0 // 2
            u[at:at + csw] = su[row * csw:(row + 1) * csw]
            v[at:at + csw] = sv[row * csw:(row + 1) * csw]
        return bytes(y) + bytes(u) + bytes(v)

    def frame(self, t):
        a = self.a
        w, h = a.width, a.height
        base = self.bright if self.light[0] <= t < self.light[1] else self.still
        m0, m1 = self.motion
        if not (m0 <= t < m1):
            return base + self.chroma
        if self.sprite:
            return self.sprite_frame(t, base)
        y = bytearray(base)
        size = h // 6
        x0 = int((t - m0) / (m1 - m0) * (w - size))
        y0 = h // 2 - size // 2
        square = bytes([235]) * size
        for row in range(y0, y0 + size):
            y[row * w + x0: row * w + x0 + size] = square
        return bytes(y) + self.chroma

    def run(self, src):
        # Every media (a URL with another query string is another media) shows the same
        # scene on the same clock: the first one's.
        with self.lock:
            if self.t0 is None:
                self.t0 = time.time()
                if self.a.t0_file:
                    with open(self.a.t0_file, "w") as f:
                        f.write(f"{self.t0:.6f}\n")
        t0 = self.t0
        n = int((time.time() - t0) * self.a.fps) + 1
        while True:
            due = t0 + n / self.a.fps
            delay = due - time.time()
            if delay > 0:
                time.sleep(delay)
            data = self.frame(n / self.a.fps)
            if src.emit("push-buffer", Gst.Buffer.new_wrapped(data)) != Gst.FlowReturn.OK:
                return
            n += 1


class Flash(Scene):
    """Dark and bright pictures in turn, --flash-period seconds each (see the module's text)."""

    def __init__(self, a):  # noqa: super's texture is not wanted here
        self.a = a
        w, h = a.width, a.height
        chroma = bytes([128]) * (2 * (w // 2) * (h // 2))
        self.frames = (bytes([16]) * (w * h) + chroma, bytes([235]) * (w * h) + chroma)
        self.t0 = None
        self.lock = threading.Lock()

    def frame(self, t):
        # A small offset: frame n's time n/fps lands exactly on a period's boundary.
        return self.frames[int(t / self.a.flash_period + 1e-6) % 2]


def main():
    # A parent's worker thread may have blocked these; we want to hear them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--address", default="127.0.0.1", help="the address to listen on")
    p.add_argument("--path", default="/stream")
    p.add_argument("--codec", choices=["h264", "h265"], default="h264")
    p.add_argument("--audio", nargs="?", const="aac", choices=["aac", "latm", "pcmu", "pcma", "g726"],
                   help="add an audio stream (AAC as mpeg4-generic when no format is given)")
    p.add_argument("--config-interval", type=int, default=-1,
                   help="parameter sets in-band: -1 with every key frame, 0 only in the SDP (as many cameras do)")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=360)
    p.add_argument("--fps", type=int, default=15)
    p.add_argument("--gop-seconds", type=int, default=1)
    p.add_argument("--kbps", type=int, default=800, help="bit rate (scene and flash use a constant quantizer)")
    p.add_argument("--pattern", default="ball", help="a videotestsrc pattern, 'scene' or 'flash'")
    p.add_argument("--motion", default="8-14", help="scene: seconds when the square moves")
    p.add_argument("--light", default="20-26", help="scene: seconds when the picture is brighter")
    p.add_argument("--object", help="scene: a picture (JPEG…) whose --object-crop crosses the scene during --motion")
    p.add_argument("--object-crop", default="0,0,64,64", help="scene: x,y,w,h of the object in --object's pixels")
    p.add_argument("--cross-seconds", type=float, default=0,
                   help="scene: the object crosses again every this many seconds during --motion (0: once)")
    p.add_argument("--t0-file", help="scene, flash: write the first frame's wall-clock time here")
    p.add_argument("--flash-period", type=float, default=1.0, help="flash: seconds of each picture")
    p.add_argument("--user", help="require this user (with --password)")
    p.add_argument("--password")
    p.add_argument("--auth", choices=["basic", "digest"], default="digest")
    p.add_argument("--backchannel", help="offer an ONVIF audio back-channel; write what it receives to this file")
    p.add_argument("--backchannel-codec", choices=["pcmu", "pcma", "aac"], default="pcmu")
    a = p.parse_args()

    Gst.init(None)
    try:  # a missing GStreamer element would otherwise show only as "503" to every client
        Gst.parse_launch(pipeline(a).strip("() "))
    except GLib.Error as e:
        print(f"ERROR cannot build the pipeline ({e.message}); scripts/install-deps.sh test installs what it needs",
              flush=True)
        sys.exit(1)
    server = GstRtspServer.RTSPOnvifServer() if a.backchannel else GstRtspServer.RTSPServer()
    server.set_address(a.address)
    server.set_service(str(a.port))
    if a.backchannel:
        factory = GstRtspServer.RTSPOnvifMediaFactory()
        if a.backchannel_codec == "aac":
            # AAC-LC, 16 kHz, mono (config 1408), RFC 3640 AAC-hbr; kept as ADTS for ffmpeg.
            caps = ("application/x-rtp, media=audio, payload=96, clock-rate=16000, encoding-name=MPEG4-GENERIC, "
                    "streamtype=(string)5, profile-level-id=(string)1, mode=(string)AAC-hbr, config=(string)1408, "
                    "sizelength=(string)13, indexlength=(string)3, indexdeltalength=(string)3")
            depay = "rtpmp4gdepay ! aacparse ! audio/mpeg,mpegversion=4,stream-format=adts"
        else:
            enc, pt = ("PCMU", 0) if a.backchannel_codec == "pcmu" else ("PCMA", 8)
            caps = f"application/x-rtp, media=audio, payload={pt}, clock-rate=8000, encoding-name={enc}"
            depay = "rtppcmudepay" if a.backchannel_codec == "pcmu" else "rtppcmadepay"
        factory.set_backchannel_launch(
            f'( capsfilter caps="{caps}" name=depay_backchannel ! {depay} '
            f'! filesink location={a.backchannel} append=true buffer-mode=unbuffered async=false )')
        factory.set_media_gtype(GstRtspServer.RTSPOnvifMedia)
        factory.set_launch(pipeline(a))
        factory.set_shared(False)
    else:
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(pipeline(a))
        factory.set_shared(True)  # one encoder for every client, as a camera has
    if a.pattern in ("scene", "flash"):
        scene = Scene(a) if a.pattern == "scene" else Flash(a)

        def configure(_factory, media):
            src = media.get_element().get_by_name("scene")
            threading.Thread(target=scene.run, args=(src,), daemon=True).start()
        factory.connect("media-configure", configure)
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
    if a.backchannel:
        # Every back-channel SETUP, and the TEARDOWN of a client that made one, a line each in
        # FILE.sessions, so a test can see that each back-channel session opened was ended
        # (clients that only watch, as a recorder does, are left out).
        talkers = set()

        def note(what):
            with open(a.backchannel + ".sessions", "a") as f:
                f.write(what + "\n")

        def setup(client, ctx):
            uri = ctx.uri.abspath if ctx and ctx.uri else ""
            if uri.endswith("stream=1"):
                talkers.add(id(client))
                note("setup")

        def teardown(client, _ctx):
            if id(client) in talkers:
                talkers.discard(id(client))
                note("teardown")

        def connected(_server, client):
            client.connect("setup-request", setup)
            client.connect("teardown-request", teardown)
        server.connect("client-connected", connected)
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
