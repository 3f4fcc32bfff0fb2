// "Add cameras" (admins): what the plugins find on the LAN (GET /api/discover), each with a
// form that adds it (POST /api/cameras) — its name, and the secrets only the user knows.
import { api, get, APIError } from './api.js';

const SECONDS = 3;

/// Draws the view into `main`; `h` builds elements, `toast` says what happened, `isCurrent`
/// is false once the user has moved on.
export async function discoverView({ main, h, toast, isCurrent }) {
  const results = h('div.found', { 'aria-live': 'polite' });
  const look = h('button.primary', { type: 'button', id: 'look' }, 'Look for cameras');
  main.replaceChildren(h('section.discover', {},
    h('h1', {}, 'Add cameras'),
    h('p.muted', {}, `Cameras on this NVR's networks that answer (ONVIF WS-Discovery) within ${SECONDS} seconds. `
      + 'A camera that does not answer can be added with nvr camera add.'),
    look, results));

  async function search() {
    look.disabled = true;
    results.replaceChildren(h('p.muted', {}, 'Looking…'));
    try {
      const r = await get(`/api/discover?seconds=${SECONDS}`);
      if (!isCurrent()) return;
      const errors = Object.entries(r.errors ?? {}).map(([p, why]) => h('p.error', {}, `${p}: ${why}`));
      if (r.found.length === 0) {
        results.replaceChildren(h('p.muted', {}, `Nothing answered in ${r.seconds} s (looked with: ${r.plugins.join(', ') || 'no plugin'}).`), ...errors);
      } else {
        results.replaceChildren(h('ul.found-list', {}, r.found.map(row)), ...errors);
      }
    } catch (e) {
      if (isCurrent()) results.replaceChildren(h('p.error', {}, `Could not look: ${e.message}`));
    } finally {
      look.disabled = false;
    }
  }

  function added(name) {
    return h('span.muted', {}, 'added as ', h('a', { href: `#/camera/${encodeURIComponent(name)}` }, name));
  }

  function row(f) {
    const title = [f.name, f.model].filter(Boolean).join(' · ') || f.address;
    const li = h('li.found-row', { dataset: { address: f.address, plugin: f.plugin } },
      h('div', {}, h('strong', {}, title), h('div.muted', {}, `${f.plugin} at ${f.address}`)));
    if (f.addedAs) { li.append(added(f.addedAs)); return li; }
    const name = h('input', { name: 'name', value: f.suggestedName, 'aria-label': 'Camera name', required: true, size: 14 });
    const secrets = f.needs.map((k) => h('input', {
      name: k, placeholder: k, 'aria-label': k, required: k !== 'password',
      type: /pass|secret|local_key/.test(k) ? 'password' : 'text', autocomplete: 'off', size: 12,
    }));
    const error = h('span.error', { role: 'alert' });
    const form = h('form.add-found', {
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        const options = { ...f.options };
        for (const s of secrets) if (s.value !== '') options[s.name] = s.value;
        try {
          await api('POST', '/api/cameras', { name: name.value.trim(), plugin: f.plugin, options });
          toast(`Added ${name.value.trim()}: recording starts within seconds.`);
          form.replaceWith(added(name.value.trim()));
        } catch (err) {
          error.textContent = err instanceof APIError ? err.message : 'The NVR did not answer.';
        }
      },
    }, name, ...secrets, h('button', { type: 'submit' }, 'Add'), error);
    li.append(form);
    return li;
  }

  look.addEventListener('click', search);
  await search();
}
