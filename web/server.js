// Settings › Server (admins): HTTPS — whether this server speaks it, its certificate, and a
// self-signed certificate made for this machine (what `nvr tls self-signed` does; nvr reads
// its certificate at start, so the page gives the two nvr.toml lines and says to restart) —
// the object detector tried on a picture (what `nvr detect PICTURE.jpg` does), and the
// installed plugins with what they can do or why they did not load (`nvr plugins`).
import { api, get } from './api.js';
import { h } from './dom.js';

function certificateLines(c) {
  return [h('li', {}, 'File: ', h('code', {}, c.path)), h('li', {}, 'SHA-256 fingerprint: ', h('code.fingerprint', {}, c.fingerprint)),
    h('li', {}, `Valid until ${new Date(c.notAfter).toLocaleDateString()} for ${c.names.join(', ')}`)];
}

export async function serverView({ main, isCurrent }) {
  // The plugins are a list to read: without them the rest of the page still works.
  const [tls, { plugins }] = await Promise.all([get('/api/tls'), get('/api/plugins').catch(() => ({ plugins: [] }))]);
  if (!isCurrent()) return;
  const made = h('div', { id: 'tls-made', 'aria-live': 'polite' });
  const showMade = (m, config) => made.replaceChildren(
    h('p', {}, 'A self-signed certificate for this machine:'), h('ul', {}, certificateLines(m)),
    config ? h('p', {}, 'Put these lines in nvr.toml, then restart nvr; the page is then at https:// (the browser warns once: compare the fingerprint).') : null,
    config ? h('pre', { id: 'tls-config' }, config) : null);
  if (tls.made) showMade(tls.made, tls.https ? null : tls.config);
  const tlsError = h('p.error', { id: 'tls-error', role: 'alert' });
  const ask = 'Replace the certificate made before? Browsers that trusted it will warn again.';
  const make = h('button', { type: 'button', id: 'tls-make', onclick: async () => {
    tlsError.textContent = '';
    let replace = Boolean(tls.made);
    if (replace && !confirm(ask)) return;
    make.disabled = true;
    try {
      let r;
      try { r = await api('POST', `/api/tls/self-signed${replace ? '?force=true' : ''}`); } catch (err) {
        // Half of one left from before (a key without its certificate): replace it if asked.
        if (err.code !== 'exists' || replace || !confirm(ask)) throw err;
        r = await api('POST', '/api/tls/self-signed?force=true');
      }
      tls.made = r.certificate;
      showMade(r.certificate, r.config);
      make.textContent = 'Make a new self-signed certificate';
    } catch (err) { tlsError.textContent = err.message; }
    make.disabled = false;
  } }, tls.made ? 'Make a new self-signed certificate' : 'Make a self-signed certificate');

  // The detector on a picture: the boxes drawn over it, and what the model said.
  const file = h('input', { type: 'file', id: 'detect-file', accept: 'image/jpeg', 'aria-label': 'A JPEG picture' });
  const detectError = h('p.error', { id: 'detect-error', role: 'alert' });
  const found = h('div', { id: 'detect-found', 'aria-live': 'polite' });
  let shownPicture = null;
  const run = h('button', { type: 'button', id: 'detect-run', onclick: async () => {
    detectError.textContent = '';
    const picture = file.files[0];
    if (!picture) { detectError.textContent = 'Choose a JPEG picture first.'; return; }
    run.disabled = true;
    found.replaceChildren(h('p.muted', {}, 'Looking…'));
    try {
      const r = await api('POST', '/api/detect', picture.type ? picture : new Blob([picture], { type: 'image/jpeg' }));
      if (shownPicture) URL.revokeObjectURL(shownPicture);
      shownPicture = URL.createObjectURL(picture);
      const img = h('img', { src: shownPicture, alt: 'the picture looked at' });
      // Placed through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      const boxes = r.detections.map((d) => {
        const b = h('div.found-box', {}, `${d.label} ${Math.round(d.score * 100)} %`);
        Object.assign(b.style, { left: `${d.box[0] * 100}%`, top: `${d.box[1] * 100}%`, width: `${d.box[2] * 100}%`, height: `${d.box[3] * 100}%` });
        return b;
      });
      found.replaceChildren(
        h('p', { id: 'detect-summary' }, r.detections.length ? `Found: ${r.detections.map((d) => `${d.label} (${Math.round(d.score * 100)} %)`).join(', ')}.` : 'Found nothing at a score of 50 % or more.'),
        h('div.detect-picture', {}, img, boxes),
        h('p.muted', {}, `${r.model} (${r.layout}, ${r.input}) on ${r.runtime}: ${r.medianMs.toFixed(0)} ms.`));
    } catch (err) { found.replaceChildren(); detectError.textContent = err.message; }
    run.disabled = false;
  } }, 'Look');

  main.replaceChildren(h('section.camera.settings-page', {},
    h('h1', {}, h('a', { href: '#/settings' }, 'Settings'), ' › Server'),
    h('h2', {}, 'HTTPS'),
    tls.https ? h('div', { id: 'tls-status' }, h('p', {}, 'This server speaks HTTPS with:'),
      tls.certificate ? h('ul', {}, certificateLines(tls.certificate)) : h('p.muted', {}, 'its certificate (which this page cannot read).'))
      : h('p', { id: 'tls-status' }, 'This server speaks plain HTTP: passwords and video cross the network in clear.'),
    h('div.fields', {}, make), tlsError, made,
    h('h2', {}, 'Object detector'),
    h('p.muted', {}, 'Try the detector ([detect] in nvr.toml) on a picture of your own scene: what it finds and how long it takes.'),
    h('div.fields', {}, file, run), detectError, found,
    h('h2', {}, 'Plugins'),
    h('table.audit', { id: 'plugin-list' }, h('tr', {}, ['Plugin', 'Version', 'Can', 'Description'].map((t) => h('th', {}, t))),
      plugins.map((p) => h('tr', { dataset: { plugin: p.name } }, h('td', {}, p.name), h('td', {}, p.version ?? '—'),
        h('td', {}, p.error ? h('span.error', {}, `not loaded: ${p.error}`) : p.capabilities.join(', ')), h('td', {}, p.description ?? ''))))));
}
