// A camera's memory card, for admins (the camera view's "Memory card" section, shown only
// when the camera's plugin reads a card): the videos on it during the day shown, as the last
// listing saw them, with how much of each the NVR has; "List and fill gaps now" (what
// `nvr card sync` does); and each file downloaded as the camera has it (`nvr card get`).
import { api, get, cam } from './api.js';
import { h, toast, formatBytes } from './dom.js';
import { HZ, dateTime, duration } from './time.js';

/// The section, hidden until a listing says the camera has a card; `show(start, end)` lists
/// the videos of a day (90 kHz); `onSynced` is called after a sync added footage.
export function cardPanel(name, onSynced) {
  const list = h('div', { id: 'card-videos' });
  const result = h('p.muted', { id: 'card-result', 'aria-live': 'polite' });
  let range = null, shown = 0;
  const sync = h('button', { type: 'button', id: 'card-sync', onclick: async () => {
    sync.disabled = true;
    result.textContent = 'Listing the card and filling gaps from it…';
    try {
      // The day shown, so an older day's gaps are filled too (its end: now at most).
      const until = range ? Math.min(range[1], Date.now() * 90) : null;
      const r = await api('POST', `/api/cameras/${cam(name)}/card/sync${range && until > range[0] ? `?start=${range[0]}&end=${until}` : ''}`);
      const clock = r.clockOffsetSeconds === undefined ? r.warnings.join('; ') : `camera clock ${r.clockOffsetSeconds >= 0 ? '+' : ''}${r.clockOffsetSeconds.toFixed(0)} s from the NVR's`;
      const n = (k, one) => `${k} ${one}${k === 1 ? '' : 's'}`;
      result.textContent = `${n(r.files, 'video')} on the card (${clock}); ${n(r.gaps, 'gap')}, ${n(r.segments, 'segment')} filled `
        + `(${duration(r.backfilledSeconds)} of video, ${formatBytes(r.bytesRead)} read).${r.errors.length ? ' Errors: ' + r.errors.join('; ') : ''}`;
      if (range) show(...range).catch(() => {}); // the summary stays; the list says its own
      if (r.segments > 0) onSynced?.();
    } catch (err) { result.textContent = err.message; }
    sync.disabled = false;
  } }, 'List and fill gaps now');
  const box = h('details.settings', { id: 'card', hidden: true }, h('summary', {}, 'Memory card'),
    h('p.muted', {}, 'Videos on the camera\'s card during this day, as last listed (the server lists the card by itself, and fills its gaps from it unless card.backfill is off). A download is the file as the camera has it.'),
    list, h('div.fields', {}, sync), result);

  async function show(start, end) {
    range = [start, end];
    const mine = ++shown; // only the newest answer draws (a day changed meanwhile)
    const r = await get(`/api/cameras/${cam(name)}/card?start=${start}&end=${end}`);
    if (mine !== shown) return;
    box.hidden = !r.hasCard;
    if (!r.hasCard) return;
    list.replaceChildren(r.videos.length === 0 ? h('p.muted', {}, 'No card videos listed during this day.') : h('table.audit', {},
      h('tr', {}, ['File', 'Start', 'Length', 'Size', 'The NVR has', ''].map((t) => h('th', {}, t))),
      r.videos.map((v) => h('tr', { dataset: { file: v.file } }, h('td', {}, v.name), h('td', {}, dateTime(v.start90k)),
        h('td', {}, duration((v.end90k - v.start90k) / HZ)), h('td', {}, formatBytes(v.bytes)),
        h('td', {}, !v.onTimeline ? 'listed only' : v.seconds > 0 ? `${Math.round(100 * v.coveredSeconds / v.seconds)} %` : '—'),
        h('td', {}, v.source === 'card' ? h('a.button', { href: `/api/cameras/${cam(name)}/card/file?file=${encodeURIComponent(v.file)}`, download: v.name }, 'Download') : v.source)))));
  }
  return { box, show: (start, end) => { const mine = shown + 1; show(start, end).catch((err) => { if (mine === shown) toast(err.message); }); } };
}
