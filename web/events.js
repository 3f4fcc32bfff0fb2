// Events: the list every view shows them in (a snapshot, the label, when, how long; a click
// plays the clip), and the events of every camera in the last 24 hours.
import { get } from './api.js';
import { h } from './dom.js';
import { HZ, clock, dateTime, duration, ticks } from './time.js';

export function showEvents(box, events, onPlay) {
  if (events.length === 0) { box.replaceChildren(h('p.muted', {}, 'No events.')); return; }
  box.replaceChildren(h('ul.event-list', {}, events.slice().reverse().map((e) => h('li', {},
    h('button.event', { type: 'button', onclick: () => onPlay(e), dataset: { event: e.id } },
      h('img', { src: `${e.snapshot}?width=320`, alt: `${e.type} at ${clock(e.start90k)}`, loading: 'lazy', width: 160, height: 90 }),
      h('span', {}, h('strong', {}, e.label ?? e.type), ` ${e.camera ?? ''}`, e.score && e.source === 'detection' ? h('span.muted', {}, ` ${Math.round(e.score * 100)} %`) : null),
      h('span.muted', {}, `${dateTime(e.start90k)}${e.end90k ? ', ' + duration((e.end90k - e.start90k) / HZ) : ' (in progress)'}`))))));
}

export async function eventsView({ main, isCurrent }) {
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
  });
}
