// A camera's day as a bar: what the NVR recorded (continuous and event footage), what only the
// camera's card holds, what is in the vendor's cloud, and the events with their labels. Click
// (or tap) to play from that moment; arrow keys move the pick by a minute (shift: ten).
//
// Zoom: the whole day, an hour or ten minutes, with the buttons, the mouse wheel (around the
// pointer), a trackpad or a two-finger pinch. Zoomed in, the window follows the playback
// cursor and the wheel with shift (or a sideways swipe) moves it. Every recorded span and
// event is drawn at least a few pixels wide, so a one-minute recording on a day's bar is seen.
import { HZ, clock } from './time.js';

const SVG = 'http://www.w3.org/2000/svg';
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/// The zoom levels: how much of the day the bar shows, and its ticks (minor, major).
export const LEVELS = [
  { name: '24 h', span: 24 * 3600 * HZ, tick: 3600 * HZ, major: 6 * 3600 * HZ },
  { name: '1 h', span: 3600 * HZ, tick: 5 * 60 * HZ, major: 15 * 60 * HZ },
  { name: '10 min', span: 600 * HZ, tick: 60 * HZ, major: 5 * 60 * HZ },
];
/// The narrowest a span or an event mark is drawn, in screen pixels.
const MIN_PX = 3;

export class Timeline {
  constructor(box, { onPick }) {
    this.box = box; this.onPick = onPick;
    /// Labels marked as alerts (the camera's alert labels, as the review queue has them).
    this.alertLabels = new Set(['person']);
    this.level = 0;
    this.svg = document.createElementNS(SVG, 'svg');
    this.svg.setAttribute('class', 'timeline');
    this.svg.setAttribute('viewBox', '0 0 1000 64');
    this.svg.setAttribute('preserveAspectRatio', 'none');
    this.svg.setAttribute('role', 'slider');
    this.svg.setAttribute('tabindex', '0');
    this.svg.setAttribute('aria-label', 'The day: pick a time to play');
    this.label = document.createElement('div');
    this.label.className = 'timeline-label muted';
    this.zoomButtons = LEVELS.map((l, i) => {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = l.name; b.dataset.level = i;
      b.addEventListener('click', () => this.zoomTo(i, this.cursorOrMiddle()));
      return b;
    });
    const zoom = document.createElement('div');
    zoom.className = 'timeline-zoom';
    zoom.setAttribute('role', 'group');
    zoom.setAttribute('aria-label', 'Zoom');
    zoom.append(...this.zoomButtons);
    const row = document.createElement('div');
    row.className = 'timeline-row';
    row.append(this.label, zoom);
    box.replaceChildren(this.svg, row);
    this.svg.addEventListener('click', (e) => this.pickAt(e));
    this.svg.addEventListener('mousemove', (e) => { this.label.textContent = clock(this.timeAt(e)); });
    this.svg.addEventListener('mouseleave', () => this.showCursor());
    this.svg.addEventListener('keydown', (e) => {
      const step = (e.shiftKey ? 10 : 1) * 60 * HZ;
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        const t = Math.min(this.end - 1, Math.max(this.start, (this.cursor ?? this.start) + (e.key === 'ArrowRight' ? step : -step)));
        this.onPick(t);
      } else if (e.key === '+' || e.key === '=' || e.key === '-') {
        this.zoomTo(this.level + (e.key === '-' ? -1 : 1), this.cursorOrMiddle());
      }
    });
    this.svg.addEventListener('wheel', (e) => this.wheel(e), { passive: false });
    this.touchPinch();
    // Minimum widths are in pixels: redraw when the bar's width changes.
    this.resize = new ResizeObserver(() => { if (this.start !== undefined) this.draw(); });
    this.resize.observe(this.svg);
  }

  /// The day [start, end) and what happened in it.
  show(start, end, slices, events) {
    const sameDay = this.start === start && this.end === end;
    this.start = start; this.end = end; this.slices = slices; this.events = events;
    if (!sameDay) this.viewStart = start;
    this.clampView();
    this.draw();
  }

  /// The whole day at the first level (23 or 25 hours on a change of summer time).
  get viewSpan() { return this.level === 0 ? this.end - this.start : Math.min(LEVELS[this.level].span, this.end - this.start); }

  clampView() {
    // Whole ticks: times picked on the bar go into URLs.
    this.viewStart = Math.round(Math.min(Math.max(this.viewStart ?? this.start, this.start), this.end - this.viewSpan));
  }

  draw() {
    const vs = this.viewStart, ve = vs + this.viewSpan;
    const x = (t) => ((t - vs) / (ve - vs)) * 1000;
    const minUnits = (MIN_PX * 1000) / Math.max(this.svg.clientWidth || 1000, 1);
    const level = LEVELS[this.level];
    const parts = [];
    // Ticks on the wall clock's round times (the day starts at a local midnight).
    for (let t = this.start + Math.ceil((vs - this.start) / level.tick) * level.tick; t <= ve; t += level.tick) {
      const px = x(t);
      parts.push(`<line class="tick${(t - this.start) % level.major === 0 ? ' major' : ''}" x1="${px}" x2="${px}" y1="0" y2="64"/>`);
    }
    for (const s of this.slices) {
      if (s.end90k <= vs || s.start90k >= ve) continue;
      const cls = s.location === 'cloud' ? 'cloud' : s.location === 'camera' ? 'card-only' : s.source === 'card' ? 'card' : s.kind === 'event' ? 'event' : 'disk';
      const a = Math.max(0, x(s.start90k)), b = Math.min(1000, x(s.end90k));
      const w = Math.max(b - a, minUnits);
      parts.push(`<rect class="span ${cls}" data-start="${s.start90k}" data-end="${s.end90k}" x="${Math.min(a, 1000 - w)}" y="14" width="${w}" height="36"><title>${cls}: ${clock(s.start90k)}–${clock(s.end90k)}</title></rect>`);
    }
    for (const e of this.events) {
      if (e.start90k < vs || e.start90k >= ve) continue;
      const label = e.label ?? e.type;
      const what = `${label}${e.score ? ` ${Math.round(e.score * 100)} %` : ''}${e.zones?.length ? ` in ${e.zones.join(', ')}` : ''}`;
      parts.push(`<rect class="mark${this.alertLabels.has(label) ? ' alert' : ''}" data-label="${esc(label)}" data-start="${e.start90k}" x="${x(e.start90k)}" y="52" width="${minUnits}" height="12"><title>${esc(what)} at ${clock(e.start90k)}</title></rect>`);
    }
    parts.push(`<line id="cursor" class="cursor" x1="-10" x2="-10" y1="0" y2="64"/>`);
    this.svg.innerHTML = parts.join('');
    this.svg.setAttribute('aria-valuetext', `${level.name} from ${clock(vs)}`);
    this.svg.dataset.viewStart = vs; this.svg.dataset.viewEnd = ve;
    this.zoomButtons.forEach((b, i) => b.setAttribute('aria-pressed', String(i === this.level)));
    this.showCursor();
  }

  /// Zooms to level `n` (clamped), keeping time `at` where it is on the bar.
  zoomTo(n, at, fraction) {
    const level = Math.min(Math.max(n, 0), LEVELS.length - 1);
    if (this.start === undefined || level === this.level) return;
    const f = fraction ?? (at - this.viewStart) / this.viewSpan;
    this.level = level;
    this.viewStart = at - f * this.viewSpan;
    this.clampView();
    this.draw();
  }

  /// Moves the zoomed window by `ticks`.
  pan(ticks) {
    this.viewStart += ticks;
    this.clampView();
    this.draw();
  }

  wheel(e) {
    if (this.start === undefined) return;
    e.preventDefault();
    const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY);
    if (e.shiftKey || sideways) {
      const d = sideways ? e.deltaX : e.deltaY;
      this.pan(Math.sign(d) * this.viewSpan / 10);
      return;
    }
    // One level per gesture: trackpads send many small events.
    const now = performance.now();
    if (now - (this.lastWheel ?? 0) < 250) return;
    this.lastWheel = now;
    const r = this.svg.getBoundingClientRect();
    this.zoomTo(this.level + (e.deltaY < 0 ? 1 : -1), this.timeAt(e), (e.clientX - r.left) / r.width);
  }

  /// Two fingers apart zoom in, together zoom out.
  touchPinch() {
    const touches = new Map();
    let startDistance = 0;
    const distance = () => { const [a, b] = [...touches.values()]; return Math.hypot(a.x - b.x, a.y - b.y); };
    this.svg.addEventListener('pointerdown', (e) => {
      if (e.pointerType !== 'touch') return;
      touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (touches.size === 2) startDistance = distance();
    });
    this.svg.addEventListener('pointermove', (e) => {
      if (!touches.has(e.pointerId)) return;
      touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (touches.size !== 2 || startDistance === 0) return;
      const ratio = distance() / startDistance;
      if (ratio > 1.4 || ratio < 0.7) {
        const [a, b] = [...touches.values()];
        const r = this.svg.getBoundingClientRect();
        const mid = { clientX: (a.x + b.x) / 2 };
        this.zoomTo(this.level + (ratio > 1 ? 1 : -1), this.timeAt(mid), (mid.clientX - r.left) / r.width);
        startDistance = distance();
      }
    });
    const end = (e) => { touches.delete(e.pointerId); if (touches.size < 2) startDistance = 0; };
    this.svg.addEventListener('pointerup', end);
    this.svg.addEventListener('pointercancel', end);
  }

  timeAt(e) {
    const r = this.svg.getBoundingClientRect();
    return this.viewStart + Math.round(((e.clientX - r.left) / r.width) * this.viewSpan);
  }

  cursorOrMiddle() {
    return this.cursor !== undefined && this.cursor >= this.start && this.cursor < this.end ? this.cursor : this.viewStart + this.viewSpan / 2;
  }

  pickAt(e) { this.onPick(this.timeAt(e)); }

  /// Moves the playback cursor (ticks), or hides it. Zoomed in, the window follows it.
  setCursor(t) {
    this.cursor = t;
    if (t !== undefined && this.start !== undefined && t >= this.start && t < this.end
      && (t < this.viewStart || t >= this.viewStart + this.viewSpan)) {
      this.viewStart = t - this.viewSpan / 10;
      this.clampView();
      this.draw();
      return;
    }
    this.showCursor();
  }

  showCursor() {
    const line = this.svg.querySelector('#cursor');
    if (!line || this.start === undefined) return;
    const inside = this.cursor !== undefined && this.cursor >= this.viewStart && this.cursor < this.viewStart + this.viewSpan;
    const px = inside ? ((this.cursor - this.viewStart) / this.viewSpan) * 1000 : -10;
    line.setAttribute('x1', px); line.setAttribute('x2', px);
    this.label.textContent = inside ? clock(this.cursor) : '';
  }

  /// The recorded span (on the NVR) that holds `t`, or the first one after it.
  playableFrom(t) {
    const here = this.slices.filter((s) => s.location === 'nvr');
    return here.find((s) => s.start90k <= t && t < s.end90k) ?? here.find((s) => s.start90k > t);
  }

  stop() { this.resize.disconnect(); }
}
