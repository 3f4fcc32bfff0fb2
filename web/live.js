// Live view: the camera's frames as fragmented MP4 over a WebSocket into Media Source
// Extensions (ManagedMediaSource where the browser has it: Safari on iPhone). Each frame comes
// as its own fragment, so the picture is a frame behind the camera, not a GOP; the player
// keeps itself at the live edge. The grid asks for the camera's sub-stream (the server sends the
// main stream when there is none). A codec the browser cannot decode (H.265 in most browsers)
// is replaced by the sub-stream when that one plays, else by a picture a second.
import { cam } from './api.js';

const MS = window.ManagedMediaSource || window.MediaSource;

export class LivePlayer {
  /// `box` is the element the video (or the fallback picture) goes in.
  constructor(box, camera, { onState = () => {}, width = 640, stream = 'main' } = {}) {
    this.box = box; this.camera = camera; this.onState = onState; this.width = width; this.stream = stream;
    this.stopped = false; this.queue = []; this.pendingInit = false;
    this.video = document.createElement('video');
    this.video.muted = true; this.video.autoplay = true; this.video.playsInline = true;
    this.video.disableRemotePlayback = true;
    this.box.replaceChildren(this.video);
    this.stats = { frames: 0, skips: 0, restarts: 0 };
    this.connect();
    this.timer = setInterval(() => this.keepUp(), 250);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer); clearInterval(this.pictureTimer);
    if (this.ws) this.ws.close();
    this.teardown();
  }

  connect() {
    if (this.stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api/cameras/${cam(this.camera)}/live?stream=${this.stream}`);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onmessage = (m) => typeof m.data === 'string' ? this.control(JSON.parse(m.data)) : this.media(m.data);
    ws.onclose = () => {
      if (this.stopped || this.pictures) return;
      const now = this.restartNow;
      this.restartNow = false;
      if (!now) this.onState('reconnecting', 'live view disconnected; retrying');
      setTimeout(() => this.connect(), now ? 0 : 2000);
    };
  }

  control(m) {
    if (m.type === 'init') {
      this.stats.restarts++;
      this.teardown();
      const type = `video/mp4; codecs="${m.codec}"`;
      if (!MS || !MS.isTypeSupported(type)) {
        // The sub-stream may be H.264 where the main one is H.265: try it once.
        if (m.stream === 'main' && this.stream !== 'sub' && !this.triedSub) { this.triedSub = true; this.stream = 'sub'; this.restartNow = true; this.ws.close(); return; }
        this.fallback(m.codec); return;
      }
      this.mime = type;
      this.pendingInit = true; // the next binary message is the init segment
      this.openSource();
      this.onState('live', `${m.width}×${m.height}${m.stream === 'sub' ? ', sub-stream' : ''}`);
    } else if (m.type === 'skip') {
      this.stats.skips++;
      this.jumpAfterSkip = true;
    } else if (m.type === 'waiting') {
      this.onState('waiting', m.reason);
    }
  }

  openSource() {
    this.source = new MS();
    if (window.ManagedMediaSource && this.source instanceof window.ManagedMediaSource) this.video.srcObject = this.source;
    else { this.url = URL.createObjectURL(this.source); this.video.src = this.url; }
    this.source.addEventListener('sourceopen', () => {
      if (!this.source || this.source.readyState !== 'open') return;
      this.buffer = this.source.addSourceBuffer(this.mime);
      this.buffer.mode = 'segments';
      this.buffer.addEventListener('updateend', () => this.pump());
      this.pump();
    }, { once: true });
  }

  teardown() {
    clearInterval(this.pictureTimer);
    this.queue = []; this.buffer = null; this.source = null;
    if (this.url) { URL.revokeObjectURL(this.url); this.url = null; }
    this.video.removeAttribute('src'); this.video.srcObject = null;
    if (this.img) { this.img.remove(); this.img = null; this.box.replaceChildren(this.video); }
  }

  media(data) {
    if (!this.mime) return;
    if (this.pendingInit) { this.pendingInit = false; this.queue.push(data); this.pump(); return; }
    this.stats.frames++;
    // Never let the page's own queue grow (a busy tab): start again from the newest key frame.
    if (this.queue.length > 120) { this.restartNow = true; this.ws.close(); return; }
    this.queue.push(data);
    this.pump();
  }

  pump() {
    const b = this.buffer;
    if (!b || b.updating || this.queue.length === 0 || this.source?.readyState !== 'open') return;
    try {
      b.appendBuffer(this.queue[0]);
      this.queue.shift(); // kept until appended: a full buffer is trimmed and the fragment tried again
    } catch (e) {
      if (e.name === 'QuotaExceededError') this.trim(2); else console.warn('live view: append failed', e);
    }
    if (this.video.paused) this.video.play().catch(() => {});
  }

  /// Stay at the live edge: jump when far behind (after a skip, a stall, a hidden tab),
  /// play a little faster when slightly behind; drop what was watched long ago.
  keepUp() {
    const b = this.buffer, v = this.video;
    if (!b || b.updating || b.buffered.length === 0) return;
    const last = b.buffered.length - 1;
    const end = b.buffered.end(last), start = b.buffered.start(last);
    const behind = end - v.currentTime;
    if (this.jumpAfterSkip || v.currentTime < start || behind > 1.5) {
      v.currentTime = Math.max(start, end - 0.1);
      this.jumpAfterSkip = false;
    } else {
      v.playbackRate = behind > 0.5 ? 1.15 : 1;
    }
    if (v.currentTime - b.buffered.start(0) > 30) this.trim(10);
    if (v.paused) v.play().catch(() => {});
  }

  trim(keep) {
    const b = this.buffer;
    if (b && !b.updating && b.buffered.length) {
      const upTo = this.video.currentTime - keep;
      if (upTo > b.buffered.start(0)) b.remove(b.buffered.start(0), upTo);
    }
  }

  /// A picture a second from the newest key frame, for codecs the browser cannot decode.
  fallback(codec) {
    this.mime = null;
    // The pictures come over HTTP: the frames would only be thrown away.
    this.pictures = true;
    if (this.ws) this.ws.close();
    this.onState('fallback', `this browser cannot play ${codec.split('.')[0].toUpperCase()} live: showing a picture a second`);
    this.img = document.createElement('img');
    this.img.alt = `${this.camera}, a picture a second`;
    this.box.replaceChildren(this.img);
    const refresh = () => { this.img.src = `/api/cameras/${cam(this.camera)}/snapshot.jpg?width=${this.width}&t=${Date.now()}`; };
    refresh();
    this.pictureTimer = setInterval(refresh, 1000);
  }
}
