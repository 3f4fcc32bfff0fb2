// One camera's settings (admins): its connection (URL, options with secrets shown as set and
// never sent back, name, enabled), what its plugin reports, how it records (mode, the weekly
// schedule painted on a grid, pre- and post-roll), motion (sensitivity, smallest area, masks
// drawn on its picture, and what the detector sees now over live video), and removing it with or without its recordings. Each part saves on
// its own; what the server refuses is said under that part, and nothing of it is kept.
import { api, get, cam, APIError } from './api.js';
import { LivePlayer } from './live.js';
import { h, toast, badge, stateLine } from './dom.js';
import { optionsText, parseOptions, probeLine } from './settings.js';
import { MODES, exactly, parseSchedule, scheduleGrid, scheduleText } from './schedule-grid.js';
import { polygonEditor } from './polygon-editor.js';
import { zone } from './time.js';

export async function cameraSettingsView({ main, isCurrent, onCleanup }, name) {
  const [c, config, rec] = await Promise.all([
    get(`/api/cameras/${cam(name)}`), get(`/api/cameras/${cam(name)}/config`), get(`/api/cameras/${cam(name)}/recording-settings`)]);
  if (!isCurrent()) return;
  main.replaceChildren(h('section.camera.settings-page', {},
    h('div.head', {}, h('h1', {}, h('a', { href: '#/settings' }, 'Settings'), ' › ', c.name, ' ', badge(c)),
      h('a', { href: `#/camera/${cam(c.name)}` }, 'Watch')),
    h('p.muted', { id: 'camera-state' }, stateLine(c)),
    pluginStatus(c),
    h('h2', {}, 'Connection'), connection(c, config),
    h('h2', {}, 'Recording'), recording(c.name, rec),
    h('h2', {}, 'Motion'), motion(c.name, rec, onCleanup),
    h('h2', {}, 'Remove'), removal(c.name)));
}

/// What the camera's plugin reports (battery, card, clock offset, subscription…).
function pluginStatus(c) {
  const s = c.camera;
  if (!s || typeof s !== 'object') return null;
  const rows = Object.entries(s).filter(([, v]) => v !== null && typeof v !== 'object');
  return rows.length ? h('dl.plugin-status', { id: 'plugin-status' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])) : null;
}

function connection(c, config) {
  const name = h('input', { id: 'edit-name', value: c.name });
  const url = h('input', { id: 'edit-url', value: config.options.url ?? '', size: 40 });
  const options = h('textarea', { id: 'edit-options', rows: 3, cols: 40 }, optionsText(config.options));
  const enabled = h('input', { id: 'edit-enabled', type: 'checkbox', checked: config.enabled });
  const error = h('p.error', { id: 'connection-error', role: 'alert' });
  const probed = h('p.muted', { id: 'edit-probe', 'aria-live': 'polite' });
  const anyway = h('button', { type: 'button', id: 'edit-anyway', hidden: true }, 'Save anyway');
  const original = { url: config.options.url ?? '', options: optionsText(config.options) };

  function change() {
    const now = parseOptions(options.value);
    const before = parseOptions(original.options);
    const body = {};
    if (name.value.trim() !== c.name) body.name = name.value.trim();
    if (url.value.trim() !== original.url) body.url = url.value.trim();
    const opts = {};
    for (const [k, v] of Object.entries(now)) if (before[k] !== v) opts[k] = v;
    for (const k of Object.keys(before)) if (!(k in now)) opts[k] = null;
    if (Object.keys(opts).length) body.options = opts;
    if (enabled.checked !== config.enabled) body.enabled = enabled.checked;
    return body;
  }
  async function probe() {
    probed.textContent = 'Opening the stream…';
    try {
      // The URL and options as shown (secrets as *** and ***@): the server puts the stored ones back.
      const r = await api('POST', '/api/cameras/probe', { plugin: config.plugin, camera: c.name, url: url.value.trim() || undefined, options: parseOptions(options.value) });
      probed.textContent = probeLine(r);
      return true;
    } catch (e) { probed.textContent = ''; error.textContent = e.message; return false; }
  }
  async function save(body) {
    try {
      const saved = await api('PATCH', `/api/cameras/${cam(c.name)}`, body);
      toast(`${saved.name} saved: it reconnects within seconds.`);
      // A new name is a new page; otherwise only this form takes what was saved (the other
      // parts may hold changes not saved yet).
      if (saved.name !== c.name) { location.hash = `#/settings/camera/${encodeURIComponent(saved.name)}`; return; }
      const fresh = await get(`/api/cameras/${cam(c.name)}/config`);
      Object.assign(config, fresh);
      original.url = fresh.options.url ?? '';
      original.options = optionsText(fresh.options);
      url.value = original.url;
      options.value = original.options;
      enabled.checked = fresh.enabled;
      connection.dataset.saved = String(Number(connection.dataset.saved ?? 0) + 1);
    } catch (e) { error.textContent = e.message; }
  }
  const test = h('button', { type: 'button', id: 'edit-test', onclick: async () => { error.textContent = ''; try { await probe(); } catch (e) { error.textContent = e.message; } } }, 'Test');
  const submit = h('button.primary', { type: 'submit', id: 'edit-save' }, 'Save');
  anyway.addEventListener('click', async () => { error.textContent = ''; anyway.hidden = true; await save(change()); });
  const connection = h('form.fields.column', {
    id: 'connection',
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = ''; anyway.hidden = true;
      let body;
      try { body = change(); } catch (err) { error.textContent = err.message; return; }
      if (Object.keys(body).length === 0) { toast('Nothing changed.'); return; }
      // A new URL or new options are tried first: a typo must not stop the recording unasked.
      if ((body.url !== undefined || body.options) && config.enabled && enabled.checked && !(await probe())) {
        error.textContent += ' — nothing was saved.'; anyway.hidden = false; return;
      }
      await save(body);
    },
  },
  h('label', {}, 'Name ', name), h('label', {}, 'URL ', url),
  h('label', {}, 'Options (key=value, one a line; *** is a secret that is set) ', options),
  h('label.check', {}, enabled, ' Enabled (records)'), error, probed, h('div.fields', {}, test, submit, anyway));
  return connection;
}

function recording(name, rec) {
  const mode = h('select', { id: 'rec-mode' }, MODES.map((m) => h('option', { value: m, selected: m === rec.mode }, m)));
  const useSchedule = h('input', { id: 'rec-use-schedule', type: 'checkbox', checked: !!rec.schedule });
  const tz = h('input', { id: 'rec-tz', value: rec.tz ?? '', placeholder: `the server's (this browser: ${zone})`, size: 24 });
  const pre = h('input', { id: 'rec-pre-roll', type: 'number', step: 1, value: rec.preRollSeconds, size: 5 });
  const post = h('input', { id: 'rec-post-roll', type: 'number', step: 1, value: rec.postRollSeconds, size: 5 });
  const error = h('p.error', { id: 'recording-error', role: 'alert' });
  const text = h('code.muted', { id: 'rec-schedule-text' });
  let grid = parseSchedule(rec.schedule, rec.mode);
  let fallback = rec.mode;
  // The schedule is sent only once painted, its mode changed or it is switched on or off: a
  // save of the pre-roll leaves it as it is.
  let touched = false;
  const caveat = exactly(rec.schedule, rec.mode) ? null
    : h('p.muted', { id: 'rec-schedule-caveat' }, `The schedule "${rec.schedule}" has times the grid rounds to hours: it stays as it is unless you paint it.`);
  const gridBox = h('div', { id: 'rec-schedule', hidden: !rec.schedule });
  const show = () => { text.textContent = scheduleText(grid, mode.value) || '(every hour as the mode)'; };
  const drawGrid = () => gridBox.replaceChildren(caveat ?? '', scheduleGrid(h, grid, () => { touched = true; show(); }), h('p', {}, 'As text: ', text), h('label', {}, 'Time zone ', tz));
  useSchedule.addEventListener('change', () => { gridBox.hidden = !useSchedule.checked; touched = true; });
  tz.addEventListener('change', () => { touched = true; });
  // Hours left as the mode follow it: only painted hours keep their own.
  mode.addEventListener('change', () => {
    grid = grid.map((hours) => hours.map((m) => (m === fallback ? mode.value : m)));
    fallback = mode.value;
    touched = true;
    drawGrid();
    show();
  });
  drawGrid();
  show();
  return h('form.fields.column', {
    id: 'recording',
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      const schedule = useSchedule.checked ? scheduleText(grid, mode.value) : '';
      if (touched && useSchedule.checked && !schedule) {
        error.textContent = `The schedule is "${mode.value}" all week, the same as the mode: paint the hours that differ, or untick the schedule.`;
        return;
      }
      const body = { mode: mode.value, preRollSeconds: Number(pre.value), postRollSeconds: Number(post.value) };
      if (touched) {
        body.schedule = schedule;
        if (schedule && tz.value.trim()) body.tz = tz.value.trim();
      }
      try {
        const saved = await api('PUT', `/api/cameras/${cam(name)}/recording-settings`, body);
        grid = parseSchedule(saved.schedule, saved.mode);
        fallback = saved.mode;
        touched = false;
        drawGrid();
        show();
        toast('Recording settings saved.');
      } catch (err) { error.textContent = err.message; }
    },
  },
  h('label', {}, 'Mode ', mode),
  h('label.check', {}, useSchedule, ' A weekly schedule (hours it does not paint use the mode)'), gridBox,
  h('div.fields', {}, h('label', {}, 'Pre-roll (s) ', pre), h('label', {}, 'Post-roll (s) ', post)),
  error, h('div.fields', {}, h('button.primary', { type: 'submit', id: 'rec-save' }, 'Save recording')));
}

/// Live video with what the motion detector sees drawn over it: the changed pixels' box (red
/// while an event is in progress) and how much changed against what counts, twice a second.
function motionNow(name, onCleanup) {
  const video = h('div.video');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 1 1');
  svg.setAttribute('preserveAspectRatio', 'none');
  const line = h('p.muted', { id: 'motion-now', 'aria-live': 'off' }, 'Waiting for the detector…');
  const box = h('div.zone-canvas.motion-live', {}, video, svg);
  const player = new LivePlayer(video, name, { width: 640, stream: 'sub' });
  let stopped = false;
  async function poll() {
    if (stopped) return;
    try {
      const { look } = await get(`/api/cameras/${cam(name)}/motion`);
      if (!look) {
        svg.replaceChildren();
        line.textContent = 'The detector is not looking (motion detection runs in events mode, or when set on).';
      } else {
        const pct = (x) => `${(x * 100).toFixed(x < 0.1 ? 2 : 1)} %`;
        line.textContent = `Changed now: ${pct(look.changed)} of the picture; motion counts from ${pct(look.threshold)}.`
          + (look.inMotion ? ' Motion event in progress.' : '');
        svg.replaceChildren();
        if (look.box) {
          const r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
          const [x, y, w, hgt] = look.box;
          r.setAttribute('x', x); r.setAttribute('y', y); r.setAttribute('width', w); r.setAttribute('height', hgt);
          r.setAttribute('class', look.inMotion ? 'motion-box moving' : 'motion-box');
          svg.append(r);
        }
      }
    } catch { /* the next round */ }
    setTimeout(poll, 500);
  }
  onCleanup(() => { stopped = true; player.stop(); });
  poll();
  return h('div', {}, h('p.muted', {}, 'What the detector sees now:'), box, line);
}

function motion(name, rec, onCleanup) {
  const enabled = h('select', { id: 'motion-enabled' }, ['auto', 'on', 'off'].map((m) => h('option', { value: m, selected: m === rec.motion.enabled }, m)));
  const sensitivity = h('input', { id: 'motion-sensitivity', type: 'number', min: 1, max: 100, value: rec.motion.sensitivity, size: 5 });
  const minArea = h('input', { id: 'motion-min-area', type: 'number', step: 0.1, min: 0, value: rec.motion.min_area, size: 5 });
  const error = h('p.error', { id: 'motion-error', role: 'alert' });
  let masks = rec.motion.masks ?? [];
  const put = async (change, what) => {
    error.textContent = '';
    try {
      const saved = await api('PUT', `/api/cameras/${cam(name)}/recording-settings`, change);
      masks = saved.motion.masks ?? [];
      toast(what);
      return true;
    } catch (e) { error.textContent = e.message; return false; }
  };
  const asText = (points) => points.map(([x, y]) => `${x},${y}`).join(' ');
  const editor = polygonEditor(h, {
    id: 'mask', noun: 'mask', src: `/api/cameras/${cam(name)}/snapshot.jpg?width=640`, alt: `${name}, to draw masks on`,
    shapes: () => masks, error,
    onSave: (points) => put({ addMotionMasks: [asText(points)] }, 'Mask saved: motion there is ignored.'),
    onRemove: (i) => put({ motionMasks: masks.filter((_, k) => k !== i).map(asText) }, 'Mask removed.'),
  });
  editor.redraw();
  return h('div', {},
    h('form.fields', {
      id: 'motion',
      onsubmit: async (e) => {
        e.preventDefault();
        await put({ motion: enabled.value, motionSensitivity: Number(sensitivity.value), motionMinArea: Number(minArea.value) }, 'Motion settings saved.');
      },
    }, h('label', {}, 'Motion detection ', enabled), h('label', {}, 'Sensitivity (1–100) ', sensitivity),
    h('label', {}, 'Smallest area (% of the picture) ', minArea), h('button.primary', { type: 'submit', id: 'motion-save' }, 'Save motion')),
    motionNow(name, onCleanup),
    h('p.muted', {}, 'Masks: parts of the picture where motion is ignored (a road, a tree). Click the picture at the corners, then save.'),
    error, editor);
}

function removal(name) {
  const keep = h('input', { type: 'radio', name: 'recordings', value: 'keep', checked: true, id: 'remove-keep' });
  const drop = h('input', { type: 'radio', name: 'recordings', value: 'delete', id: 'remove-delete' });
  const error = h('p.error', { id: 'remove-error', role: 'alert' });
  const button = h('button.danger', { type: 'button', id: 'remove-camera' }, `Remove ${name}`);
  button.addEventListener('click', async () => {
    const recordings = drop.checked ? 'delete' : 'keep';
    if (!confirm(recordings === 'delete' ? `Remove ${name} and delete all its recordings?` : `Remove ${name}? Its recordings stay.`)) return;
    try {
      await api('DELETE', `/api/cameras/${cam(name)}?recordings=${recordings}`);
      toast(`${name} removed${recordings === 'delete' ? ' with its recordings' : '; its recordings stay'}.`);
      location.hash = '#/settings';
    } catch (e) { error.textContent = e instanceof APIError ? e.message : String(e); }
  });
  return h('div.fields', {}, h('label.check', {}, keep, ' keep its recordings'), h('label.check', {}, drop, ' delete its recordings'), button, error);
}
