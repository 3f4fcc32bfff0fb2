// Events: the list every view shows them in (a snapshot, the label, when, how long; a click
// plays the clip), and the events of every camera in the last 24 hours.
import { api, get } from './api.js';
import { h, toast } from './dom.js';
import { HZ, clock, dateTime, duration, ticks } from './time.js';

/// `onDelete` (admins): each event gets a Delete button; the event goes once it resolves.
export function showEvents(box, events, onPlay, onDelete) {
  if (events.length === 0) { box.replaceChildren(h('p.muted', {}, 'No events.')); return; }
  box.replaceChildren(h('ul.event-list', {}, events.slice().reverse().map((e) => h('li', { dataset: { eventItem: e.id } },
    h('button.event', { type: 'button', onclick: () => onPlay(e), dataset: { event: e.id } },
      h('img', { src: `${e.snapshot}?width=320`, alt: `${e.type} at ${clock(e.start90k)}`, loading: 'lazy', width: 160, height: 90 }),
      h('span', {}, h('strong', {}, e.label ?? e.type), ` ${e.camera ?? ''}`, e.score && e.source === 'detection' ? h('span.muted', {}, ` ${Math.round(e.score * 100)} %`) : null),
      h('span.muted', {}, `${dateTime(e.start90k)}${e.end90k ? ', ' + duration((e.end90k - e.start90k) / HZ) : ' (in progress)'}`)),
    onDelete ? h('button.delete-event', { type: 'button', title: 'Delete this event (its footage stays)', 'aria-label': `Delete event ${e.label ?? e.type} at ${clock(e.start90k)}`,
      onclick: async (ev) => { if (await onDelete(e)) ev.target.closest('li').remove(); } }, 'Delete') : null))));
}

/// Asks, then deletes an event (DELETE /api/events/{id}); true when it is gone.
export async function deleteEvent(e) {
  if (!confirm(`Delete the event "${e.label ?? e.type}" of ${dateTime(e.start90k)}? Its footage stays until retention deletes it.`)) return false;
  try { await api('DELETE', `/api/events/${e.id}`); toast('Event deleted.'); return true; } catch (err) { toast(err.message); return false; }
}

export async function eventsView({ main, session, isCurrent }) {
  const end = ticks(Date.now()), start = end - 24 * 3600 * HZ;
  const { events } = await get(`/api/events?start=${start}&end=${end}`);
  if (!isCurrent()) return;
  const stage = h('div.stage');
  const list = h('div.events');
  main.replaceChildren(h('section.camera', {}, h('h1', {}, 'Events of the last 24 hours'), stage, list));
  stage.hidden = true;
  showEvents(list, events, (e) => {
    stage.hidden = false;
    stage.replaceChildren(h('video', { controls: true, autoplay: true, muted: true, playsinline: true, src: e.clip }),
      h('p.muted', {}, `${e.camera}: ${e.type} at ${dateTime(e.start90k)}`));
    stage.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
  }, session.role === 'admin' ? deleteEvent : undefined);
}
