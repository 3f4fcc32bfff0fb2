// The NVR's page: log in, every camera live, one camera large with its day on a timeline,
// recorded playback from any moment, events with their clips, downloads of any range.
// Plain modules over the HTTP API (design/api.md); routes are the URL's hash.
import { api, get, cam, setCSRF, setUnauthorizedHandler, APIError } from './api.js';
import { LivePlayer } from './live.js';
import { RecordingPlayer } from './player.js';
import { Timeline } from './timeline.js';
import { discoverView } from './discover.js';
import { reviewView } from './review.js';
import { detectionPanel } from './detection.js';
import { HZ, ticks, dayString, parseDay, clock, dateTime, duration, zone, localInput, fromLocalInput } from './time.js';

const main = document.getElementById('main');
let session = null;
let cleanup = [];

/// A small element builder: h('div.card', {onclick}, child, 'text').
function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split('.');
  const e = document.createElement(name);
  if (classes.length) e.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v !== false && v !== undefined && v !== null) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text; t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

/// Counts routes: a view still loading when the user has moved on sees it changed and stops
/// (it must not draw over the new view or start a player nobody will stop).
let routeGeneration = 0;
const current = (generation) => generation === routeGeneration;

function leave() { routeGeneration++; cleanup.forEach((f) => f()); cleanup = []; }

// MARK: login

function showLogin(message) {
  leave();
  session = null;
  document.getElementById('nav').hidden = true;
  const user = h('input', { id: 'user', name: 'user', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p.error', { role: 'alert' }, message ?? '');
  const form = h('form.login', {
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      try {
        const s = await api('POST', '/api/login', { user: user.value, password: password.value });
        await started(s);
      } catch (err) {
        error.textContent = err instanceof APIError ? err.message : 'The NVR did not answer.';
        password.select();
      }
    },
  }, h('h1', {}, 'Log in'),
  h('label', { for: 'user' }, 'User'), user,
  h('label', { for: 'password' }, 'Password'), password,
  h('button.primary', { type: 'submit' }, 'Log in'), error);
  main.replaceChildren(form);
  user.focus();
}

async function started(s) {
  session = s;
  setCSRF(s.csrf);
  document.getElementById('nav').hidden = false;
  document.getElementById('who').textContent = `${s.user} (${s.role})`;
  document.getElementById('nav-discover').hidden = s.role !== 'admin';
  serverStatus();
  route();
}

/// The server's own links (today: the MQTT broker, when nvr.toml has [mqtt]), from
/// /api/health every 15 s: "MQTT connected", or why not.
async function serverStatus() {
  const el = document.getElementById('server');
  clearTimeout(serverStatus.timer);
  try {
    // 503 (a camera down) still carries the JSON: not api(), which throws on it.
    const r = await fetch('/api/health', { credentials: 'same-origin' });
    const mqtt = (await r.json()).mqtt;
    el.hidden = !mqtt;
    if (mqtt) {
      const ok = mqtt.state === 'connected';
      el.textContent = ok ? 'MQTT connected' : `MQTT ${mqtt.state}`;
      el.title = ok ? `broker ${mqtt.broker}` : `broker ${mqtt.broker}: ${mqtt.reason ?? mqtt.state}`;
      el.classList.toggle('bad', !ok);
    }
  } catch { /* the next round */ }
  if (session) serverStatus.timer = setTimeout(serverStatus, 15000);
}

document.getElementById('logout').addEventListener('click', async () => {
  try { await api('POST', '/api/logout'); } catch { /* gone anyway */ }
  showLogin('Logged out.');
});

setUnauthorizedHandler(() => { if (session) showLogin('Your session has ended: log in again.'); });

// MARK: routes

async function route() {
  if (!session) return;
  leave();
  const hash = location.hash.slice(1) || '/';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query ?? '');
  try {
    if (path.startsWith('/camera/')) await cameraView(decodeURIComponent(path.slice(8)), params);
    else if (path === '/events') await eventsView();
    else if (path === '/review') {
      const generation = routeGeneration;
      await reviewView({ main, h, toast, isCurrent: () => current(generation), onCleanup: (f) => cleanup.push(f) });
    }
    else if (path === '/discover' && session.role === 'admin') {
      const generation = routeGeneration;
      await discoverView({ main, h, toast, isCurrent: () => current(generation) });
    }
    else await gridView();
    main.focus({ preventScroll: true });
  } catch (e) {
    if (!(e instanceof APIError && e.status === 401)) main.replaceChildren(h('p.error.pad', {}, `Could not load: ${e.message}`));
  }
}
window.addEventListener('hashchange', route);

/// A camera's state for people: "streaming", "reconnecting: connection refused", battery…
function stateLine(c) {
  const reason = c.reason ? `: ${c.reason}` : '';
  const words = { streaming: 'live', stalled: 'not recording', connecting: 'connecting', lost: 'reconnecting', failed: 'failed', stopped: 'stopped' };
  // Detection that cannot run is said to everyone (the camera records on without it).
  const detection = c.detection?.startsWith('failed') ? ` · detection ${c.detection}` : '';
  return `${words[c.state] ?? c.state}${reason}${detection}`;
}

function badge(c) {
  return h(`span.badge.${c.state}`, { title: stateLine(c) }, c.enabled ? (c.state === 'streaming' ? 'live' : c.state) : 'disabled');
}

// MARK: grid

async function gridView() {
  const generation = routeGeneration;
  const { cameras } = await get('/api/cameras');
  if (!current(generation)) return;
  if (cameras.length === 0) {
    main.replaceChildren(h('p.pad.muted', {}, 'No cameras yet. ',
      session.role === 'admin' ? h('a', { href: '#/discover' }, 'Find cameras on the network') : null,
      session.role === 'admin' ? ', or add one with: nvr camera add NAME --plugin rtsp --url rtsp://…' : 'An admin adds them.'));
    return;
  }
  const tiles = cameras.map((c) => {
    const video = h('div.video');
    const status = h('div.status', {}, c.state === 'streaming' ? '' : stateLine(c));
    const summary = c.camera?.summary ? h('div.summary', {}, c.camera.summary) : null;
    const tile = h('a.tile', { href: `#/camera/${encodeURIComponent(c.name)}`, dataset: { camera: c.name } },
      video, h('div.caption', {}, h('strong', {}, c.name), badge(c)), status, summary, c.notes ? h('div.summary', {}, c.notes.join('; ')) : null);
    if (c.enabled) {
      const p = new LivePlayer(video, c.name, { width: 640, stream: 'sub', onState: (state, why) => { status.textContent = state === 'live' ? '' : why; } });
      cleanup.push(() => p.stop());
      tile.player = p;
    }
    return tile;
  });
  main.replaceChildren(h('section.grid', { 'aria-label': 'Cameras' }, tiles));
  // Keep states fresh without reloading the videos.
  const timer = setInterval(async () => {
    try {
      const fresh = await get('/api/cameras');
      for (const c of fresh.cameras) {
        const tile = main.querySelector(`[data-camera="${CSS.escape(c.name)}"]`);
        if (!tile) continue;
        tile.querySelector('.badge').replaceWith(badge(c));
        if (!tile.player || c.state !== 'streaming') tile.querySelector('.status').textContent = c.state === 'streaming' ? '' : stateLine(c);
      }
    } catch { /* the next round */ }
  }, 5000);
  cleanup.push(() => clearInterval(timer));
}

// MARK: one camera

async function cameraView(name, params) {
  const generation = routeGeneration;
  const c = await get(`/api/cameras/${cam(name)}`);
  if (!current(generation)) return;
  // The local day shown, as its midnight.
  let day = parseDay(params.get('day') || dayString(new Date()));
  const stage = h('div.stage');
  const title = h('h1', {}, c.name, ' ', badge(c));
  const where = h('div.where.muted');
  const liveButton = h('button', { type: 'button', title: 'Live (L)' }, 'Live');
  const dayInput = h('input', { type: 'date', value: dayString(day), 'aria-label': 'Day' });
  const prev = h('button', { type: 'button', title: 'Day before', 'aria-label': 'Day before' }, '‹');
  const next = h('button', { type: 'button', title: 'Day after', 'aria-label': 'Day after' }, '›');
  const timelineBox = h('div.timeline-box');
  const eventsBox = h('div.events');
  const downloadBox = downloadForm(name);
  const status = h('p.muted', {}, stateLine(c), c.camera?.summary ? ` — ${c.camera.summary}` : '');
  main.replaceChildren(h('section.camera', {},
    h('div.head', {}, title, h('div.tools', {}, liveButton, prev, dayInput, next)), status, stage, where, timelineBox,
    h('h2', {}, 'Events'), eventsBox, h('h2', {}, 'Download'), downloadBox,
    session.role === 'admin' ? h('details.settings', {}, h('summary', {}, 'Detection'), detectionPanel({ h, name, toast })) : null));

  let live = null, recorded = null;
  const timeline = new Timeline(timelineBox, { onPick: (t) => playFrom(t) });
  const stopAll = () => { live?.stop(); live = null; recorded?.stop(); recorded = null; };
  cleanup.push(stopAll);

  function goLive() {
    stopAll();
    timeline.setCursor(undefined);
    where.textContent = 'Live';
    live = new LivePlayer(stage, name, { width: 1280, onState: (state, why) => { where.textContent = state === 'live' ? `Live (${why})` : why; } });
  }

  async function playFrom(t) {
    // A gap is skipped to the next recording.
    const span = timeline.playableFrom(t);
    if (!span) { toast('Nothing recorded from there on this day.'); return; }
    const from = Math.max(t, span.start90k);
    stopAll();
    recorded = new RecordingPlayer(stage, name, {
      onTime: (now) => { timeline.setCursor(now); where.textContent = `Recorded — ${dateTime(now)}`; },
      onEnd: () => { where.textContent = 'End of the recordings.'; },
    });
    const player = recorded;
    if (!(await player.play(from)) && player === recorded) toast('That moment cannot be played.');
  }

  let dayLoads = 0;
  async function loadDay() {
    const load = ++dayLoads; // only the newest load draws (quick ‹ › clicks, the minute refresh)
    day = parseDay(dayString(day));
    const start = ticks(day.getTime());
    const nextDay = new Date(day); nextDay.setDate(day.getDate() + 1);
    const end = ticks(nextDay.getTime());
    const [tl, ev] = await Promise.all([
      get(`/api/cameras/${cam(name)}/timeline?date=${dayString(day)}&tz=${encodeURIComponent(zone)}`),
      get(`/api/events?camera=${cam(name)}&start=${start}&end=${end}`),
    ]);
    if (load !== dayLoads || !current(generation)) return;
    timeline.show(tl.start90k, tl.end90k, tl.slices, ev.events);
    showEvents(eventsBox, ev.events, (e) => playClip(e));
    dayInput.value = dayString(day);
  }

  function playClip(e) {
    stopAll();
    const v = h('video', { controls: true, autoplay: true, muted: true, playsinline: true, src: e.clip });
    stage.replaceChildren(v);
    where.textContent = `Event: ${e.type} at ${dateTime(e.start90k)}`;
    timeline.setCursor(e.start90k);
  }

  const shiftDay = (n) => { day = new Date(day); day.setDate(day.getDate() + n); loadDay().catch((e) => toast(e.message)); };
  prev.addEventListener('click', () => shiftDay(-1));
  next.addEventListener('click', () => shiftDay(1));
  dayInput.addEventListener('change', () => { if (dayInput.value) { day = parseDay(dayInput.value); loadDay().catch((e) => toast(e.message)); } });
  liveButton.addEventListener('click', goLive);
  const keys = (e) => {
    if (e.target.closest('input, textarea, select')) return;
    if (e.key === 'l' || e.key === 'L') goLive();
    else if (recorded && (e.key === 'ArrowRight' || e.key === 'ArrowLeft') && e.target === document.body) recorded.seekBy(e.key === 'ArrowRight' ? 10 : -10);
    else if (recorded && e.key === ' ' && e.target === document.body) { e.preventDefault(); recorded.video.paused ? recorded.video.play() : recorded.video.pause(); }
  };
  document.addEventListener('keydown', keys);
  cleanup.push(() => document.removeEventListener('keydown', keys));
  // Redraw the day every minute while it is today (new footage).
  const timer = setInterval(() => { if (dayString(day) === dayString(new Date())) loadDay().catch(() => {}); }, 60000);
  cleanup.push(() => clearInterval(timer));

  await loadDay();
  if (!current(generation)) return;
  if (params.get('t')) await playFrom(Number(params.get('t'))); else goLive();
}

function showEvents(box, events, onPlay) {
  if (events.length === 0) { box.replaceChildren(h('p.muted', {}, 'No events.')); return; }
  box.replaceChildren(h('ul.event-list', {}, events.slice().reverse().map((e) => h('li', {},
    h('button.event', { type: 'button', onclick: () => onPlay(e), dataset: { event: e.id } },
      h('img', { src: `${e.snapshot}?width=320`, alt: `${e.type} at ${clock(e.start90k)}`, loading: 'lazy', width: 160, height: 90 }),
      h('span', {}, h('strong', {}, e.label ?? e.type), ` ${e.camera ?? ''}`, e.score && e.source === 'detection' ? h('span.muted', {}, ` ${Math.round(e.score * 100)} %`) : null),
      h('span.muted', {}, `${dateTime(e.start90k)}${e.end90k ? ', ' + duration((e.end90k - e.start90k) / HZ) : ' (in progress)'}`))))));
}

function downloadForm(name) {
  const now = ticks(Date.now());
  const from = h('input', { type: 'datetime-local', step: 1, value: localInput(now - 10 * 60 * HZ), 'aria-label': 'From' });
  const to = h('input', { type: 'datetime-local', step: 1, value: localInput(now), 'aria-label': 'To' });
  const link = h('a.button', { download: '' }, 'Download MP4');
  const update = () => {
    const s = fromLocalInput(from.value), e = fromLocalInput(to.value);
    const ok = Number.isFinite(s) && Number.isFinite(e) && e > s;
    link.href = ok ? `/api/cameras/${cam(name)}/view.mp4?start=${s}&end=${e}` : '#';
    link.setAttribute('download', `${name}-${from.value.replace(/[:T]/g, '')}.mp4`);
    link.classList.toggle('disabled', !ok);
  };
  from.addEventListener('change', update); to.addEventListener('change', update);
  update();
  return h('div.download', {}, h('label', {}, 'From ', from), h('label', {}, 'To ', to), link);
}

// MARK: events of every camera

async function eventsView() {
  const generation = routeGeneration;
  const end = ticks(Date.now()), start = end - 24 * 3600 * HZ;
  const { events } = await get(`/api/events?start=${start}&end=${end}`);
  if (!current(generation)) return;
  const stage = h('div.stage');
  const list = h('div.events');
  main.replaceChildren(h('section.camera', {}, h('h1', {}, 'Events of the last 24 hours'), stage, list));
  stage.hidden = true;
  showEvents(list, events, (e) => {
    stage.hidden = false;
    stage.replaceChildren(h('video', { controls: true, autoplay: true, muted: true, playsinline: true, src: e.clip }),
      h('p.muted', {}, `${e.camera}: ${e.type} at ${dateTime(e.start90k)}`));
    stage.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
  });
}

// MARK: start

(async () => {
  try {
    await started(await get('/api/session'));
  } catch (e) {
    showLogin(e instanceof APIError && e.status === 401 ? '' : `The NVR did not answer: ${e.message}`);
  }
})();
