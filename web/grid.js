// Every camera live, as tiles (the sub-stream each), with its state kept fresh; a tile opens
// the camera.
import { get } from './api.js';
import { LivePlayer } from './live.js';
import { h, badge, stateLine } from './dom.js';

/// Draws the view into `main`; `isCurrent` is false once the user has moved on, `onCleanup`
/// registers what to undo when it has.
export async function gridView({ main, session, isCurrent, onCleanup }) {
  const { cameras } = await get('/api/cameras');
  if (!isCurrent()) return;
  if (cameras.length === 0) {
    main.replaceChildren(h('p.pad.muted', {}, 'No cameras yet. ',
      session.role === 'admin' ? h('a', { href: '#/discover' }, 'Find cameras on the network') : null,
      session.role === 'admin' ? ', or add one with: nvr camera add NAME --plugin rtsp --url rtsp://…' : 'An admin adds them.'));
    return;
  }
  const tiles = cameras.map((c) => {
    const video = h('div.video');
    const status = h('div.status', {}, c.state === 'streaming' ? '' : stateLine(c));
    const summary = c.camera?.summary ? h('div.summary', {}, c.camera.summary) : null;
    const tile = h('a.tile', { href: `#/camera/${encodeURIComponent(c.name)}`, dataset: { camera: c.name } },
      video, h('div.caption', {}, h('strong', {}, c.name), badge(c)), status, summary, c.notes ? h('div.summary', {}, c.notes.join('; ')) : null);
    if (c.enabled) {
      const p = new LivePlayer(video, c.name, { width: 640, stream: 'sub', onState: (state, why) => { status.textContent = state === 'live' ? '' : why; } });
      onCleanup(() => p.stop());
      tile.player = p;
    }
    return tile;
  });
  main.replaceChildren(h('section.grid', { 'aria-label': 'Cameras' }, tiles));
  // Keep states fresh without reloading the videos.
  const timer = setInterval(async () => {
    try {
      const fresh = await get('/api/cameras');
      for (const c of fresh.cameras) {
        const tile = main.querySelector(`[data-camera="${CSS.escape(c.name)}"]`);
        if (!tile) continue;
        tile.querySelector('.badge').replaceWith(badge(c));
        if (!tile.player || c.state !== 'streaming') tile.querySelector('.status').textContent = c.state === 'streaming' ? '' : stateLine(c);
      }
    } catch { /* the next round */ }
  }, 5000);
  onCleanup(() => clearInterval(timer));
}
