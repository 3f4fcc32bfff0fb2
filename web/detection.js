// A camera's object detection, for admins (the camera view's "Detection" section): what to
// detect, when it is an alert, what to record on, and zones drawn on the camera's picture —
// click points on it, name the zone, save. Saved with PUT /api/cameras/{name}/recording-settings;
// what the server refuses is said next to the field, and nothing of that save is kept.
import { api, get, cam } from './api.js';

/// Returns the section's element; `h` builds elements, `toast` says what happened.
export function detectionPanel({ h, name, toast }) {
  const box = h('div.detection', { id: 'detection' });
  const error = h('p.error', { id: 'detection-error', role: 'alert' });
  const labels = h('input', { id: 'detect-labels', placeholder: 'person (empty: off)', 'aria-label': 'Detect' });
  const minScore = h('input', { id: 'detect-min-score', type: 'number', step: '0.05', min: '0.05', max: '0.95', 'aria-label': 'Minimum score' });
  const recordOn = h('input', { id: 'record-on', placeholder: 'all', 'aria-label': 'Record on' });
  const alerts = h('input', { id: 'alert-labels', placeholder: 'person', 'aria-label': 'Alert labels' });
  const required = h('input', { id: 'required-zones', placeholder: 'person=driveway', 'aria-label': 'Required zones' });
  const state = h('p.muted', { id: 'detection-state' });
  const picture = h('img', { id: 'zone-picture', alt: `${name}, to draw zones on`, src: `/api/cameras/${cam(name)}/snapshot.jpg?width=640` });
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 1 1');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.id = 'zone-overlay';
  const canvas = h('div.zone-canvas', {}, picture, svg);
  const zoneName = h('input', { id: 'zone-name', placeholder: 'driveway', 'aria-label': 'Zone name' });
  const zoneList = h('ul.zone-list', { id: 'zone-list' });
  let zones = [], drawing = [];

  function polygon(points, cls) {
    const p = document.createElementNS('http://www.w3.org/2000/svg', points.length > 2 ? 'polygon' : 'polyline');
    p.setAttribute('points', points.map(([x, y]) => `${x},${y}`).join(' '));
    p.setAttribute('class', cls);
    return p;
  }
  function draw() {
    svg.replaceChildren(...zones.map((z) => polygon(z.points, 'zone')), polygon(drawing, 'drawing'));
    zoneList.replaceChildren(...zones.map((z) => h('li', {}, `${z.name} (${z.points.length} points) `,
      h('button', { type: 'button', 'data-zone': z.name, onclick: () => save({ removeZones: [z.name] }) }, 'Remove'))));
  }
  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const x = Math.min(Math.max((e.clientX - r.left) / r.width, 0), 1), y = Math.min(Math.max((e.clientY - r.top) / r.height, 0), 1);
    drawing.push([Math.round(x * 1000) / 1000, Math.round(y * 1000) / 1000]);
    draw();
  });

  // `saved`: the settings a PUT just answered with (no need to ask for them again).
  async function load(saved) {
    const [s, c] = await Promise.all([saved ?? get(`/api/cameras/${cam(name)}/recording-settings`), get(`/api/cameras/${cam(name)}`)]);
    const d = s.detect;
    labels.value = d.labels.join(','); minScore.value = d.min_score; recordOn.value = d.record_on.join(',');
    alerts.value = d.alert_labels.join(',');
    required.value = Object.entries(d.required_zones).map(([l, z]) => `${l}=${z.join(',')}`).join(' ');
    zones = d.zones;
    // A server applies saved settings within seconds: until then the camera says nothing.
    state.textContent = `Detection: ${c.detection ?? (d.labels.length ? 'starting' : 'off')}`;
    draw();
  }

  async function save(change) {
    error.textContent = '';
    try {
      await load(await api('PUT', `/api/cameras/${cam(name)}/recording-settings`, change));
      toast('Detection settings saved.');
      return true;
    } catch (e) { error.textContent = e.message; return false; }
  }

  const saveButton = h('button.primary', { type: 'button', id: 'detect-save', onclick: () => save({
    detect: labels.value.trim() || 'off', detectMinScore: Number(minScore.value), recordOn: recordOn.value.trim() || 'all',
    alertLabels: alerts.value.trim(), requiredZones: required.value.split(/\s+/).filter(Boolean),
  }) }, 'Save');
  const addZone = h('button', { type: 'button', id: 'zone-save', onclick: async () => {
    const text = `${zoneName.value.trim()}=${drawing.map(([x, y]) => `${x},${y}`).join(' ')}`;
    if (await save({ addZones: [text] })) { drawing = []; zoneName.value = ''; draw(); }
  } }, 'Save zone');
  const clear = h('button', { type: 'button', id: 'zone-clear', onclick: () => { drawing = []; draw(); } }, 'Clear points');

  box.append(state,
    h('div.fields', {},
      h('label', {}, 'Detect ', labels), h('label', {}, 'Min score ', minScore), h('label', {}, 'Record on ', recordOn),
      h('label', {}, 'Alerts ', alerts), h('label', {}, 'Required zones ', required), saveButton),
    error,
    h('p.muted', {}, 'Zones: click the picture to add points (at least 3), name the zone, save it. An object is in a zone where its feet are.'),
    canvas, h('div.fields', {}, h('label', {}, 'Zone name ', zoneName), addZone, clear), zoneList);
  load().catch((e) => { error.textContent = `Could not load the settings: ${e.message}`; });
  return box;
}
