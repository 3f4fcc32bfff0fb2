// Storage (admins): what each camera keeps (bytes, days since its oldest footage) and its
// limits (days of continuous and of event footage, a size cap); the storage-wide cap and the
// free space to keep; the file system's size and free space; the kept clips with their
// notes; and the integrity check (`nvr db check`) with what it found. Limits are saved
// together (PUT /api/retention); what the server refuses is said under the form.
import { api, get } from './api.js';
import { h, toast, formatBytes } from './dom.js';
import { HZ, ticks, dateTime } from './time.js';

/// A size field in GB ("" = no cap) → bytes or null; NaN when it is not a size.
const gigabytes = (s) => (s.trim() === '' ? null : Number(s) >= 0 ? Math.round(Number(s) * 1e9) : NaN);
const days = (s) => (s.trim() === '' ? null : Number(s) > 0 ? Number(s) : NaN);
const field = (id, value, label) => h('input', { id, value: value ?? '', size: 6, inputmode: 'decimal', 'aria-label': label });

export async function storageView(ctx) {
  const { main, isCurrent } = ctx;
  const [r, { clips }] = await Promise.all([get('/api/retention'), get('/api/clips')]);
  if (!isCurrent()) return;
  const now = ticks(Date.now());
  const error = h('p.error', { id: 'retention-error', role: 'alert' });
  const cap = field('storage-cap', r.storage.maxBytes === null || r.storage.maxBytes === undefined ? '' : r.storage.maxBytes / 1e9, 'Storage cap (GB)');
  const minFree = field('storage-min-free', r.storage.minFreePercent, 'Free space to keep (%)');
  const rows = r.cameras.map((c) => ({
    camera: c.camera,
    continuous: field(`keep-continuous-${c.camera}`, c.continuousDays, `${c.camera}: days of continuous footage`),
    events: field(`keep-events-${c.camera}`, c.eventDays, `${c.camera}: days of event footage`),
    max: field(`keep-max-${c.camera}`, c.maxBytes === null || c.maxBytes === undefined ? '' : c.maxBytes / 1e9, `${c.camera}: size cap (GB)`),
    c,
  }));
  const total = r.cameras.reduce((s, c) => s + c.bytes, 0);
  const fs = r.storage.fileSystemBytes ? `${formatBytes(r.storage.freeBytes)} free of ${formatBytes(r.storage.fileSystemBytes)}` : 'unknown';
  const checkResult = h('div', { id: 'check-result', 'aria-live': 'polite' });
  const deep = h('input', { type: 'checkbox', id: 'check-deep' });
  const passResult = h('div', { id: 'retention-result', 'aria-live': 'polite' });
  // One pass (POST /api/retention/run), or its preview: what goes, per camera.
  async function runRetention(button, dryRun) {
    if (!dryRun && !confirm('Delete now what the limits say must go? This cannot be undone.')) return;
    button.disabled = true;
    try {
      const r = await api('POST', `/api/retention/run?dryRun=${dryRun}`);
      const verb = dryRun ? 'would delete' : 'deleted';
      const reasons = Object.entries(r.reasons).map(([k, n]) => `${n} for ${k}`).join(', ');
      // After a pass the sizes above are old: drawn again, with what the pass did.
      if (!dryRun) { toast(`Retention deleted ${r.segments} segments (${formatBytes(r.bytes)}).`); await storageView(ctx); }
      if (!dryRun && !isCurrent()) return;
      const out = dryRun ? passResult : document.getElementById('retention-result');
      out.replaceChildren(h('p', { id: 'retention-summary' }, `A pass now ${verb} ${r.segments} segments (${formatBytes(r.bytes)})${reasons ? `: ${reasons}` : ''}.`),
        r.segments ? h('ul', {}, r.cameras.filter((c) => c.segments).map((c) => h('li', {},
          `${c.camera}: ${c.segments} segments, ${formatBytes(c.bytes)}; oldest left ${c.oldestRemaining90k ? dateTime(c.oldestRemaining90k) : 'none'}`))) : null);
    } catch (err) { passResult.replaceChildren(h('p.error', {}, err.message)); }
    button.disabled = false;
  }
  main.replaceChildren(h('section.camera.settings-page', {},
    h('h1', {}, h('a', { href: '#/settings' }, 'Settings'), ' › Storage'),
    h('p', { id: 'storage-summary' }, `Recordings: ${formatBytes(total)}. File system: ${fs}.`),
    h('form', {
      id: 'retention',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        const body = { maxBytes: gigabytes(cap.value), minFreePercent: Number(minFree.value), cameras: [] };
        const bad = [];
        if (Number.isNaN(body.maxBytes)) bad.push('the storage cap is a size in GB');
        if (!(body.minFreePercent >= 0 && body.minFreePercent < 100)) bad.push('the free space to keep is a percentage below 100');
        for (const x of rows) {
          const cam = { camera: x.camera, continuousDays: days(x.continuous.value), eventDays: days(x.events.value), maxBytes: gigabytes(x.max.value) };
          if ([cam.continuousDays, cam.eventDays, cam.maxBytes].some(Number.isNaN)) bad.push(`${x.camera}: days above 0 and a size in GB, or empty for no limit`);
          body.cameras.push(cam);
        }
        if (bad.length) { error.textContent = `Not saved: ${bad.join('; ')}.`; return; }
        try { await api('PUT', '/api/retention', body); toast('Retention saved: the next pass applies it.'); } catch (err) { error.textContent = err.message; }
      },
    },
    h('div.fields', {}, h('label', {}, 'Storage cap (GB, empty: none) ', cap), h('label', {}, 'Keep free (%) ', minFree)),
    h('table.audit', { id: 'storage-cameras' },
      h('tr', {}, ['Camera', 'Stored', 'Oldest', 'Days kept', 'Continuous (days)', 'Events (days)', 'Cap (GB)'].map((t) => h('th', {}, t))),
      rows.map((x) => h('tr', { dataset: { camera: x.camera } }, h('td', {}, x.camera), h('td', {}, formatBytes(x.c.bytes)),
        h('td', {}, x.c.oldest90k ? dateTime(x.c.oldest90k) : '—'),
        h('td', {}, x.c.oldest90k ? ((now - x.c.oldest90k) / (86400 * HZ)).toFixed(1) : '—'),
        h('td', {}, x.continuous), h('td', {}, x.events), h('td', {}, x.max)))),
    error, h('div.fields', {}, h('button.primary', { type: 'submit', id: 'retention-save' }, 'Save limits'))),
    h('h2', {}, 'Kept clips'),
    clips.length === 0 ? h('p.muted', {}, 'No kept clips: retention deletes everything in time.') : h('ul.settings-list', { id: 'clip-list' },
      clips.map((k) => h('li', { dataset: { clip: String(k.id) } }, h('a', { href: k.clip }, `${k.camera} ${dateTime(k.start90k)}`),
        h('span.muted', {}, ` ${k.note || '(no note)'} · kept by ${k.createdBy} `),
        h('button', { type: 'button', onclick: async (e) => {
          if (!confirm('Stop keeping this clip? Retention may then delete it.')) return;
          try { await api('DELETE', `/api/clips/${k.id}`); e.target.closest('li').remove(); toast('No longer kept.'); } catch (err) { toast(err.message); }
        } }, 'Stop keeping')))),
    h('h2', {}, 'Retention now'),
    h('p.muted', {}, 'Retention runs by itself every minute. Preview says what a pass would delete now; Run now deletes it.'),
    h('div.fields', {},
      h('button', { type: 'button', id: 'retention-preview', onclick: (e) => runRetention(e.target, true) }, 'Preview'),
      h('button', { type: 'button', id: 'retention-run', onclick: (e) => runRetention(e.target, false) }, 'Run now')),
    passResult,
    h('h2', {}, 'Integrity'),
    h('div.fields', {}, h('label.check', {}, deep, ' also read every file (slower)'),
      h('button', { type: 'button', id: 'check-run', onclick: async (e) => {
        e.target.disabled = true;
        checkResult.replaceChildren(h('p.muted', {}, 'Checking the index against the files…'));
        try {
          const c = await api('POST', `/api/db/check?deep=${deep.checked}`);
          checkResult.replaceChildren(c.problems.length === 0
            ? h('p', { id: 'check-ok' }, `Index and files agree (${c.seconds.toFixed(1)} s).`)
            : h('ul', { id: 'check-problems' }, c.problems.map((p) => h('li', {}, `${p.kind}: ${p.path} — ${p.detail}`))),
          c.problems.length ? h('p.muted', {}, 'Repairs need the server stopped: nvr db check --repair.') : null);
        } catch (err) { checkResult.replaceChildren(h('p.error', {}, err.message)); }
        e.target.disabled = false;
      } }, 'Check now')),
    checkResult));
}
