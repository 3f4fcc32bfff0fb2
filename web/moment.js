// Every camera at one moment: a day of every camera on one bar, a row each. Click (or use the
// arrow keys) to pick a moment and every tile shows its recorded picture of that moment;
// "Play all" plays them from there together: once a second, a player more than half a second
// from the first one's time is moved to it.
import { get, cam } from './api.js';
import { h, toast } from './dom.js';
import { RecordingPlayer } from './player.js';
import { HZ, ticks, dayString, parseDay, clock, dateTime, zone } from './time.js';

const SVG = 'http://www.w3.org/2000/svg';
const ROW = 18;

export async function momentView({ main, isCurrent, onCleanup }, params) {
  const { cameras } = await get('/api/cameras');
  if (!isCurrent()) return;
  let day = parseDay(params.get('day') || dayString(new Date()));
  let picked = Number(params.get('t')) || undefined;
  const dayInput = h('input', { type: 'date', id: 'moment-day', value: dayString(day), 'aria-label': 'Day' });
  const where = h('p.where', { id: 'moment-where' });
  const play = h('button.primary', { type: 'button', id: 'moment-play', disabled: true }, 'Play all');
  const pause = h('button', { type: 'button', id: 'moment-pause', hidden: true }, 'Pause all');
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'timeline moment-bar');
  svg.setAttribute('viewBox', `0 0 1000 ${Math.max(cameras.length, 1) * ROW + 4}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('tabindex', '0');
  svg.setAttribute('role', 'slider');
  svg.setAttribute('aria-label', 'Every camera\'s day: pick a moment');
  svg.style.height = `${Math.max(cameras.length, 1) * ROW + 4}px`;
  const labels = h('div.moment-labels', {}, cameras.map((c) => h('span', {}, c.name)));
  const tiles = cameras.map((c) => {
    const box = h('div.video', { dataset: { camera: c.name } });
    return { name: c.name, box, caption: h('div.status', {}, ''), tile: null };
  });
  main.replaceChildren(h('section.camera.moment', {},
    h('div.head', {}, h('h1', {}, 'All cameras'), h('div.tools', {}, dayInput, play, pause)),
    h('div.moment-timeline', {}, labels, svg), where,
    h('section.grid', { 'aria-label': 'Cameras at that moment' }, tiles.map((t) => h('div.tile', { dataset: { camera: t.name } },
      t.box, h('div.caption', {}, h('a', { href: `#/camera/${cam(t.name)}` }, h('strong', {}, t.name))), t.caption)))));

  let start = 0, end = 0, slices = [];
  let players = [];
  const stopPlayers = () => { players.forEach((p) => p.stop()); players = []; pause.hidden = true; clearInterval(sync); };
  let sync;
  onCleanup(stopPlayers);

  async function loadDay() {
    const lines = await Promise.all(cameras.map((c) => get(`/api/cameras/${cam(c.name)}/timeline?date=${dayString(day)}&tz=${encodeURIComponent(zone)}`)));
    if (!isCurrent()) return;
    start = lines[0]?.start90k ?? ticks(day.getTime());
    end = lines[0]?.end90k ?? start + 24 * 3600 * HZ;
    slices = lines.map((l) => l.slices.filter((s) => s.location === 'nvr'));
    draw();
  }

  function draw() {
    const x = (t) => ((t - start) / (end - start)) * 1000;
    const min = (3 * 1000) / Math.max(svg.clientWidth || 1000, 1);
    const parts = [];
    for (let hr = 0; hr <= 24; hr++) parts.push(`<line class="tick${hr % 6 === 0 ? ' major' : ''}" x1="${hr * 1000 / 24}" x2="${hr * 1000 / 24}" y1="0" y2="${cameras.length * ROW + 4}"/>`);
    slices.forEach((row, i) => {
      for (const s of row) {
        const a = Math.max(0, x(s.start90k)), b = Math.min(1000, x(s.end90k));
        parts.push(`<rect class="span ${s.kind === 'event' ? 'event' : 'disk'}" data-row="${i}" x="${a}" y="${i * ROW + 4}" width="${Math.max(b - a, min)}" height="${ROW - 6}"/>`);
      }
    });
    if (picked !== undefined && picked >= start && picked < end) parts.push(`<line class="cursor" id="moment-cursor" x1="${x(picked)}" x2="${x(picked)}" y1="0" y2="${cameras.length * ROW + 4}"/>`);
    svg.innerHTML = parts.join('');
  }

  /// Every tile shows its recorded picture at `t` (or says there is none).
  function pick(t) {
    stopPlayers();
    picked = Math.round(t);
    where.textContent = dateTime(picked);
    play.disabled = false;
    draw();
    tiles.forEach((tile, i) => {
      const recorded = slices[i]?.some((s) => s.start90k <= picked && picked < s.end90k);
      if (!recorded) { tile.box.replaceChildren(h('span.muted', {}, 'nothing recorded then')); tile.caption.textContent = ''; return; }
      const img = h('img', { alt: `${tile.name} at ${clock(picked)}`, src: `/api/cameras/${cam(tile.name)}/snapshot.jpg?at=${picked}&width=640` });
      img.addEventListener('error', () => tile.box.replaceChildren(h('span.muted', {}, 'no picture then')));
      tile.box.replaceChildren(img);
      tile.caption.textContent = clock(picked);
    });
  }

  function playAll() {
    if (picked === undefined) return;
    stopPlayers();
    players = tiles.map((tile, i) => {
      if (!slices[i]?.some((s) => s.end90k > picked)) return null;
      const p = new RecordingPlayer(tile.box, tile.name, { onTime: (now) => { tile.caption.textContent = clock(now); } });
      p.play(picked);
      return p;
    }).filter(Boolean);
    if (players.length === 0) { toast('Nothing recorded from there.'); return; }
    pause.hidden = false;
    // Keep them together: the first playing one leads, the others follow within half a second.
    sync = setInterval(() => {
      const lead = players.find((p) => p.base !== undefined && !p.video.paused);
      if (!lead) return;
      const now = lead.now();
      picked = now;
      draw();
      where.textContent = dateTime(now);
      for (const p of players) {
        if (p === lead || p.base === undefined) continue;
        const off = (p.now() - now) / HZ;
        if (Math.abs(off) > 0.5 && now >= p.base && now < p.until) p.video.currentTime = (now - p.base) / HZ;
      }
    }, 1000);
  }

  svg.addEventListener('click', (e) => {
    const r = svg.getBoundingClientRect();
    pick(start + ((e.clientX - r.left) / r.width) * (end - start));
  });
  svg.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    e.preventDefault();
    const step = (e.shiftKey ? 60 : 10) * HZ * (e.key === 'ArrowRight' ? 1 : -1);
    pick(Math.min(end - 1, Math.max(start, (picked ?? start) + step)));
  });
  play.addEventListener('click', playAll);
  pause.addEventListener('click', () => { for (const p of players) p.video.pause(); clearInterval(sync); pause.hidden = true; });
  dayInput.addEventListener('change', () => { if (dayInput.value) { day = parseDay(dayInput.value); stopPlayers(); loadDay().catch((e) => toast(e.message)); } });
  const resize = new ResizeObserver(() => { if (end > start) draw(); });
  resize.observe(svg);
  onCleanup(() => resize.disconnect());
  await loadDay();
  if (picked !== undefined && isCurrent()) pick(picked);
}
