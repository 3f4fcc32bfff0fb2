// Times: the API speaks 90 kHz ticks since 1970 (and RFC 3339); the page shows the browser's
// local time.

export const HZ = 90000;
export const ticks = (ms) => Math.round(ms * 90);
export const ms = (t) => t / 90;

/// YYYY-MM-DD of a local day.
export function dayString(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/// The local day of a YYYY-MM-DD string (midnight, local time).
export function parseDay(s) {
  const [y, m, d] = s.split('-').map(Number);
  return new Date(y, m - 1, d);
}

export function clock(t, seconds = true) {
  return new Date(ms(t)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: seconds ? '2-digit' : undefined });
}

export function dateTime(t) {
  return new Date(ms(t)).toLocaleString([], { dateStyle: 'medium', timeStyle: 'medium' });
}

export function duration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
  return h ? `${h} h ${m} min` : m ? `${m} min ${s} s` : `${s} s`;
}

/// The browser's IANA zone (days on the timeline are its local days).
export const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/// A value for <input type="datetime-local"> from ticks, and back.
export function localInput(t) {
  const d = new Date(ms(t));
  const p = (n) => String(n).padStart(2, '0');
  return `${dayString(d)}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
export function fromLocalInput(s) { return ticks(new Date(s).getTime()); }
