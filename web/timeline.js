// A camera's day as a bar: what the NVR recorded (continuous and event footage), what only the
// camera's card holds, what is in the vendor's cloud, and the events. Click (or tap) to play
// from that moment; arrow keys move the pick by a minute (shift: ten).
import { HZ, clock } from './time.js';

const SVG = 'http://www.w3.org/2000/svg';
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export class Timeline {
  constructor(box, { onPick }) {
    this.box = box; this.onPick = onPick;
    this.svg = document.createElementNS(SVG, 'svg');
    this.svg.setAttribute('class', 'timeline');
    this.svg.setAttribute('viewBox', '0 0 1000 64');
    this.svg.setAttribute('preserveAspectRatio', 'none');
    this.svg.setAttribute('role', 'slider');
    this.svg.setAttribute('tabindex', '0');
    this.svg.setAttribute('aria-label', 'The day: pick a time to play');
    this.label = document.createElement('div');
    this.label.className = 'timeline-label muted';
    box.replaceChildren(this.svg, this.label);
    this.svg.addEventListener('click', (e) => this.pickAt(e));
    this.svg.addEventListener('mousemove', (e) => { this.label.textContent = clock(this.timeAt(e)); });
    this.svg.addEventListener('mouseleave', () => this.showCursor());
    this.svg.addEventListener('keydown', (e) => {
      const step = (e.shiftKey ? 10 : 1) * 60 * HZ;
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        const t = Math.min(this.end - 1, Math.max(this.start, (this.cursor ?? this.start) + (e.key === 'ArrowRight' ? step : -step)));
        this.onPick(t);
      }
    });
  }

  /// The day [start, end) and what happened in it.
  show(start, end, slices, events) {
    this.start = start; this.end = end; this.slices = slices; this.events = events;
    const x = (t) => ((t - start) / (end - start)) * 1000;
    const parts = [];
    const hours = Math.round((end - start) / (3600 * HZ));
    for (let h = 0; h <= hours; h++) {
      const px = (h / hours) * 1000;
      parts.push(`<line class="tick${h % 6 === 0 ? ' major' : ''}" x1="${px}" x2="${px}" y1="0" y2="64"/>`);
    }
    for (const s of slices) {
      const cls = s.location === 'cloud' ? 'cloud' : s.location === 'camera' ? 'card-only' : s.source === 'card' ? 'card' : s.kind === 'event' ? 'event' : 'disk';
      const a = Math.max(0, x(s.start90k)), b = Math.min(1000, x(s.end90k));
      parts.push(`<rect class="span ${cls}" data-start="${s.start90k}" x="${a}" y="14" width="${Math.max(b - a, 2)}" height="36"><title>${cls}: ${clock(s.start90k)}–${clock(s.end90k)}</title></rect>`);
    }
    for (const e of events) {
      const a = x(e.start90k);
      if (a >= 0 && a <= 1000) parts.push(`<rect class="mark" x="${a}" y="52" width="2" height="10"><title>${esc(e.type)} at ${clock(e.start90k)}</title></rect>`);
    }
    parts.push(`<line id="cursor" class="cursor" x1="-10" x2="-10" y1="0" y2="64"/>`);
    this.svg.innerHTML = parts.join('');
    this.showCursor();
  }

  timeAt(e) {
    const r = this.svg.getBoundingClientRect();
    return this.start + Math.round(((e.clientX - r.left) / r.width) * (this.end - this.start));
  }

  pickAt(e) { this.onPick(this.timeAt(e)); }

  /// Moves the playback cursor (ticks), or hides it.
  setCursor(t) { this.cursor = t; this.showCursor(); }

  showCursor() {
    const line = this.svg.querySelector('#cursor');
    if (!line || this.start === undefined) return;
    const inside = this.cursor !== undefined && this.cursor >= this.start && this.cursor < this.end;
    const px = inside ? ((this.cursor - this.start) / (this.end - this.start)) * 1000 : -10;
    line.setAttribute('x1', px); line.setAttribute('x2', px);
    this.label.textContent = inside ? clock(this.cursor) : '';
  }

  /// The recorded span (on the NVR) that holds `t`, or the first one after it.
  playableFrom(t) {
    const here = this.slices.filter((s) => s.location === 'nvr');
    return here.find((s) => s.start90k <= t && t < s.end90k) ?? here.find((s) => s.start90k > t);
  }
}
