// What every view shares to draw: an element builder, the toast, and a camera's state for
// people (its line and its badge).

/// A small element builder: h('div.card', {onclick}, child, 'text').
export function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split('.');
  const e = document.createElement(name);
  if (classes.length) e.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v !== false && v !== undefined && v !== null) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

/// Says what happened, for four seconds, at the bottom of the page.
export function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text; t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

/// A camera's state for people: "live", "reconnecting: connection refused", battery…
export function stateLine(c) {
  const reason = c.reason ? `: ${c.reason}` : '';
  const words = { streaming: 'live', stalled: 'not recording', connecting: 'connecting', lost: 'reconnecting', failed: 'failed', stopped: 'stopped' };
  // Detection that cannot run is said to everyone (the camera records on without it).
  const detection = c.detection?.startsWith('failed') ? ` · detection ${c.detection}` : '';
  return `${words[c.state] ?? c.state}${reason}${detection}`;
}

export function badge(c) {
  return h(`span.badge.${c.state}`, { title: stateLine(c) }, c.enabled ? (c.state === 'streaming' ? 'live' : c.state) : 'disabled');
}

/// The live view's stream for this screen: the sub-stream on a phone-sized screen (it is
/// smaller, and usually H.264), the main stream otherwise.
export const narrowScreen = () => window.matchMedia('(max-width: 600px)').matches;

/// A size in bytes, in decimal units (as disks are sold).
export function formatBytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}
