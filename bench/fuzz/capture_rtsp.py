#!/usr/bin/env python3
"""Captures what an RTSP camera sends to a client (DESCRIBE/SETUP/PLAY answers, then
interleaved RTP) for the fuzzing seeds: the bytes the NVR's client reads, first byte 0xFF
(the rtsp-session target's read size). Also writes the SDP, the parameter sets and RTP
payloads for the sdp, sps and rtp-depacketizer targets.

  capture_rtsp.py rtsp://127.0.0.1:8554/stream OUTDIR NAME [--seconds 0.6] [--limit 60000]
"""
import argparse, base64, os, re, socket, time

def main():
    p = argparse.ArgumentParser()
    p.add_argument("url"); p.add_argument("out"); p.add_argument("name")
    p.add_argument("--seconds", type=float, default=0.6)
    p.add_argument("--limit", type=int, default=60000)
    a = p.parse_args()
    m = re.match(r"rtsp://([^:/]+):(\d+)(/.*)", a.url)
    host, port = m.group(1), int(m.group(2))
    s = socket.create_connection((host, port), timeout=5)
    got = bytearray()
    buf = bytearray()
    cseq = [0]

    def request(method, uri, headers=""):
        cseq[0] += 1
        s.sendall(f"{method} {uri} RTSP/1.0\r\nCSeq: {cseq[0]}\r\nUser-Agent: nvr\r\n{headers}\r\n".encode())
        while True:
            while b"\r\n\r\n" not in buf:
                d = s.recv(65536)
                if not d:
                    raise SystemExit("closed")
                got.extend(d); buf.extend(d)
            if buf[:1] == b"$":  # skip interleaved data before the answer
                n = int.from_bytes(buf[2:4], "big")
                while len(buf) < 4 + n:
                    d = s.recv(65536); got.extend(d); buf.extend(d)
                del buf[:4 + n]
                continue
            head, _, rest = bytes(buf).partition(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1)) if re.search(rb"(?i)content-length", head) else 0
            while len(rest) < length:
                d = s.recv(65536); got.extend(d); rest += d
            body, rest = rest[:length], rest[length:]
            buf[:] = rest
            return head.decode(errors="replace"), body

    head, sdp = request("DESCRIBE", a.url, "Accept: application/sdp\r\n")
    base = a.url.rstrip("/") + "/"
    session = None
    tracks = re.findall(rb"a=control:(\S+)", sdp.split(b"m=", 1)[1]) if b"m=" in sdp else []
    for i, t in enumerate(tracks):
        t = t.decode()
        uri = t if t.startswith("rtsp://") else base + t
        h, _ = request("SETUP", uri, f"Transport: RTP/AVP/TCP;unicast;interleaved={2*i}-{2*i+1}\r\n" + (f"Session: {session}\r\n" if session else ""))
        session = session or re.search(r"(?i)session:\s*([^;\r\n]+)", h).group(1).strip()
    request("PLAY", a.url, f"Session: {session}\r\nRange: npt=0.000-\r\n")
    end = time.time() + a.seconds
    s.settimeout(0.2)
    while time.time() < end and len(got) < a.limit:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        got.extend(d)
    s.close()
    os.makedirs(f"{a.out}/rtsp-session", exist_ok=True)
    open(f"{a.out}/rtsp-session/{a.name}", "wb").write(b"\xff" + bytes(got[:a.limit]))
    os.makedirs(f"{a.out}/sdp", exist_ok=True)
    open(f"{a.out}/sdp/{a.name}", "wb").write(sdp)
    os.makedirs(f"{a.out}/sps", exist_ok=True)
    for key in (b"sprop-parameter-sets", b"sprop-sps", b"sprop-vps"):
        m2 = re.search(key + rb"=([^;\s]+)", sdp)
        if not m2:
            continue
        sets = b"".join(b"\x00\x00\x00\x01" + base64.b64decode(x + b"=" * (-len(x) % 4)) for x in m2.group(1).split(b","))
        codec = b"\x01" if b"H265" in sdp else b"\x00"
        open(f"{a.out}/sps/{a.name}-{key.decode()}", "wb").write(codec + sets)
    # RTP payloads of the first packets, for the depacketizers.
    payloads, i, data = [], 0, bytes(got)
    while i + 4 <= len(data) and len(payloads) < 40:
        if data[i] != 0x24:
            i += 1; continue
        n = int.from_bytes(data[i + 2:i + 4], "big")
        pkt = data[i + 4:i + 4 + n]
        if len(pkt) >= 12 and data[i + 1] in (0, 2):
            cc = pkt[0] & 0x0F
            payloads.append(pkt[12 + 4 * cc:])
        i += 4 + n
    os.makedirs(f"{a.out}/rtp-depacketizer", exist_ok=True)
    open(f"{a.out}/rtp-depacketizer/{a.name}", "wb").write(b"\x0d\x03\n--\n" + b"\n--\n".join(payloads))

main()
