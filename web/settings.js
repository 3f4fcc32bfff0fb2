// Settings (admins): the cameras — each with its state and a link to its settings — and the
// form that adds one. The form tests the stream first (POST /api/cameras/probe, what
// `nvr camera probe` says) and adds it only when it can be read, unless asked to anyway (a
// camera that is off right now). What the server refuses is said next to its field.
import { api, get, APIError } from './api.js';
import { h, toast, badge, stateLine } from './dom.js';

/// "key=value" lines ↔ an options object (the URL has its own field).
export function optionsText(options) {
  return Object.entries(options).filter(([k]) => k !== 'url').map(([k, v]) => `${k}=${v}`).join('\n');
}
export function parseOptions(text) {
  const out = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const i = line.indexOf('=');
    if (i <= 0) throw new Error(`"${line}" is not key=value`);
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

/// One line about a probed stream.
export function probeLine(r) {
  if (r.pushes) return r.pushes;
  const p = r.probe;
  const parts = [`${p.codec} ${p.width}×${p.height}`];
  if (p.fps) parts.push(`${p.fps.toFixed(1)} fps`);
  if (p.bitRate) parts.push(`${Math.round(p.bitRate / 1000)} kbit/s`);
  parts.push(p.audio ? `audio ${p.audio}` : 'no audio');
  return `Read: ${parts.join(', ')}${p.notes?.length ? ` — ${p.notes.join('; ')}` : ''}`;
}

export async function settingsView({ main, isCurrent }) {
  const [{ cameras }, { plugins }] = await Promise.all([get('/api/cameras'), get('/api/plugins')]);
  if (!isCurrent()) return;
  const list = h('ul.settings-list', { id: 'camera-settings-list' }, cameras.length === 0 ? h('li.muted', {}, 'No cameras yet.') : cameras.map((c) =>
    h('li', {}, h('a', { href: `#/settings/camera/${encodeURIComponent(c.name)}`, dataset: { camera: c.name } }, c.name), ' ', badge(c),
      h('span.muted', {}, ` ${c.plugin} · ${stateLine(c)}`))));
  main.replaceChildren(h('section.camera.settings-page', {},
    h('h1', {}, 'Settings'),
    h('nav.subnav', {}, h('a', { href: '#/settings' }, 'Cameras'), h('a', { href: '#/settings/users' }, 'Users'), h('a', { href: '#/settings/storage' }, 'Storage'), h('a', { href: '#/settings/server' }, 'Server')),
    h('h2', {}, 'Cameras'), list,
    h('h2', {}, 'Add a camera'), addForm(plugins.filter((p) => !p.error))));
}

function addForm(plugins) {
  const name = h('input', { id: 'add-name', required: true, placeholder: 'porch', autocomplete: 'off' });
  const plugin = h('select', { id: 'add-plugin' }, plugins.map((p) => h('option', { value: p.name, selected: p.name === 'rtsp' }, p.name)));
  const url = h('input', { id: 'add-url', placeholder: 'rtsp://192.168.1.20:554/stream1', size: 40, autocomplete: 'off' });
  const options = h('textarea', { id: 'add-options', rows: 3, cols: 40, placeholder: 'user=admin\npassword=…\nsubstream_url=rtsp://…' });
  const nameError = h('p.error', { id: 'add-name-error', role: 'alert' });
  const urlError = h('p.error', { id: 'add-url-error', role: 'alert' });
  const probed = h('p.muted', { id: 'add-probe', 'aria-live': 'polite' });
  const test = h('button', { type: 'button', id: 'add-test' }, 'Test');
  const add = h('button.primary', { type: 'submit', id: 'add-submit' }, 'Add');
  const anyway = h('button', { type: 'button', id: 'add-anyway', hidden: true }, 'Add anyway');

  function settings() {
    const body = { name: name.value.trim(), plugin: plugin.value, options: parseOptions(options.value) };
    if (url.value.trim()) body.url = url.value.trim();
    return body;
  }
  function clear() { nameError.textContent = urlError.textContent = probed.textContent = ''; anyway.hidden = true; }

  async function probe(body) {
    probed.textContent = 'Opening the stream…';
    try {
      const r = await api('POST', '/api/cameras/probe', { plugin: body.plugin, url: body.url, options: body.options });
      probed.textContent = probeLine(r);
      return true;
    } catch (e) {
      probed.textContent = '';
      urlError.textContent = e.message;
      return false;
    }
  }

  async function create(body) {
    try {
      await api('POST', '/api/cameras', body);
      toast(`${body.name} added: it records within seconds.`);
      location.hash = `#/settings/camera/${encodeURIComponent(body.name)}`;
    } catch (e) {
      const byName = e instanceof APIError && (e.status === 409 || /camera name/.test(e.message));
      (byName ? nameError : urlError).textContent = e.message;
    }
  }

  test.addEventListener('click', async () => {
    clear();
    try { await probe(settings()); } catch (e) { urlError.textContent = e.message; }
  });
  anyway.addEventListener('click', async () => { const body = settings(); clear(); await create(body); });
  const form = h('form.add-camera', {
    onsubmit: async (e) => {
      e.preventDefault();
      clear();
      let body;
      try { body = settings(); } catch (err) { urlError.textContent = err.message; return; }
      if (!body.name) { nameError.textContent = 'Give the camera a name.'; return; }
      // Only a stream that can be read is added, unless the admin says so.
      if (!(await probe(body))) { urlError.textContent += ' — nothing was added.'; anyway.hidden = false; return; }
      await create(body);
    },
  },
  h('label', {}, 'Name ', name), nameError,
  h('label', {}, 'Plugin ', plugin),
  h('label', {}, 'URL ', url),
  h('label', {}, 'Options (key=value, one a line) ', options), urlError,
  probed, h('div.fields', {}, test, add, anyway));
  return form;
}
