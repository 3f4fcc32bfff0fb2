// The weekly recording schedule as a grid you paint: seven days of 24 hours, each hour
// continuous, events or off. It reads the server's schedule text (design/motion.md: rules
// "DAYS [HH:MM-HH:MM] MODE", the first that matches wins, the camera's mode where none does)
// and writes it back as rules, one per run of equal hours, days with the same runs together.
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
export const MODES = ['continuous', 'events', 'off'];
const DAY_INDEX = Object.fromEntries(DAYS.map((d, i) => [d, i]));

function parseDays(spec) {
  if (spec === '*') return new Set(DAYS.keys());
  const out = new Set();
  for (const part of spec.split(',')) {
    const [a, b] = part.split('-');
    if (!(a in DAY_INDEX) || (b !== undefined && !(b in DAY_INDEX))) return null;
    for (let d = DAY_INDEX[a]; ; d = (d + 1) % 7) { out.add(d); if (b === undefined || d === DAY_INDEX[b]) break; }
  }
  return out;
}

const minutes = (s) => { const m = /^(\d{1,2}):(\d\d)$/.exec(s ?? ''); return m ? Number(m[1]) * 60 + Number(m[2]) : NaN; };

/// Each hour's mode (grid[day][hour], Monday first) under the schedule `text`; hours no rule
/// covers (at their middle) get `fallback`. Rules this grid cannot read are skipped:
/// `exactly(text, fallback)` says whether the grid shows the text as it is.
export function parseSchedule(text, fallback) {
  const rules = [];
  for (const part of (text ?? '').split(';')) {
    const words = part.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length < 2 || words.length > 3 || !MODES.includes(words.at(-1))) continue;
    const days = parseDays(words[0]);
    if (!days) continue;
    let from = 0, to = 1440;
    if (words.length === 3) {
      const [a, b] = words[1].split('-');
      from = minutes(a); to = minutes(b);
      if (!Number.isFinite(from) || !Number.isFinite(to)) continue;
    }
    rules.push({ days, from, to, mode: words.at(-1) });
  }
  const covers = (r, d, m) => r.from < r.to
    ? r.days.has(d) && m >= r.from && m < r.to
    : (r.days.has(d) && m >= r.from) || (r.days.has((d + 6) % 7) && m < r.to);
  return DAYS.map((_, d) => Array.from({ length: 24 }, (_, h) => rules.find((r) => covers(r, d, h * 60 + 30))?.mode ?? fallback));
}

/// The schedule text for `grid` ("" when every hour is `fallback`: no schedule needed).
export function scheduleText(grid, fallback) {
  const hh = (h) => `${String(h).padStart(2, '0')}:00`;
  const runs = new Map(); // "from-to mode" → days
  grid.forEach((hours, d) => {
    for (let h = 0; h < 24;) {
      let e = h + 1;
      while (e < 24 && hours[e] === hours[h]) e++;
      if (hours[h] !== fallback) {
        const key = h === 0 && e === 24 ? hours[h] : `${hh(h)}-${hh(e)} ${hours[h]}`;
        runs.set(key, [...(runs.get(key) ?? []), DAYS[d]]);
      }
      h = e;
    }
  });
  return [...runs].map(([rule, days]) => `${days.length === 7 ? '*' : days.join(',')} ${rule}`).join('; ');
}

/// The grid as an element: pick a mode, then click or drag over hours to paint them.
/// `onChange(grid)` after each stroke.
export function scheduleGrid(h, grid, onChange) {
  let brush = 'continuous';
  let painting = false;
  const brushes = MODES.map((m) => h('label.check', {}, h('input', { type: 'radio', name: 'brush', value: m, checked: m === brush, onchange: () => { brush = m; } }), ` ${m}`));
  const cells = grid.map((hours, d) => hours.map((mode, hour) => h(`button.hour.${mode}`, {
    type: 'button', title: `${DAYS[d]} ${hour}:00–${hour + 1}:00: ${mode}`, 'aria-label': `${DAYS[d]} ${hour}:00 ${mode}`,
    dataset: { day: DAYS[d], hour: String(hour) },
  })));
  const paint = (cell) => {
    const d = DAYS.indexOf(cell.dataset.day), hour = Number(cell.dataset.hour);
    grid[d][hour] = brush;
    cell.className = `hour ${brush}`;
    cell.setAttribute('aria-label', `${DAYS[d]} ${hour}:00 ${brush}`);
  };
  const table = h('div.week', { role: 'grid', 'aria-label': 'Weekly schedule' },
    h('span'), Array.from({ length: 24 }, (_, hour) => h('span.hour-label', {}, hour % 3 === 0 ? String(hour) : '')),
    grid.map((_, d) => [h('span.day-label', {}, DAYS[d]), cells[d]]));
  table.addEventListener('pointerdown', (e) => {
    const cell = e.target.closest('.hour');
    if (!cell) return;
    e.preventDefault();
    painting = true;
    paint(cell);
  });
  table.addEventListener('pointerover', (e) => { const cell = e.target.closest('.hour'); if (painting && cell) paint(cell); });
  const stop = () => { if (painting) { painting = false; onChange(grid); } };
  table.addEventListener('pointerup', stop);
  // The keyboard (Enter or Space on an hour) paints one hour.
  table.addEventListener('click', (e) => { const cell = e.target.closest('.hour'); if (cell && e.detail === 0) { paint(cell); onChange(grid); } });
  table.addEventListener('pointerleave', stop);
  return h('div.schedule', {}, h('div.brushes', {}, 'Paint: ', brushes), table);
}

/// Whether the grid of `text` says the same as `text`: every rule readable and on whole hours
/// (else painting the grid would change hours the admin did not touch).
export function exactly(text, fallback) {
  if (!text) return true;
  const rules = text.split(';').map((r) => r.trim()).filter(Boolean);
  const onHours = rules.every((r) => {
    const words = r.toLowerCase().split(/\s+/);
    if (words.length === 2) return parseDays(words[0]) !== null && MODES.includes(words[1]);
    if (words.length !== 3 || parseDays(words[0]) === null || !MODES.includes(words[2])) return false;
    return words[1].split('-').every((t) => { const m = minutes(t); return Number.isFinite(m) && m % 60 === 0; });
  });
  return onHours;
}
