// The review queue: each camera's activity grouped into items (GET /api/review), unreviewed
// alerts first, a thumbnail each. Click (or Enter) plays an item's clip; R (or the button)
// marks it reviewed and moves to the next; J/K or the arrow keys move; "Mark all reviewed"
// marks everything up to now. The flags are the logged-in user's own.
import { api, get } from './api.js';
import { HZ, dateTime, duration } from './time.js';

/// Draws the view into `main`; `h` builds elements, `toast` says what happened, `isCurrent`
/// is false once the user has moved on, `onCleanup` registers what to undo when it has.
export async function reviewView({ main, h, toast, isCurrent, onCleanup }) {
  const end = Math.floor(Date.now() / 1000) * HZ;
  const start = end - 24 * 3600 * HZ;
  let items = (await get(`/api/review?start=${start}&end=${end}`)).items;
  if (!isCurrent()) return;
  let selected = 0;
  const stage = h('div.stage', { hidden: true });
  const caption = h('p.muted.where');
  const list = h('ol.review-list', { 'aria-label': 'Review queue' });
  const left = h('span.muted.review-count');
  const markAll = h('button', { type: 'button', id: 'mark-all' }, 'Mark all reviewed');
  main.replaceChildren(h('section.camera.review', {},
    h('div.head', {}, h('h1', {}, 'Review'), h('div.tools', {}, left, markAll)),
    h('p.muted', {}, 'Keys: J / ↓ next, K / ↑ previous, Enter play, R mark reviewed and go on.'),
    stage, caption, list));

  function draw() {
    const open = items.filter((i) => !i.reviewed);
    left.textContent = `${open.filter((i) => i.severity === 'alert').length} alerts, ${open.length} items to review`;
    if (items.length === 0) { list.replaceChildren(h('li.muted', {}, 'Nothing happened in the last 24 hours.')); return; }
    list.replaceChildren(...items.map((item, n) => h(`li.review-item.${item.severity}${item.reviewed ? '.reviewed' : ''}${n === selected ? '.selected' : ''}`,
      { dataset: { item: item.id, severity: item.severity, reviewed: item.reviewed } },
      h('button.thumb', { type: 'button', onclick: () => { selected = n; play(); } },
        h('img', { src: `${item.thumbnail}?width=320`, alt: `${item.labels.join(', ')} on ${item.camera}`, loading: 'lazy', width: 160, height: 90 })),
      h('div.review-text', {},
        h('span', {}, h('span.badge.' + item.severity, {}, item.severity), ' ', h('strong', {}, item.labels.join(', ')), ` ${item.camera}`),
        h('span.muted', {}, `${dateTime(item.start90k)}${item.end90k ? ', ' + duration((item.end90k - item.start90k) / HZ) : ' (in progress)'}`
          + (item.zones.length ? ` · in ${item.zones.join(', ')}` : '')),
        item.reviewed ? h('span.muted', {}, 'reviewed')
          : h('button.mark', { type: 'button', onclick: () => { selected = n; mark(); } }, 'Mark reviewed')))));
    list.children[selected]?.scrollIntoView?.({ block: 'nearest' });
  }

  function play() {
    const item = items[selected];
    if (!item) return;
    stage.hidden = false;
    stage.replaceChildren(h('video', { controls: true, autoplay: true, muted: true, playsinline: true, src: item.clip }));
    caption.textContent = `${item.camera}: ${item.labels.join(', ')} at ${dateTime(item.start90k)}`;
    draw();
  }

  async function mark() {
    const item = items[selected];
    if (!item || item.reviewed) { next(); return; }
    try {
      const marked = await api('POST', `/api/review/${item.id}/reviewed`);
      if (!isCurrent()) return;
      items[selected] = marked;
      next();
    } catch (e) { toast(`Could not mark it reviewed: ${e.message}`); }
  }

  function next() {
    const after = items.findIndex((i, n) => n > selected && !i.reviewed);
    selected = after >= 0 ? after : Math.min(selected + 1, items.length - 1);
    draw();
  }

  markAll.addEventListener('click', async () => {
    try {
      await api('POST', `/api/review/reviewed?before=${end}`);
      items = (await get(`/api/review?start=${start}&end=${end}`)).items;
      if (!isCurrent()) return;
      selected = 0;
      draw();
      toast('Everything up to now is reviewed.');
    } catch (e) { toast(`Could not mark them reviewed: ${e.message}`); }
  });

  const keys = (e) => {
    if (e.target.closest?.('input, textarea, select') || e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.toLowerCase();
    if (k === 'j' || k === 'arrowdown') { selected = Math.min(selected + 1, items.length - 1); draw(); }
    else if (k === 'k' || k === 'arrowup') { selected = Math.max(selected - 1, 0); draw(); }
    else if (k === 'enter') play();
    else if (k === 'r') mark();
    else return;
    e.preventDefault();
  };
  document.addEventListener('keydown', keys);
  onCleanup(() => document.removeEventListener('keydown', keys));
  draw();
}
