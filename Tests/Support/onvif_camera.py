#!/usr/bin/python3
"""A test ONVIF camera (Profile S): SOAP over HTTP in front of RTSP streams (run
Tests/Support/rtsp_camera.py for those), a PullPoint event service, and a WS-Discovery
responder.

It follows the ONVIF Core and Media specifications and the shapes of their examples, with
the inconveniences of real cameras:
- every call except GetSystemDateAndTime needs WS-Security UsernameToken with
  PasswordDigest, and a `Created` time more than 5 minutes off the camera's own clock is
  refused — and that clock is off by --clock-offset seconds;
- a refused token is an HTTP 400 SOAP fault with the subcode ter:NotAuthorized;
- stream URIs carry no credentials (the client adds them for RTSP);
- a PullPoint subscription ends at its TerminationTime unless renewed, and can be dropped
  (POST /sim/drop-subscriptions): its address then answers a ResourceUnknown fault, in the
  Subcode, or — as many cameras send it — as a WS-BaseFaults ResourceUnknownFault in the
  fault's Detail under a plain s:Receiver code with no Subcode (body "detail"; "detail-unprefixed"
  puts it in the wsrf-r namespace by default, with no prefix).

Run by tests and by hand, e.g.
  /usr/bin/python3 Tests/Support/onvif_camera.py --port 8000 --user admin --password secret \
      --main-uri rtsp://127.0.0.1:8554/stream --clock-offset 3600
Prints "READY <port>" on stdout once it accepts connections.

With --ptz it has a PTZ service (ONVIF PTZ Service Specification, ver20/ptz/wsdl) on the main
profile: ContinuousMove (speeds in the generic space, -1..1; the camera moves 0.5 units a
second at speed 1, and stops at the request's Timeout, or at PT5S, its DefaultPTZTimeout —
unless --ptz-ignores-timeout, as some cameras do), Stop, AbsoluteMove, GetStatus,
GetConfigurations, GetPresets, GotoPreset, SetPreset. GET /sim/ptz tells where it points:
{"pan", "tilt", "zoom", "moving", "moves", "stops", "last_timeout"} (the last ContinuousMove's
Timeout in seconds, null when it had none).

Test controls (no auth, not ONVIF): POST /sim/motion with body "true" or "false" reports
motion (the time of each report is printed: "MOTION <true|false> <unix time>"); POST
/sim/drop-subscriptions (body: subcode, detail or detail-unprefixed: how the dropped
subscriptions' fault is sent) forgets every subscription; GET /sim/stats counts subscriptions
made and still active.
"""
import argparse
import base64
import datetime
import hashlib
import json
import http.server
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
import uuid
import xml.etree.ElementTree as ET

NS = {
    "s": "http://www.w3.org/2003/05/soap-envelope",
    "wsse": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd",
    "wsu": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd",
    "wsa": "http://www.w3.org/2005/08/addressing",
    "tds": "http://www.onvif.org/ver10/device/wsdl",
    "trt": "http://www.onvif.org/ver10/media/wsdl",
    "tev": "http://www.onvif.org/ver10/events/wsdl",
    "tptz": "http://www.onvif.org/ver20/ptz/wsdl",
    "tt": "http://www.onvif.org/ver10/schema",
    "wsnt": "http://docs.oasis-open.org/wsn/b-2",
    "tns1": "http://www.onvif.org/ver10/topics",
    "ter": "http://www.onvif.org/ver10/error",
    "d": "http://schemas.xmlsoap.org/ws/2005/04/discovery",
    "wsadis": "http://schemas.xmlsoap.org/ws/2004/08/addressing",
    "dn": "http://www.onvif.org/ver10/network/wsdl",
    "wsrf-rw": "http://docs.oasis-open.org/wsrf/rw-2",
    "wsrf-r": "http://docs.oasis-open.org/wsrf/r-2",
    "wsrf-bf": "http://docs.oasis-open.org/wsrf/bf-2",
}
PASSWORD_DIGEST = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
ALLOWED_SKEW = 300


def xmlns():
    return " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items() if k not in ("d", "wsadis"))


def envelope(body, header=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<s:Envelope {xmlns()}>'
            f"<s:Header>{header}</s:Header><s:Body>{body}</s:Body></s:Envelope>").encode()


def fault(subcode, reason, code="s:Sender", detail=""):
    sub = f"<s:Subcode><s:Value>{subcode}</s:Value></s:Subcode>" if subcode else ""
    return envelope(f"<s:Fault><s:Code><s:Value>{code}</s:Value>{sub}</s:Code>"
                    f'<s:Reason><s:Text xml:lang="en">{reason}</s:Text></s:Reason>'
                    f"{f'<s:Detail>{detail}</s:Detail>' if detail else ''}</s:Fault>")


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(s):
    """An xs:dateTime: 2026-11-23T10:00:00Z, with fractions or a +hh:mm offset; a time with no
    zone is UTC (as cameras read it)."""
    try:
        t = datetime.datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.timestamp()


def parse_duration(s, default):
    """PT60S, PT1M, PT5S and the like."""
    if not s or not s.startswith("PT"):
        return default
    total, num = 0.0, ""
    for ch in s[2:]:
        if ch.isdigit() or ch == ".":
            num += ch
        elif ch in "HMS" and num:
            total += float(num) * {"H": 3600, "M": 60, "S": 1}[ch]
            num = ""
        else:
            return default
    return total


class Camera:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Condition()
        self.subscriptions = {}  # id -> {"expires": t, "queue": [messages]}
        self.unknown_fault = "subcode"  # how an unknown subscription's fault is sent (drop_subscriptions)
        self.created = 0  # subscriptions ever made (GET /sim/stats)
        self.next_sub = 1
        self.motion = False
        self.uuid = a.uuid or str(uuid.uuid4())
        self.ptz = PTZ(a.ptz_ignores_timeout) if a.ptz else None

    def now(self):
        """The camera's clock (off by --clock-offset)."""
        return time.time() + self.a.clock_offset

    def check_token(self, root):
        tok = root.find(".//wsse:Security/wsse:UsernameToken", NS)
        if tok is None:
            return "the request has no WS-Security UsernameToken"
        user = tok.findtext("wsse:Username", "", NS)
        pw = tok.find("wsse:Password", NS)
        nonce = tok.findtext("wsse:Nonce", "", NS)
        created = tok.findtext("wsu:Created", "", NS)
        if user != self.a.user or pw is None:
            return "the user name or password is wrong"
        if pw.get("Type", PASSWORD_DIGEST) != PASSWORD_DIGEST:
            return "only PasswordDigest is accepted"
        try:
            raw_nonce = base64.b64decode(nonce)
        except Exception:
            return "the nonce is not base64"
        want = base64.b64encode(hashlib.sha1(raw_nonce + created.encode() + self.a.password.encode()).digest()).decode()
        if (pw.text or "").strip() != want:
            return "the user name or password is wrong"
        t = parse_iso(created)
        if t is None or abs(t - self.now()) > ALLOWED_SKEW:
            return "the token's Created time is too far from the camera's clock"
        return None

    # --- device service ---
    def GetSystemDateAndTime(self, req, host):
        t = datetime.datetime.fromtimestamp(self.now(), datetime.timezone.utc)
        def dt(x):
            return (f"<tt:Time><tt:Hour>{x.hour}</tt:Hour><tt:Minute>{x.minute}</tt:Minute><tt:Second>{x.second}</tt:Second></tt:Time>"
                    f"<tt:Date><tt:Year>{x.year}</tt:Year><tt:Month>{x.month}</tt:Month><tt:Day>{x.day}</tt:Day></tt:Date>")
        return ("<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime>"
                "<tt:DateTimeType>Manual</tt:DateTimeType><tt:DaylightSavings>false</tt:DaylightSavings>"
                "<tt:TimeZone><tt:TZ>GMT0</tt:TZ></tt:TimeZone>"
                f"<tt:UTCDateTime>{dt(t)}</tt:UTCDateTime><tt:LocalDateTime>{dt(t)}</tt:LocalDateTime>"
                "</tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>")

    def GetDeviceInformation(self, req, host):
        return ("<tds:GetDeviceInformationResponse><tds:Manufacturer>Simulated</tds:Manufacturer>"
                f"<tds:Model>{self.a.model}</tds:Model><tds:FirmwareVersion>{self.a.firmware}</tds:FirmwareVersion>"
                f"<tds:SerialNumber>{self.uuid[:8]}</tds:SerialNumber><tds:HardwareId>SIM-1</tds:HardwareId>"
                "</tds:GetDeviceInformationResponse>")

    def GetCapabilities(self, req, host):
        base = f"http://{host}/onvif"
        return ("<tds:GetCapabilitiesResponse><tds:Capabilities>"
                f"<tt:Device><tt:XAddr>{base}/device_service</tt:XAddr></tt:Device>"
                f"<tt:Events><tt:XAddr>{base}/events_service</tt:XAddr><tt:WSSubscriptionPolicySupport>false</tt:WSSubscriptionPolicySupport>"
                "<tt:WSPullPointSupport>true</tt:WSPullPointSupport><tt:WSPausableSubscriptionManagerInterfaceSupport>false"
                "</tt:WSPausableSubscriptionManagerInterfaceSupport></tt:Events>"
                f"<tt:Media><tt:XAddr>{base}/media_service</tt:XAddr><tt:StreamingCapabilities><tt:RTPMulticast>false</tt:RTPMulticast>"
                "<tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true</tt:RTP_RTSP_TCP></tt:StreamingCapabilities></tt:Media>"
                + (f"<tt:PTZ><tt:XAddr>{base}/ptz_service</tt:XAddr></tt:PTZ>" if self.ptz else "")
                + "</tds:Capabilities></tds:GetCapabilitiesResponse>")

    def GetServices(self, req, host):
        base = f"http://{host}/onvif"
        items = [(NS["tds"], "device_service"), (NS["trt"], "media_service"), (NS["tev"], "events_service")]
        if self.ptz:
            items.append((NS["tptz"], "ptz_service"))
        return ("<tds:GetServicesResponse>" + "".join(
            f"<tds:Service><tds:Namespace>{ns}</tds:Namespace><tds:XAddr>{base}/{path}</tds:XAddr>"
            "<tds:Version><tt:Major>2</tt:Major><tt:Minor>60</tt:Minor></tds:Version></tds:Service>" for ns, path in items)
            + "</tds:GetServicesResponse>")

    # --- media service ---
    def profiles(self):
        out = [("main", self.a.main_size, self.a.main_uri)]
        if self.a.sub_uri:
            out.append(("sub", self.a.sub_size, self.a.sub_uri))
        return out

    def GetProfiles(self, req, host):
        body = ""
        for token, size, _ in self.profiles():
            w, h = size.split("x")
            body += (f'<trt:Profiles token="{token}" fixed="true"><tt:Name>{token}</tt:Name>'
                     '<tt:VideoSourceConfiguration token="vsc"><tt:Name>vsc</tt:Name><tt:UseCount>2</tt:UseCount>'
                     '<tt:SourceToken>vs</tt:SourceToken><tt:Bounds x="0" y="0" width="1920" height="1080"/></tt:VideoSourceConfiguration>'
                     f'<tt:VideoEncoderConfiguration token="vec_{token}"><tt:Name>vec_{token}</tt:Name><tt:UseCount>1</tt:UseCount>'
                     f"<tt:Encoding>H264</tt:Encoding><tt:Resolution><tt:Width>{w}</tt:Width><tt:Height>{h}</tt:Height></tt:Resolution>"
                     "<tt:Quality>4</tt:Quality><tt:RateControl><tt:FrameRateLimit>15</tt:FrameRateLimit><tt:EncodingInterval>1</tt:EncodingInterval>"
                     "<tt:BitrateLimit>800</tt:BitrateLimit></tt:RateControl><tt:H264><tt:GovLength>15</tt:GovLength>"
                     "<tt:H264Profile>Main</tt:H264Profile></tt:H264><tt:SessionTimeout>PT60S</tt:SessionTimeout>"
                     "</tt:VideoEncoderConfiguration>"
                     + (self.ptz.configuration() if self.ptz and token == "main" else "")
                     + "</trt:Profiles>")
        return f"<trt:GetProfilesResponse>{body}</trt:GetProfilesResponse>"

    def GetStreamUri(self, req, host):
        token = req.findtext(".//trt:ProfileToken", "", NS)
        for t, _, uri in self.profiles():
            if t == token:
                return ("<trt:GetStreamUriResponse><trt:MediaUri>"
                        f"<tt:Uri>{uri}</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect>"
                        "<tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout>"
                        "</trt:MediaUri></trt:GetStreamUriResponse>")
        raise SOAPFault("ter:InvalidArgVal", "no such profile", 400)

    def GetSnapshotUri(self, req, host):
        return ("<trt:GetSnapshotUriResponse><trt:MediaUri>"
                f"<tt:Uri>http://{host}/snapshot.jpg</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect>"
                "<tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout>"
                "</trt:MediaUri></trt:GetSnapshotUriResponse>")

    # --- events ---
    def CreatePullPointSubscription(self, req, host):
        ttl = parse_duration(req.findtext(".//tev:InitialTerminationTime", "", NS), 60)
        with self.lock:
            sid = self.next_sub
            self.next_sub += 1
            self.created += 1
            self.subscriptions[sid] = {"expires": self.now() + ttl, "queue": []}
            # A new subscriber first hears the current state (ONVIF's "Initialized" property).
            self.subscriptions[sid]["queue"].append(self.message(self.motion, "Initialized"))
        return ("<tev:CreatePullPointSubscriptionResponse><tev:SubscriptionReference>"
                f"<wsa:Address>http://{host}/onvif/subscription/{sid}</wsa:Address></tev:SubscriptionReference>"
                f"<wsnt:CurrentTime>{iso(self.now())}</wsnt:CurrentTime><wsnt:TerminationTime>{iso(self.now() + ttl)}</wsnt:TerminationTime>"
                "</tev:CreatePullPointSubscriptionResponse>")

    def message(self, motion, op="Changed"):
        return ("<wsnt:NotificationMessage>"
                '<wsnt:Topic Dialect="http://www.onvif.org/ver10/tev/topicExpression/ConcreteSet">tns1:RuleEngine/CellMotionDetector/Motion</wsnt:Topic>'
                f'<wsnt:Message><tt:Message UtcTime="{iso(self.now())}" PropertyOperation="{op}">'
                '<tt:Source><tt:SimpleItem Name="VideoSourceConfigurationToken" Value="vsc"/>'
                '<tt:SimpleItem Name="VideoAnalyticsConfigurationToken" Value="vac"/><tt:SimpleItem Name="Rule" Value="MyMotionDetectorRule"/></tt:Source>'
                f'<tt:Data><tt:SimpleItem Name="IsMotion" Value="{"true" if motion else "false"}"/></tt:Data>'
                "</tt:Message></wsnt:Message></wsnt:NotificationMessage>")

    def subscription(self, sid):
        s = self.subscriptions.get(sid)
        if s is None or s["expires"] < self.now():
            self.subscriptions.pop(sid, None)
            raise self.resource_unknown("no such subscription (it ended or was dropped)")
        return s

    def resource_unknown(self, reason):
        """The fault for a subscription the camera does not know, as drop_subscriptions chose."""
        if self.unknown_fault == "subcode":
            return SOAPFault("wsrf-rw:ResourceUnknownFault", reason, 400)
        stamp = f"<wsrf-bf:Timestamp>{iso(self.now())}</wsrf-bf:Timestamp>"
        if self.unknown_fault == "detail-unprefixed":
            detail = f'<ResourceUnknownFault xmlns="{NS["wsrf-r"]}">{stamp}</ResourceUnknownFault>'
        else:
            detail = f"<wsrf-r:ResourceUnknownFault>{stamp}</wsrf-r:ResourceUnknownFault>"
        return SOAPFault(None, reason, 400, code="s:Receiver", detail=detail)

    def PullMessages(self, req, host, sid):
        timeout = min(parse_duration(req.findtext(".//tev:Timeout", "", NS), 10), 60)
        limit = int(req.findtext(".//tev:MessageLimit", "10", NS) or 10)
        deadline = time.time() + timeout
        with self.lock:
            while True:
                s = self.subscription(sid)
                if s["queue"] or time.time() >= deadline:
                    break
                self.lock.wait(max(0.0, deadline - time.time()))
            msgs, s["queue"] = s["queue"][:limit], s["queue"][limit:]
            expires = s["expires"]
        return (f"<tev:PullMessagesResponse><tev:CurrentTime>{iso(self.now())}</tev:CurrentTime>"
                f"<tev:TerminationTime>{iso(expires)}</tev:TerminationTime>{''.join(msgs)}</tev:PullMessagesResponse>")

    def Renew(self, req, host, sid):
        ttl = parse_duration(req.findtext(".//wsnt:TerminationTime", "", NS), 60)
        with self.lock:
            s = self.subscription(sid)
            s["expires"] = self.now() + ttl
        return (f"<wsnt:RenewResponse><wsnt:TerminationTime>{iso(self.now() + ttl)}</wsnt:TerminationTime>"
                f"<wsnt:CurrentTime>{iso(self.now())}</wsnt:CurrentTime></wsnt:RenewResponse>")

    def Unsubscribe(self, req, host, sid):
        with self.lock:
            self.subscription(sid)
            self.subscriptions.pop(sid, None)
        return "<wsnt:UnsubscribeResponse/>"

    def set_motion(self, motion):
        with self.lock:
            self.motion = motion
            for s in self.subscriptions.values():
                s["queue"].append(self.message(motion))
            self.lock.notify_all()
        print(f"MOTION {'true' if motion else 'false'} {time.time():.3f}", flush=True)

    def drop_subscriptions(self, style="subcode"):
        with self.lock:
            self.unknown_fault = style if style in ("subcode", "detail", "detail-unprefixed") else "subcode"
            self.subscriptions.clear()
            self.lock.notify_all()
        print("DROPPED", flush=True)


SPACE = "http://www.onvif.org/ver10/tptz"


class PTZ:
    """Where the camera points and how it moves: pan and tilt -1..1, zoom 0..1."""
    RATE = 0.5  # units a second at speed 1
    DEFAULT_TIMEOUT = 5.0

    def __init__(self, ignores_timeout):
        self.lock = threading.Lock()
        self.ignores_timeout = ignores_timeout
        self.pos = [0.0, 0.0, 0.0]
        self.velocity = [0.0, 0.0, 0.0]
        self.since = time.monotonic()
        self.until = None  # when the move ends by its Timeout
        self.presets = {"1": ("Home", [0.0, 0.0, 0.0])}
        self.next_preset = 2
        self.moves = 0
        self.stops = 0
        self.last_timeout = None

    def configuration(self):
        return ('<tt:PTZConfiguration token="ptzc"><tt:Name>ptz</tt:Name><tt:UseCount>1</tt:UseCount>'
                "<tt:NodeToken>ptzn</tt:NodeToken>"
                f"<tt:DefaultAbsolutePantTiltPositionSpace>{SPACE}/PanTiltSpaces/PositionGenericSpace</tt:DefaultAbsolutePantTiltPositionSpace>"
                f"<tt:DefaultAbsoluteZoomPositionSpace>{SPACE}/ZoomSpaces/PositionGenericSpace</tt:DefaultAbsoluteZoomPositionSpace>"
                f"<tt:DefaultContinuousPanTiltVelocitySpace>{SPACE}/PanTiltSpaces/VelocityGenericSpace</tt:DefaultContinuousPanTiltVelocitySpace>"
                f"<tt:DefaultContinuousZoomVelocitySpace>{SPACE}/ZoomSpaces/VelocityGenericSpace</tt:DefaultContinuousZoomVelocitySpace>"
                f"<tt:DefaultPTZTimeout>PT{self.DEFAULT_TIMEOUT:g}S</tt:DefaultPTZTimeout>"
                f"<tt:PanTiltLimits><tt:Range><tt:URI>{SPACE}/PanTiltSpaces/PositionGenericSpace</tt:URI>"
                "<tt:XRange><tt:Min>-1</tt:Min><tt:Max>1</tt:Max></tt:XRange><tt:YRange><tt:Min>-1</tt:Min><tt:Max>1</tt:Max></tt:YRange>"
                "</tt:Range></tt:PanTiltLimits>"
                f"<tt:ZoomLimits><tt:Range><tt:URI>{SPACE}/ZoomSpaces/PositionGenericSpace</tt:URI>"
                "<tt:XRange><tt:Min>0</tt:Min><tt:Max>1</tt:Max></tt:XRange></tt:Range></tt:ZoomLimits>"
                "</tt:PTZConfiguration>")

    def settle(self):
        """Brings the position up to now (lock held)."""
        now = time.monotonic()
        end = now if self.until is None else min(now, self.until)
        dt = max(0.0, end - self.since)
        for i, (lo, hi) in enumerate(((-1, 1), (-1, 1), (0, 1))):
            self.pos[i] = min(hi, max(lo, self.pos[i] + self.velocity[i] * self.RATE * dt))
        self.since = now
        if self.until is not None and now >= self.until:
            self.velocity = [0.0, 0.0, 0.0]
            self.until = None

    def moving(self):
        return any(v != 0 for v in self.velocity)

    def state(self):
        with self.lock:
            self.settle()
            return {"pan": round(self.pos[0], 4), "tilt": round(self.pos[1], 4), "zoom": round(self.pos[2], 4),
                    "moving": self.moving(), "moves": self.moves, "stops": self.stops,
                    "last_timeout": self.last_timeout}

    def profile(self, req):
        if req.findtext(".//tptz:ProfileToken", "", NS) != "main":
            raise SOAPFault("ter:InvalidArgVal", "no such profile (or it has no PTZ configuration)", 400)

    @staticmethod
    def speed(el, attr, lo=-1.0, hi=1.0):
        if el is None:
            return 0.0
        try:
            v = float(el.get(attr, "0"))
        except ValueError:
            raise SOAPFault("ter:InvalidArgVal", f"{attr} is not a number", 400)
        if not lo <= v <= hi:
            raise SOAPFault("ter:InvalidArgVal", "the speed or position is out of the space's range", 400)
        return v

    def position_xml(self, pos):
        return (f'<tt:PanTilt x="{pos[0]:.4f}" y="{pos[1]:.4f}" space="{SPACE}/PanTiltSpaces/PositionGenericSpace"/>'
                f'<tt:Zoom x="{pos[2]:.4f}" space="{SPACE}/ZoomSpaces/PositionGenericSpace"/>')

    def GetConfigurations(self, req, host):
        return f"<tptz:GetConfigurationsResponse>{self.configuration()}</tptz:GetConfigurationsResponse>"

    def ContinuousMove(self, req, host):
        self.profile(req)
        v = req.find("tptz:Velocity", NS)
        pt = v.find("tt:PanTilt", NS) if v is not None else None
        z = v.find("tt:Zoom", NS) if v is not None else None
        velocity = [self.speed(pt, "x"), self.speed(pt, "y"), self.speed(z, "x")]
        given = req.findtext("tptz:Timeout", "", NS)
        timeout = parse_duration(given, self.DEFAULT_TIMEOUT)
        with self.lock:
            self.last_timeout = parse_duration(given, None) if given else None
            self.settle()
            self.velocity = velocity
            self.until = None if self.ignores_timeout else time.monotonic() + timeout
            self.moves += 1
        return "<tptz:ContinuousMoveResponse/>"

    def Stop(self, req, host):
        self.profile(req)
        with self.lock:
            self.settle()
            self.velocity = [0.0, 0.0, 0.0]
            self.until = None
            self.stops += 1
        return "<tptz:StopResponse/>"

    def AbsoluteMove(self, req, host):
        self.profile(req)
        p = req.find("tptz:Position", NS)
        pt = p.find("tt:PanTilt", NS) if p is not None else None
        z = p.find("tt:Zoom", NS) if p is not None else None
        with self.lock:
            self.settle()
            self.velocity = [0.0, 0.0, 0.0]
            self.until = None
            if pt is not None:
                self.pos[0], self.pos[1] = self.speed(pt, "x"), self.speed(pt, "y")
            if z is not None:
                self.pos[2] = self.speed(z, "x", 0.0, 1.0)
        return "<tptz:AbsoluteMoveResponse/>"

    def GetStatus(self, req, host):
        self.profile(req)
        st = self.state()
        moving = "MOVING" if st["moving"] else "IDLE"
        return ("<tptz:GetStatusResponse><tptz:PTZStatus>"
                f"<tt:Position>{self.position_xml([st['pan'], st['tilt'], st['zoom']])}</tt:Position>"
                f"<tt:MoveStatus><tt:PanTilt>{moving}</tt:PanTilt><tt:Zoom>{moving}</tt:Zoom></tt:MoveStatus>"
                f"<tt:UtcTime>{iso(time.time())}</tt:UtcTime></tptz:PTZStatus></tptz:GetStatusResponse>")

    def GetPresets(self, req, host):
        self.profile(req)
        with self.lock:
            items = sorted(self.presets.items(), key=lambda kv: int(kv[0]))
        body = "".join(f'<tptz:Preset token="{t}"><tt:Name>{ET_escape(n)}</tt:Name>'
                       f"<tt:PTZPosition>{self.position_xml(p)}</tt:PTZPosition></tptz:Preset>" for t, (n, p) in items)
        return f"<tptz:GetPresetsResponse>{body}</tptz:GetPresetsResponse>"

    def GotoPreset(self, req, host):
        self.profile(req)
        token = req.findtext("tptz:PresetToken", "", NS)
        with self.lock:
            if token not in self.presets:
                raise SOAPFault("ter:InvalidArgVal", "no such preset", 400)
            self.settle()
            self.velocity = [0.0, 0.0, 0.0]
            self.until = None
            self.pos = list(self.presets[token][1])
        return "<tptz:GotoPresetResponse/>"

    def SetPreset(self, req, host):
        self.profile(req)
        name = req.findtext("tptz:PresetName", "", NS) or ""
        token = req.findtext("tptz:PresetToken", "", NS) or ""
        with self.lock:
            self.settle()
            if token and token not in self.presets:
                raise SOAPFault("ter:InvalidArgVal", "no such preset", 400)
            if not token:
                if len(self.presets) >= 16:
                    raise SOAPFault("ter:TooManyPresets", "the camera holds 16 presets", 400)
                token = str(self.next_preset)
                self.next_preset += 1
            self.presets[token] = (name or f"Preset {token}", list(self.pos))
        return f"<tptz:SetPresetResponse><tptz:PresetToken>{token}</tptz:PresetToken></tptz:SetPresetResponse>"


def ET_escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SOAPFault(Exception):
    def __init__(self, subcode, reason, status, code="s:Sender", detail=""):
        super().__init__(reason)
        self.subcode, self.reason, self.status, self.code, self.detail = subcode, reason, status, code, detail


DEVICE = {"GetSystemDateAndTime", "GetDeviceInformation", "GetCapabilities", "GetServices"}
MEDIA = {"GetProfiles", "GetStreamUri", "GetSnapshotUri"}
EVENTS = {"CreatePullPointSubscription"}
SUBSCRIPTION = {"PullMessages", "Renew", "Unsubscribe"}
PTZ_OPS = {"GetConfigurations", "ContinuousMove", "Stop", "AbsoluteMove", "GetStatus", "GetPresets", "GotoPreset",
           "SetPreset"}
PRE_AUTH = {"GetSystemDateAndTime"}


def make_handler(cam, snapshot):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body, ctype="application/soap+xml; charset=utf-8"):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/sim/stats":
                with cam.lock:
                    stats = {"subscriptions_created": cam.created, "subscriptions_active": len(cam.subscriptions)}
                return self.reply(200, json.dumps(stats).encode(), "application/json")
            if self.path == "/sim/ptz" and cam.ptz:
                return self.reply(200, json.dumps(cam.ptz.state()).encode(), "application/json")
            if self.path == "/snapshot.jpg" and snapshot:
                self.reply(200, snapshot, "image/jpeg")
            else:
                self.reply(404, b"not found", "text/plain")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0") or 0)
            data = self.rfile.read(length)
            if self.path == "/sim/motion":
                cam.set_motion(data.strip() == b"true")
                return self.reply(200, b"ok", "text/plain")
            if self.path == "/sim/drop-subscriptions":
                cam.drop_subscriptions(data.decode("utf-8", "replace").strip() or "subcode")
                return self.reply(200, b"ok", "text/plain")
            host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_address[1]}"
            try:
                root = ET.fromstring(data)
                body = root.find("s:Body", NS)
                if body is None or len(body) == 0:
                    raise SOAPFault("ter:InvalidArgVal", "no SOAP body", 400)
                op = body[0].tag.split("}")[-1]
                path = self.path.split("?")[0]
                if path == "/onvif/device_service" and op in DEVICE:
                    args = ()
                elif path == "/onvif/media_service" and op in MEDIA:
                    args = ()
                elif path == "/onvif/events_service" and op in EVENTS:
                    args = ()
                elif path == "/onvif/ptz_service" and cam.ptz and op in PTZ_OPS:
                    args = ()
                elif path.startswith("/onvif/subscription/") and op in SUBSCRIPTION:
                    try:
                        args = (int(path.rsplit("/", 1)[1]),)
                    except ValueError:
                        raise cam.resource_unknown("no such subscription")
                else:
                    raise SOAPFault("ter:ActionNotSupported", f"{op} is not offered at {path}", 400)
                if op not in PRE_AUTH:
                    why = cam.check_token(root)
                    if why:
                        raise SOAPFault("ter:NotAuthorized", f"Sender not Authorized: {why}", 400)
                target = cam.ptz if path == "/onvif/ptz_service" else cam
                self.reply(200, envelope(getattr(target, op)(body[0], host, *args)))
            except SOAPFault as f:
                self.reply(f.status, fault(f.subcode, f.reason, f.code, f.detail))
            except ET.ParseError:
                self.reply(400, fault("ter:WellFormed", "the request is not XML"))

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def discovery(cam, a, port):
    """WS-Discovery (2005/04, as ONVIF uses it): answers Probes on 239.255.255.250:3702 with
    ProbeMatches sent to the prober, and says Hello when it starts and Bye when it stops."""
    group = "239.255.255.250"
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("", 3702))
    iface = socket.inet_aton(a.address)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(group) + iface)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, iface)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    xaddr = f"http://{a.address}:{port}/onvif/device_service"
    scopes = (f"onvif://www.onvif.org/type/video_encoder onvif://www.onvif.org/Profile/Streaming "
              f"onvif://www.onvif.org/name/{a.model} onvif://www.onvif.org/hardware/SIM-1 onvif://www.onvif.org/location/")
    ns = (f'xmlns:s="{NS["s"]}" xmlns:a="{NS["wsadis"]}" xmlns:d="{NS["d"]}" xmlns:dn="{NS["dn"]}" xmlns:tds="{NS["tds"]}"')

    def endpoint():
        return (f"<a:EndpointReference><a:Address>urn:uuid:{cam.uuid}</a:Address></a:EndpointReference>"
                f"<d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types><d:Scopes>{scopes}</d:Scopes>"
                f"<d:XAddrs>{xaddr}</d:XAddrs><d:MetadataVersion>1</d:MetadataVersion>")

    def announce(action, body):
        msg = (f'<?xml version="1.0" encoding="UTF-8"?><s:Envelope {ns}><s:Header>'
               f"<a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/{action}</a:Action>"
               f"<a:MessageID>urn:uuid:{uuid.uuid4()}</a:MessageID><a:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To>"
               f'<d:AppSequence InstanceId="1" MessageNumber="1"/></s:Header><s:Body>{body}</s:Body></s:Envelope>')
        sock.sendto(msg.encode(), (group, 3702))

    cam.bye = lambda: announce("Bye", f"<d:Bye><a:EndpointReference><a:Address>urn:uuid:{cam.uuid}</a:Address></a:EndpointReference></d:Bye>")
    announce("Hello", f"<d:Hello>{endpoint()}</d:Hello>")
    while True:
        data, sender = sock.recvfrom(65536)
        try:
            root = ET.fromstring(data)
        except ET.ParseError:
            continue
        probe = root.find(".//d:Probe", NS)
        if probe is None:
            continue
        types = (probe.findtext("d:Types", "", NS) or "").split()
        if types and not any(t.split(":")[-1] in ("NetworkVideoTransmitter", "Device") for t in types):
            continue
        relates = root.findtext(".//wsadis:MessageID", "", NS)
        reply = (f'<?xml version="1.0" encoding="UTF-8"?><s:Envelope {ns}><s:Header>'
                 "<a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</a:Action>"
                 f"<a:MessageID>urn:uuid:{uuid.uuid4()}</a:MessageID><a:RelatesTo>{relates}</a:RelatesTo>"
                 "<a:To>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</a:To>"
                 f'<d:AppSequence InstanceId="1" MessageNumber="2"/></s:Header><s:Body><d:ProbeMatches><d:ProbeMatch>{endpoint()}'
                 "</d:ProbeMatch></d:ProbeMatches></s:Body></s:Envelope>")
        sock.sendto(reply.encode(), sender)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--address", default="127.0.0.1", help="the address to serve and announce")
    p.add_argument("--user", default="admin")
    p.add_argument("--password", default="admin")
    p.add_argument("--main-uri", required=True, help="the main profile's RTSP URI (no credentials)")
    p.add_argument("--main-size", default="640x360")
    p.add_argument("--sub-uri", help="the sub profile's RTSP URI")
    p.add_argument("--sub-size", default="320x180")
    p.add_argument("--clock-offset", type=float, default=0, help="seconds the camera's clock is ahead (negative: behind)")
    p.add_argument("--model", default="SimCam-1")
    p.add_argument("--firmware", default="1.2.3")
    p.add_argument("--uuid")
    p.add_argument("--discovery", action="store_true", help="answer WS-Discovery probes on --address")
    p.add_argument("--snapshot", help="a JPEG file to serve as the snapshot")
    p.add_argument("--ptz", action="store_true", help="offer a PTZ service on the main profile")
    p.add_argument("--ptz-ignores-timeout", action="store_true",
                   help="keep moving past a ContinuousMove's Timeout until Stop (as some cameras do)")
    a = p.parse_args()
    # A child spawned from a worker thread of the test runner inherits SIGTERM blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])

    def stop(*_):
        raise KeyboardInterrupt

    # Stopped as a camera is switched off: it says Bye first (with --discovery).
    signal.signal(signal.SIGTERM, stop)
    cam = Camera(a)
    cam.bye = None
    snapshot = open(a.snapshot, "rb").read() if a.snapshot else None
    server = Server((a.address, a.port), make_handler(cam, snapshot))
    port = server.server_address[1]
    if a.discovery:
        threading.Thread(target=discovery, args=(cam, a, port), daemon=True).start()
    print(f"READY {port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    if cam.bye:
        cam.bye()


if __name__ == "__main__":
    main()
