// Export: the same range from several cameras as one ZIP (an MP4 per camera, nothing
// re-encoded), or as timelapses. The form says what the download will be (its size, from a
// HEAD of GET /api/export.zip) or why there is none, next to the field that is wrong. Up to
// 500 MB the page downloads it itself to show its progress (the ZIP's length is known before
// it starts) and then hands the file to the browser; a larger one is the browser's own
// download straight to disk (with the browser's progress), not held in the page's memory.
import { get } from './api.js';
import { h, formatBytes } from './dom.js';
import { HZ, ticks, localInput, fromLocalInput } from './time.js';

const SPEEDS = [[60, '60× (an hour in a minute)'], [720, '720× (a day in two minutes)']];

/// Draws the view into `main`; `params` may preset cameras=a,b, start= and end= (ticks).
export async function exportView({ main, isCurrent, onCleanup }, params) {
  const { cameras } = await get('/api/cameras');
  if (!isCurrent()) return;
  const wanted = new Set((params.get('cameras') ?? '').split(',').filter(Boolean));
  const boxes = cameras.map((c) => h('input', { type: 'checkbox', name: 'camera', value: c.name, checked: wanted.size === 0 || wanted.has(c.name) }));
  const now = ticks(Date.now());
  const from = h('input', { id: 'export-from', type: 'datetime-local', step: 1, value: localInput(Number(params.get('start')) || now - 10 * 60 * HZ) });
  const to = h('input', { id: 'export-to', type: 'datetime-local', step: 1, value: localInput(Number(params.get('end')) || now) });
  const speed = h('select', { id: 'export-speed' }, h('option', { value: '' }, 'every frame'),
    SPEEDS.map(([n, label]) => h('option', { value: n }, label)), h('option', { value: 'other' }, 'other…'));
  const otherSpeed = h('input', { id: 'export-other-speed', type: 'number', min: 2, max: 100000, step: 1, value: 120, hidden: true, 'aria-label': 'Times faster' });
  const camerasError = h('p.error', { id: 'export-cameras-error', role: 'alert' });
  const rangeError = h('p.error', { id: 'export-range-error', role: 'alert' });
  const speedError = h('p.error', { id: 'export-speed-error', role: 'alert' });
  const summary = h('p.muted', { id: 'export-summary', 'aria-live': 'polite' });
  const link = h('a.button.primary.disabled', { id: 'export-download', download: '' }, 'Download ZIP');
  const progress = h('progress', { id: 'export-progress', hidden: true, max: 1, value: 0 });
  const progressText = h('span.muted', { id: 'export-progress-text', 'aria-live': 'polite' });
  const cancel = h('button', { type: 'button', id: 'export-cancel', hidden: true }, 'Cancel');
  main.replaceChildren(h('section.camera.export', {},
    h('h1', {}, 'Export'),
    h('p.muted', {}, 'The same time from several cameras in one ZIP: an MP4 per camera, as recorded, and export.txt with what each holds. '
      + 'A timelapse keeps one picture every few seconds and plays it faster.'),
    h('fieldset', {}, h('legend', {}, 'Cameras'),
      cameras.length ? cameras.map((c, i) => h('label.check', {}, boxes[i], ` ${c.name}`)) : h('p.muted', {}, 'No cameras.'),
      camerasError),
    h('fieldset', {}, h('legend', {}, 'Time'), h('label', {}, 'From ', from), h('label', {}, 'To ', to), rangeError),
    h('fieldset', {}, h('legend', {}, 'Speed'), speed, ' ', otherSpeed, speedError),
    summary, link, h('div.fields', {}, progress, progressText, cancel)));

  // The download read here, its progress shown, then saved by the browser under the
  // archive's name. Leaving the view or Cancel stops it.
  let reading = null, size = 0;
  const inPage = 5e8; // held twice while it becomes a file (the parts, then the Blob)
  onCleanup(() => reading?.abort());
  link.addEventListener('click', async (ev) => {
    if (!link.href || reading) { ev.preventDefault(); return; }
    if (size > inPage) { progress.hidden = true; progressText.textContent = 'A large export: the browser\'s downloads show its progress.'; return; }
    ev.preventDefault();
    const stop = reading = new AbortController();
    progress.hidden = cancel.hidden = false;
    progress.value = 0;
    progressText.textContent = 'Starting…';
    cancel.onclick = () => stop.abort();
    try {
      const r = await fetch(link.href, { credentials: 'same-origin', signal: stop.signal });
      if (!r.ok) throw new Error((await r.json().catch(() => null))?.message ?? `the NVR answered ${r.status}`);
      const total = Number(r.headers.get('Content-Length')) || 0;
      const name = /filename="([^"]+)"/.exec(r.headers.get('Content-Disposition') ?? '')?.[1] ?? 'export.zip';
      progress.max = total || 1;
      const parts = [];
      let got = 0;
      for (const reader = r.body.getReader(); ;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        got += value.length;
        progress.value = got;
        progressText.textContent = total ? `${formatBytes(got)} of ${formatBytes(total)} (${Math.floor(100 * got / total)} %)` : formatBytes(got);
      }
      if (total && got !== total) throw new Error(`the download ended after ${formatBytes(got)} of ${formatBytes(total)}`);
      const file = URL.createObjectURL(new Blob(parts, { type: 'application/zip' }));
      h('a', { href: file, download: name }).click();
      setTimeout(() => URL.revokeObjectURL(file), 60000);
      progressText.textContent = `Done: ${name}, ${formatBytes(got)}.`;
    } catch (err) {
      progressText.textContent = stop.signal.aborted ? 'Cancelled.' : `Not downloaded: ${err.message}`;
    } finally {
      reading = null;
      cancel.hidden = true;
    }
  });

  /// The download's URL, or nothing with the reasons said next to their fields.
  function request() {
    camerasError.textContent = rangeError.textContent = speedError.textContent = '';
    const names = boxes.filter((b) => b.checked).map((b) => b.value);
    const s = fromLocalInput(from.value), e = fromLocalInput(to.value);
    let ok = true;
    if (names.length === 0) { camerasError.textContent = 'Pick at least one camera.'; ok = false; }
    if (!Number.isFinite(s) || !Number.isFinite(e)) { rangeError.textContent = 'Give both a start and an end.'; ok = false; }
    else if (e <= s) { rangeError.textContent = 'The end must be after the start.'; ok = false; }
    let n = speed.value === 'other' ? Number(otherSpeed.value) : speed.value ? Number(speed.value) : null;
    if (n !== null && !(Number.isInteger(n) && n >= 2 && n <= 100000)) { speedError.textContent = 'A timelapse is 2 to 100000 times faster.'; ok = false; }
    if (!ok) return null;
    return `/api/export.zip?cameras=${names.map(encodeURIComponent).join(',')}&start=${s}&end=${e}${n ? `&speed=${n}` : ''}`;
  }

  let asked = 0;
  async function update() {
    if (!isCurrent()) return; // left before the timer fired
    otherSpeed.hidden = speed.value !== 'other';
    const url = request();
    const mine = ++asked;
    link.classList.add('disabled');
    link.removeAttribute('href');
    if (!url) { summary.textContent = ''; return; }
    summary.textContent = 'Looking at the recordings…';
    try {
      const r = await fetch(url, { method: 'HEAD', credentials: 'same-origin' });
      if (mine !== asked || !isCurrent()) return;
      if (r.ok) {
        const held = (r.headers.get('X-Export-Cameras') ?? '').split(',').filter(Boolean);
        const empty = (r.headers.get('X-Export-Empty') ?? '').split(',').filter(Boolean);
        size = Number(r.headers.get('Content-Length')) || 0;
        summary.textContent = `${held.length} camera${held.length === 1 ? '' : 's'}, ${formatBytes(size)}`
          + (empty.length ? ` (nothing recorded then by ${empty.join(', ')})` : '');
        link.href = url;
        link.classList.remove('disabled');
        return;
      }
      // A HEAD answer has no body: ask again for the message (an error is small; anything
      // else — footage arrived meanwhile — is not read).
      const stop = new AbortController();
      const g = await fetch(url, { credentials: 'same-origin', signal: stop.signal });
      const json = (g.headers.get('Content-Type') ?? '').startsWith('application/json');
      if (!json) stop.abort();
      const why = (json ? (await g.json().catch(() => null))?.message : null) ?? `the NVR answered ${g.status}: try again`;
      if (mine !== asked || !isCurrent()) return;
      summary.textContent = '';
      (g.status === 404 && why.startsWith('nothing recorded') ? rangeError : /speed/.test(why) ? speedError : /camera/.test(why) ? camerasError : rangeError).textContent = why;
    } catch {
      if (mine === asked) summary.textContent = 'The NVR did not answer.';
    }
  }
  // Each question builds the export: ask once typing stops.
  let timer;
  const soon = () => { clearTimeout(timer); timer = setTimeout(update, 400); };
  for (const input of [...boxes, from, to, speed, otherSpeed]) input.addEventListener('change', soon);
  otherSpeed.addEventListener('input', soon);
  await update();
}
