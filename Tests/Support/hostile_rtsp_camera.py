#!/usr/bin/env python3
"""A hostile RTSP camera: answers the NVR's RTSP client the way broken or malicious cameras
do, one misbehaviour per process (--mode). Used by HostileCameraTests beside a good GStreamer
camera in one `nvr serve`; runnable by hand:

  ffmpeg -f lavfi -i testsrc2=size=320x240:rate=15 -t 4 -c:v libx264 -g 15 -x264-params aud=1 \\
         -bsf:v h264_mp4toannexb -f h264 /tmp/clip.h264
  python3 Tests/Support/hostile_rtsp_camera.py --mode endless-au --h264 /tmp/clip.h264 --port 8600
  nvr camera add bad --plugin rtsp --url rtsp://127.0.0.1:8600/stream

Prints "READY <port>" once it accepts connections. Video, where a mode sends any, is the
--h264 clip (Annex B with access unit delimiters) sent over interleaved RTP at 15 fps, looped
with timestamps that keep going up. Only the standard library: no GStreamer here.
"""
import argparse
import base64
import os
import socket
import struct
import sys
import threading
import time

MODES = {
    # Setup quirks after which a client must still record.
    "good": "a well-behaved camera (control)",
    "session-timeout-empty": "Session: id;timeout= (nothing after the =)",
    "session-timeout-huge": "Session: id;timeout=1e300",
    "session-timeout-negative": "Session: id;timeout=-5",
    "clock-rate-zero": "SDP a=rtpmap:96 H264/0",
    "clock-rate-huge": "SDP a=rtpmap:96 H264/4294967296",
    "sps-huge-width": "sprop-parameter-sets whose SPS says the picture is 2^32 pixels wide (the stream's own SPS is fine)",
    "sps-poc-cycle": "sprop SPS with pic_order_cnt_type 1 and 2^32-2 cycle entries",
    "bad-sprop": "sprop-parameter-sets that are not parameter sets (valid ones come in-band)",
    "sizelength-negative": "AAC audio with sizelength=-3 (video is fine)",
    "sizelength-huge": "AAC audio with sizelength=63 (video is fine)",
    "midstream-negative-length": "records, then sends an RTSP answer with Content-Length: -3",
    "ts-jump": "records for 3 s, then each RTP timestamp is 2^31 (half the clock's range) away from the one before: the high bit flips every frame",
    # Cameras a client must give up on with a reason.
    "negative-length": "DESCRIBE answer with Content-Length: -5",
    "huge-length": "DESCRIBE answer with Content-Length: 99999999999",
    "slow-describe": "DESCRIBE answered one byte a second",
    "garbage": "random bytes instead of answers",
    "broken-rtp": "every RTP packet malformed (version 0, truncated)",
    "endless-au": "one access unit that never ends (FU-A start, then middle fragments forever)",
}

SESSION = "4711"


def bits_writer():
    out = []

    def put(value, n):
        for i in range(n - 1, -1, -1):
            out.append((value >> i) & 1)

    def ue(v):
        v += 1
        n = v.bit_length()
        put(0, n - 1)
        put(v, n)

    def se(v):
        ue(2 * v - 1 if v > 0 else -2 * v)

    def finish():
        out.append(1)
        while len(out) % 8:
            out.append(0)
        raw = bytes(int("".join(map(str, out[i:i + 8])), 2) for i in range(0, len(out), 8))
        # Emulation prevention: 00 00 0x (x <= 3) gets a 03.
        esc, zeros = bytearray(), 0
        for b in raw:
            if zeros >= 2 and b <= 3:
                esc.append(3)
                zeros = 0
            esc.append(b)
            zeros = zeros + 1 if b == 0 else 0
        return bytes(esc)
    return put, ue, se, finish


def crafted_sps(width_mbs_minus1=19, height_units_minus1=14, poc_cycle=None):
    put, ue, se, finish = bits_writer()
    put(66, 8)  # baseline
    put(0, 8)
    put(30, 8)  # level 3.0
    ue(0)  # sps id
    ue(0)  # log2_max_frame_num - 4
    if poc_cycle is None:
        ue(0)  # pic_order_cnt_type 0
        ue(0)
    else:
        ue(1)
        put(0, 1)
        se(0)
        se(0)
        ue(poc_cycle)
        for _ in range(min(poc_cycle, 4)):
            se(1)
    ue(1)  # max refs
    put(0, 1)
    ue(width_mbs_minus1)
    ue(height_units_minus1)
    put(1, 1)  # frame_mbs_only
    put(1, 1)
    put(0, 1)  # no cropping
    put(0, 1)  # no VUI
    return bytes([0x67]) + finish()


def nal_units(annexb):
    units, i, start = [], 0, None
    n = len(annexb)
    while i + 3 <= n:
        if annexb[i] == 0 and annexb[i + 1] == 0 and annexb[i + 2] == 1:
            if start is not None:
                units.append(annexb[start:i].rstrip(b"\x00"))
            start = i + 3
            i += 3
        else:
            i += 1
    if start is not None:
        units.append(annexb[start:])
    return [u for u in units if u]


def access_units(path):
    """Groups the clip's NAL units into access units at each access unit delimiter."""
    aus, cur = [], []
    for nal in nal_units(open(path, "rb").read()):
        if nal[0] & 0x1F == 9:  # AUD
            if cur:
                aus.append(cur)
            cur = []
            continue
        cur.append(nal)
    if cur:
        aus.append(cur)
    return aus


class Camera:
    def __init__(self, mode, clip):
        self.mode = mode
        self.aus = access_units(clip) if clip else []
        sps = next((n for au in self.aus for n in au if n[0] & 0x1F == 7), b"")
        pps = next((n for au in self.aus for n in au if n[0] & 0x1F == 8), b"")
        self.sps, self.pps = sps, pps

    def sdp(self):
        b64 = lambda b: base64.b64encode(b).decode()
        sprop = f"{b64(self.sps)},{b64(self.pps)}"
        rate = "90000"
        if self.mode == "clock-rate-zero":
            rate = "0"
        elif self.mode == "clock-rate-huge":
            rate = "4294967296"
        elif self.mode == "sps-huge-width":
            sprop = f"{b64(crafted_sps(width_mbs_minus1=1 << 28))},{b64(self.pps)}"
        elif self.mode == "sps-poc-cycle":
            sprop = f"{b64(crafted_sps(poc_cycle=(1 << 32) - 2))},{b64(self.pps)}"
        elif self.mode == "bad-sprop":
            sprop = f"{b64(b'notanSPS')},{b64(b'norPPS')}"
        lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=hostile", "t=0 0", "a=control:*",
                 "m=video 0 RTP/AVP 96", f"a=rtpmap:96 H264/{rate}",
                 f"a=fmtp:96 packetization-mode=1;sprop-parameter-sets={sprop}", "a=control:track0"]
        if self.mode.startswith("sizelength"):
            size = "-3" if self.mode == "sizelength-negative" else "63"
            lines += ["m=audio 0 RTP/AVP 97", "a=rtpmap:97 MPEG4-GENERIC/48000/1",
                      f"a=fmtp:97 streamtype=5;profile-level-id=1;mode=AAC-hbr;sizelength={size};indexlength=3;"
                      "indexdeltalength=3;config=1188", "a=control:track1"]
        return ("\r\n".join(lines) + "\r\n").encode()

    def answer(self, cseq, extra="", body=b"", length=None):
        head = f"RTSP/1.0 200 OK\r\nCSeq: {cseq}\r\n{extra}"
        if body or length is not None:
            head += f"Content-Length: {len(body) if length is None else length}\r\n"
        return head.encode() + b"\r\n" + body

    def serve(self, conn):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        setups = 0
        while True:
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode(errors="replace").split("\r\n")
            method = lines[0].split(" ")[0]
            cseq = next((l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("cseq:")), "0")
            if self.mode == "garbage":
                conn.sendall(os.urandom(4096))
                continue
            if method == "OPTIONS":
                conn.sendall(self.answer(cseq, "Public: DESCRIBE, SETUP, PLAY, TEARDOWN\r\n"))
            elif method == "DESCRIBE":
                body = self.sdp()
                base = "Content-Base: rtsp://127.0.0.1/stream/\r\nContent-Type: application/sdp\r\n"
                if self.mode == "negative-length":
                    conn.sendall(self.answer(cseq, base, length=-5) + body)
                elif self.mode == "huge-length":
                    conn.sendall(self.answer(cseq, base, length=99999999999) + body)
                elif self.mode == "slow-describe":
                    for b in self.answer(cseq, base, body):
                        conn.sendall(bytes([b]))
                        time.sleep(1)
                else:
                    conn.sendall(self.answer(cseq, base, body))
            elif method == "SETUP":
                timeout = {"session-timeout-empty": ";timeout=", "session-timeout-huge": ";timeout=1e300",
                           "session-timeout-negative": ";timeout=-5"}.get(self.mode, ";timeout=60")
                ch = 2 * setups
                setups += 1
                conn.sendall(self.answer(cseq, f"Session: {SESSION}{timeout}\r\n"
                                               f"Transport: RTP/AVP/TCP;unicast;interleaved={ch}-{ch + 1}\r\n"))
            elif method == "PLAY":
                conn.sendall(self.answer(cseq, f"Session: {SESSION}\r\nRange: npt=0.000-\r\n"))
                self.stream(conn)
                return
            elif method == "TEARDOWN":
                conn.sendall(self.answer(cseq))
                return
            else:
                conn.sendall(self.answer(cseq))

    def rtp(self, payload, ts, seq, marker, channel=0):
        header = struct.pack("!BBHII", 0x80, (0x80 if marker else 0) | 96, seq & 0xFFFF, ts & 0xFFFFFFFF, 0x1234)
        packet = header + payload
        return b"$" + bytes([channel]) + struct.pack("!H", len(packet)) + packet

    def packets(self, au, ts, seq):
        out = []
        for i, nal in enumerate(au):
            last = i == len(au) - 1
            if len(nal) <= 1400:
                out.append(self.rtp(nal, ts, seq, last))
                seq += 1
                continue
            indicator = (nal[0] & 0xE0) | 28
            kind = nal[0] & 0x1F
            body = nal[1:]
            for off in range(0, len(body), 1400):
                chunk = body[off:off + 1400]
                s = 0x80 if off == 0 else 0
                e = 0x40 if off + 1400 >= len(body) else 0
                out.append(self.rtp(bytes([indicator, s | e | kind]) + chunk, ts, seq, last and e != 0))
                seq += 1
        return out, seq

    def stream(self, conn):
        seq, frame, start = 1, 0, time.monotonic()
        if self.mode == "endless-au":
            fill = os.urandom(1400)
            conn.sendall(self.rtp(bytes([0x7C, 0x85]) + fill, 0, seq, False))
            while True:  # middle fragments of the same NAL unit, forever, at ~4 Mbit/s (a camera's rate)
                for _ in range(36):
                    seq += 1
                    conn.sendall(self.rtp(bytes([0x7C, 0x05]) + fill, 0, seq, False))
                time.sleep(0.1)
        while True:
            au = self.aus[frame % len(self.aus)]
            ts = frame * 6000
            if self.mode == "ts-jump" and frame >= 45 and frame % 2 == 1:
                ts += 1 << 31
            if self.mode == "broken-rtp":
                packets = [b"$\x00" + struct.pack("!H", 20) + bytes([0x00]) + os.urandom(19)]
            else:
                packets, seq = self.packets(au, ts, seq)
            conn.sendall(b"".join(packets))
            frame += 1
            if self.mode == "midstream-negative-length" and frame == 45:
                conn.sendall(b"RTSP/1.0 200 OK\r\nCSeq: 99\r\nContent-Length: -3\r\n\r\n")
            delay = start + frame / 15 - time.monotonic()
            if delay > 0:
                time.sleep(delay)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", required=True, choices=sorted(MODES))
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--h264", help="Annex B H.264 clip with AUDs (needed by every mode that streams)")
    a = p.parse_args()
    cam = Camera(a.mode, a.h264)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", a.port))
    srv.listen(8)
    print(f"READY {srv.getsockname()[1]}", flush=True)

    def handle(c):
        try:
            cam.serve(c)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            c.close()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
