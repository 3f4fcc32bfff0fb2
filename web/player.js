// Recorded playback: any moment of a camera as one MP4 built from the index (view.mp4), an
// hour at a time, following on across segments and from one hour to the next. The file's
// timeline is the wall clock from its first recording, so the video's position is a time.
import { cam } from './api.js';
import { HZ } from './time.js';

export class RecordingPlayer {
  constructor(box, camera, { onTime = () => {}, onEnd = () => {} } = {}) {
    this.box = box; this.camera = camera; this.onTime = onTime; this.onEnd = onEnd;
    this.video = document.createElement('video');
    this.video.controls = true; this.video.playsInline = true; this.video.muted = true;
    this.video.preload = 'auto';
    box.replaceChildren(this.video);
    this.video.addEventListener('timeupdate', () => { if (this.base !== undefined) this.onTime(this.now()); });
    this.video.addEventListener('ended', () => this.next());
  }

  /// The wall-clock time on screen, in ticks.
  now() { return this.base + Math.round(this.video.currentTime * HZ); }

  /// Plays from `t` (ticks): an hour from there (or up to now).
  async play(t) {
    const until = Math.min(t + 3600 * HZ, Math.round(Date.now() * 90));
    if (until <= t) return false;
    const url = `/api/cameras/${cam(this.camera)}/view.mp4?start=${t}&end=${until}`;
    // Where the file really starts (the request is clipped to the first recording).
    const head = await fetch(url, { method: 'HEAD', credentials: 'same-origin' });
    if (this.stopped || !head.ok) return false; // stopped meanwhile: another view or moment was chosen
    this.base = Number(head.headers.get('X-Recording-Start90k') ?? t);
    this.until = Number(head.headers.get('X-Recording-End90k') ?? until);
    this.video.src = url;
    this.video.play().catch(() => {});
    this.onTime(this.base);
    return true;
  }

  /// After an hour: the next one, if there is more.
  async next() {
    if (this.until === undefined || this.until >= Math.round(Date.now() * 90) - 5 * HZ || !(await this.play(this.until))) this.onEnd();
  }

  seekBy(seconds) { this.video.currentTime = Math.max(0, this.video.currentTime + seconds); }

  stop() { this.stopped = true; this.video.pause(); this.video.removeAttribute('src'); this.video.load(); }
}
