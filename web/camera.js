// One camera large: live, or recorded playback from any moment of its day on the timeline;
// its events with their clips; a download of any range; pan, tilt, zoom and talk for who may; for
// admins: deleting a range or an event, the memory card, detection settings.
import { api, get, cam } from './api.js';
import { LivePlayer } from './live.js';
import { RecordingPlayer } from './player.js';
import { Timeline } from './timeline.js';
import { detectionPanel } from './detection.js';
import { showEvents, deleteEvent } from './events.js';
import { cardPanel } from './card.js';
import { ptzControls } from './ptz.js';
import { talkButton } from './talk.js';
import { h, toast, badge, stateLine, narrowScreen, formatBytes } from './dom.js';
import { HZ, ticks, dayString, parseDay, dateTime, zone, localInput, fromLocalInput } from './time.js';

/// Draws camera `name` into `main`; `params` are the route's (day=YYYY-MM-DD, t=ticks to play from).
export async function cameraView({ main, session, isCurrent, onCleanup }, name, params) {
  const c = await get(`/api/cameras/${cam(name)}`);
  if (!isCurrent()) return;
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
  const admin = session.role === 'admin';
  const downloadBox = downloadForm(name, admin ? () => loadDay().catch((e) => toast(e.message)) : null);
  const card = admin ? cardPanel(name, () => loadDay().catch((e) => toast(e.message))) : null;
  const status = h('p.muted', {}, stateLine(c), c.camera?.summary ? ` — ${c.camera.summary}` : '');
  const ptz = ptzControls(name, stage);
  onCleanup(() => ptz.dispose());
  const talk = talkButton(name, session);
  onCleanup(() => talk.dispose());
  main.replaceChildren(h('section.camera', {},
    h('div.head', {}, title, h('div.tools', {}, talk.button, liveButton, prev, dayInput, next)), status, ptz.wrap, ptz.presets, where, timelineBox,
    h('h2', {}, 'Events'), eventsBox, h('h2', {}, 'Download'), downloadBox, card?.box,
    admin ? h('details.settings', { id: 'detection-settings' }, h('summary', {}, 'Detection'), detectionPanel({ h, name, toast })) : null));

  let live = null, recorded = null;
  const timeline = new Timeline(timelineBox, { onPick: (t) => playFrom(t) });
  onCleanup(() => timeline.stop());
  get(`/api/cameras/${cam(name)}/recording-settings`).then((r) => {
    timeline.alertLabels = new Set(r.detect?.alert_labels ?? ['person']);
    if (timeline.start !== undefined) timeline.draw();
  }).catch(() => { /* the default: person */ });
  const stopAll = () => { live?.stop(); live = null; recorded?.stop(); recorded = null; ptz.setLive(false); };
  onCleanup(stopAll);

  function goLive() {
    stopAll();
    timeline.setCursor(undefined);
    ptz.setLive(true);
    where.textContent = 'Live';
    live = new LivePlayer(stage, name, { width: 1280, stream: narrowScreen() ? 'sub' : 'main', onState: (state, why) => { where.textContent = state === 'live' ? `Live (${why})` : why; } });
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
    if (load !== dayLoads || !isCurrent()) return;
    timeline.show(tl.start90k, tl.end90k, tl.slices, ev.events);
    showEvents(eventsBox, ev.events, (e) => playClip(e), admin ? async (e) => {
      const gone = await deleteEvent(e);
      if (gone) loadDay().catch(() => {}); // its mark leaves the bar too
      return gone;
    } : undefined);
    card?.show(start, end);
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
  onCleanup(() => document.removeEventListener('keydown', keys));
  // Redraw the day every minute while it is today (new footage).
  const timer = setInterval(() => { if (dayString(day) === dayString(new Date())) loadDay().catch(() => {}); }, 60000);
  onCleanup(() => clearInterval(timer));

  await loadDay();
  if (!isCurrent()) return;
  if (params.get('t')) await playFrom(Number(params.get('t'))); else goLive();
}

/// `onDeleted` (admins): a "Delete" of the range too, then `onDeleted` redraws the day.
function downloadForm(name, onDeleted) {
  const now = ticks(Date.now());
  const from = h('input', { type: 'datetime-local', step: 1, value: localInput(now - 10 * 60 * HZ), 'aria-label': 'From' });
  const to = h('input', { type: 'datetime-local', step: 1, value: localInput(now), 'aria-label': 'To' });
  const link = h('a.button', { download: '' }, 'Download MP4');
  const more = h('a', { id: 'export-more' }, 'With other cameras, or as a timelapse…');
  // Keep: retention never deletes a kept range (design/retention.md); the note says why.
  const note = h('input', { id: 'keep-note', placeholder: 'why keep it (optional)', size: 24, 'aria-label': 'Note' });
  const keepError = h('p.error', { id: 'keep-error', role: 'alert' });
  const keep = h('button', { type: 'button', id: 'keep-range', onclick: async () => {
    keepError.textContent = '';
    const s = fromLocalInput(from.value), e = fromLocalInput(to.value);
    try {
      await api('POST', '/api/clips', { camera: name, start: String(s), end: String(e), note: note.value.trim() });
      note.value = '';
      toast('Kept: retention will not delete this range (Settings › Storage lists kept clips).');
    } catch (err) { keepError.textContent = err.message; }
  } }, 'Keep');
  const update = () => {
    const s = fromLocalInput(from.value), e = fromLocalInput(to.value);
    const ok = Number.isFinite(s) && Number.isFinite(e) && e > s;
    link.href = ok ? `/api/cameras/${cam(name)}/view.mp4?start=${s}&end=${e}` : '#';
    link.setAttribute('download', `${name}-${from.value.replace(/[:T]/g, '')}.mp4`);
    link.classList.toggle('disabled', !ok);
    more.href = `#/export?cameras=${cam(name)}` + (ok ? `&start=${s}&end=${e}` : '');
  };
  // Delete: the segments wholly inside the range go (never a kept clip's); nothing else.
  const remove = onDeleted ? h('button', { type: 'button', id: 'delete-range', onclick: async () => {
    keepError.textContent = '';
    const s = fromLocalInput(from.value), e = fromLocalInput(to.value);
    if (!(Number.isFinite(s) && Number.isFinite(e) && e > s)) { keepError.textContent = 'Choose a range whose end is after its start.'; return; }
    if (!confirm(`Delete ${name}'s recordings from ${dateTime(s)} to ${dateTime(e)}? Segments wholly inside the range go for good; kept clips stay.`)) return;
    try {
      const r = await api('DELETE', `/api/cameras/${cam(name)}/recordings?start=${s}&end=${e}`);
      toast(`Deleted ${r.segmentsDeleted} segments (${formatBytes(r.bytesDeleted)})${r.segmentsKept ? `; ${r.segmentsKept} kept by a clip` : ''}.`);
      onDeleted();
    } catch (err) { keepError.textContent = err.message; }
  } }, 'Delete recordings') : null;
  from.addEventListener('change', update); to.addEventListener('change', update);
  update();
  return h('div', {}, h('div.download', {}, h('label', {}, 'From ', from), h('label', {}, 'To ', to), link, more),
    h('div.download', {}, note, keep, remove), keepError);
}
