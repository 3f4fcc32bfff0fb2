// Pan, tilt and zoom of a live camera: a pad over the picture (hold a button to move), the
// arrow keys and + / - while the picture has focus, and the camera's presets below it.
// Every move is sent for one second and sent again while held, so a page that goes away
// leaves the camera still within a second; the server ends each move too (design/ptz.md).
// Commands go one after another, so a stop never overtakes its move; a repeat is not sent
// while the last move waits for its answer, and a move still waiting when the button is let
// go is dropped, so a slow camera is not sent a backlog of moves after the stop.
import { api, get, cam, APIError } from './api.js';
import { h, toast } from './dom.js';

const SPEED = 0.6;       // pan and tilt, of the camera's full speed
const ZOOM_SPEED = 0.5;
const MOVE_SECONDS = 1;  // each move's length; a held button sends it again every REPEAT_MS
const REPEAT_MS = 600;

const DIRECTIONS = {
  up: { tilt: SPEED, label: 'Tilt up', text: '▲', key: 'ArrowUp' },
  left: { pan: -SPEED, label: 'Pan left', text: '◀', key: 'ArrowLeft' },
  right: { pan: SPEED, label: 'Pan right', text: '▶', key: 'ArrowRight' },
  down: { tilt: -SPEED, label: 'Tilt down', text: '▼', key: 'ArrowDown' },
  in: { zoom: ZOOM_SPEED, label: 'Zoom in', text: '+', key: '+' },
  out: { zoom: -ZOOM_SPEED, label: 'Zoom out', text: '−', key: '-' },
};

/// The PTZ controls of camera `name` around `stage` (the live picture's box): `wrap` replaces
/// the stage in the page, `presets` goes below it. Both stay empty when the camera has no PTZ
/// or this user may not steer it. `setLive(false)` hides the pad during recorded playback.
export function ptzControls(name, stage) {
  const pad = h('div.ptz-pad', { id: 'ptz-pad', hidden: true });
  const wrap = h('div.stage-wrap', {}, stage, pad);
  const presets = h('div.ptz-presets', { id: 'ptz-presets', hidden: true });
  const path = `/api/cameras/${cam(name)}/ptz`;
  let chain = Promise.resolve();
  let held = null, repeat = null, live = true, ready = false, moving = false;

  // After the commands before it, whether they worked or not; `wanted` is asked when its turn
  // comes (a move whose button was let go meanwhile is not sent).
  const send = (body, wanted = () => true) => {
    const p = chain.then(() => (wanted() ? api('POST', path, body) : null));
    chain = p.catch(() => {});
    return p;
  };
  const report = (e) => toast(`PTZ: ${e.message}`);
  const move = (dir) => {
    if (moving) return; // the last one has not been answered: no backlog
    moving = true;
    const d = DIRECTIONS[dir];
    send({ action: 'move', pan: d.pan ?? 0, tilt: d.tilt ?? 0, zoom: d.zoom ?? 0, seconds: MOVE_SECONDS }, () => held === dir)
      .catch((e) => {
        // A refused move ends the hold (no toast a second while it is held), with a stop: the
        // camera may have taken it.
        if (held === dir) { held = null; clearInterval(repeat); repeat = null; send({ action: 'stop' }).catch(() => {}); }
        report(e);
      })
      .finally(() => { moving = false; });
  };
  const start = (dir) => {
    if (held === dir) return;
    if (held) stop();
    held = dir;
    move(dir);
    repeat = setInterval(() => move(dir), REPEAT_MS);
  };
  const stop = () => {
    if (!held) return;
    held = null;
    clearInterval(repeat); repeat = null;
    send({ action: 'stop' }).catch(report);
  };

  const buttons = {};
  for (const [dir, d] of Object.entries(DIRECTIONS)) {
    const b = h(`button.ptz-${dir}`, { type: 'button', title: `${d.label} (${d.key === '+' || d.key === '-' ? d.key : d.key.replace('Arrow', '') + ' arrow'})`, 'aria-label': d.label, 'data-dir': dir }, d.text);
    b.addEventListener('pointerdown', (e) => { e.preventDefault(); b.setPointerCapture?.(e.pointerId); start(dir); });
    for (const ev of ['pointerup', 'pointercancel', 'lostpointercapture']) b.addEventListener(ev, stop);
    pad.append(b);
    buttons[dir] = b;
  }
  // Keys while the picture has focus (click it, or Tab to it).
  wrap.tabIndex = 0;
  wrap.setAttribute('aria-label', 'Live picture: arrow keys turn the camera, + and - zoom');
  const byKey = Object.fromEntries(Object.entries(DIRECTIONS).map(([dir, d]) => [d.key, dir]));
  byKey['='] = 'in'; byKey._ = 'out';
  wrap.addEventListener('keydown', (e) => {
    const dir = byKey[e.key];
    if (!ready || !live || !dir || buttons[dir].hidden) return;
    e.preventDefault(); e.stopPropagation();
    if (!e.repeat) start(dir);
  });
  wrap.addEventListener('keyup', (e) => { if (byKey[e.key] && byKey[e.key] === held) stop(); });
  wrap.addEventListener('blur', stop);
  window.addEventListener('blur', stop);

  async function loadPresets() {
    const d = await get(path);
    ready = d.steer;
    // Only the buttons the camera can use.
    for (const dir of ['up', 'down', 'left', 'right']) buttons[dir].hidden = !d.panTilt;
    for (const dir of ['in', 'out']) buttons[dir].hidden = !d.zoom;
    pad.hidden = !ready || !live;
    presets.hidden = !ready;
    if (!ready) return;
    const nameInput = h('input', { id: 'ptz-preset-name', placeholder: 'name', size: 12, maxlength: 64, 'aria-label': 'Preset name' });
    const save = h('button', { type: 'button', id: 'ptz-save-preset', onclick: async () => {
      const n = nameInput.value.trim();
      if (!n) { nameInput.focus(); return; }
      try {
        await send({ action: 'savePreset', name: n });
        toast(`Preset “${n}” saved.`);
        loadPresets().catch(report);
      } catch (e) { report(e); }
    } }, 'Save position');
    presets.replaceChildren(h('span.muted', {}, 'Presets: '),
      ...d.presets.map((p) => h('button.ptz-preset', { type: 'button', 'data-token': p.token, onclick: () => send({ action: 'preset', preset: p.token }).catch(report) }, p.name)),
      nameInput, save);
  }

  // Only when the camera has PTZ (409 otherwise) and this user may steer it.
  loadPresets().catch((e) => { if (!(e instanceof APIError) || e.status !== 409) console.warn('PTZ:', e.message); });

  return {
    wrap, presets,
    setLive(on) { live = on; if (!on) stop(); pad.hidden = !ready || !on; },
    /// Stops any move and forgets the window (the view is left).
    dispose() { live = false; stop(); window.removeEventListener('blur', stop); },
  };
}
