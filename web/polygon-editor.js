// Shapes drawn on a camera's picture (motion masks; detection zones have their own names):
// click the picture to add points, save the shape (3 points or more), remove saved ones.
const SVG = 'http://www.w3.org/2000/svg';

/// `src`: the picture; `shapes()`: the saved shapes, each a list of [x, y] in 0…1;
/// `onSave(points)` and `onRemove(index)` return whether the server took it; `error` is where
/// a refusal is said. Returns the element.
export function polygonEditor(h, { id, src, alt, shapes, onSave, onRemove, error, noun = 'shape' }) {
  const picture = h('img', { id: `${id}-picture`, alt, src });
  // A camera added a moment ago has no picture yet: ask again every few seconds.
  let tries = 0;
  picture.addEventListener('error', () => {
    if (++tries <= 10) setTimeout(() => { if (picture.isConnected) picture.src = `${src}${src.includes('?') ? '&' : '?'}try=${tries}`; }, 3000);
  });
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 1 1');
  svg.setAttribute('preserveAspectRatio', 'none');
  const canvas = h('div.zone-canvas', { id: `${id}-canvas` }, picture, svg);
  const list = h('ul.zone-list', { id: `${id}-list` });
  let drawing = [];

  function polygon(points, cls) {
    const p = document.createElementNS(SVG, points.length > 2 ? 'polygon' : 'polyline');
    p.setAttribute('points', points.map(([x, y]) => `${x},${y}`).join(' '));
    p.setAttribute('class', cls);
    return p;
  }
  function draw() {
    const saved = shapes();
    svg.replaceChildren(...saved.map((s) => polygon(s, 'zone')), polygon(drawing, 'drawing'));
    list.replaceChildren(...saved.map((s, i) => h('li', {}, `${noun} ${i + 1} (${s.length} points) `,
      h('button', { type: 'button', dataset: { index: String(i) }, onclick: async () => { if (await onRemove(i)) draw(); } }, 'Remove'))));
  }
  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const x = Math.min(Math.max((e.clientX - r.left) / r.width, 0), 1), y = Math.min(Math.max((e.clientY - r.top) / r.height, 0), 1);
    drawing.push([Math.round(x * 1000) / 1000, Math.round(y * 1000) / 1000]);
    draw();
  });
  const save = h('button', { type: 'button', id: `${id}-save`, onclick: async () => {
    error.textContent = '';
    if (drawing.length < 3) { error.textContent = `A ${noun} needs at least 3 points: click the picture where its corners are.`; return; }
    if (await onSave(drawing)) { drawing = []; draw(); }
  } }, `Save ${noun}`);
  const clear = h('button', { type: 'button', id: `${id}-clear`, onclick: () => { drawing = []; error.textContent = ''; draw(); } }, 'Clear points');
  const box = h('div', {}, canvas, h('div.fields', {}, save, clear), list);
  box.redraw = draw;
  return box;
}
