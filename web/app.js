// The NVR's page: the login, the router (routes are the URL's hash) and the server's status
// line. Each view is its own module, drawn into <main> with what it needs (ctx in route()).
// Plain modules over the HTTP API (design/api.md), no build step.
import { api, get, setCSRF, setUnauthorizedHandler, APIError } from './api.js';
import { h, toast } from './dom.js';
import { gridView } from './grid.js';
import { cameraView } from './camera.js';
import { eventsView } from './events.js';
import { exportView } from './export.js';
import { settingsView } from './settings.js';
import { cameraSettingsView } from './camera-settings.js';
import { usersView } from './users.js';
import { accountView } from './account.js';
import { storageView } from './storage.js';
import { serverView } from './server.js';
import { momentView } from './moment.js';
import { discoverView } from './discover.js';
import { reviewView } from './review.js';

const main = document.getElementById('main');
let session = null;
let cleanup = [];

/// Counts routes: a view still loading when the user has moved on sees it changed and stops
/// (it must not draw over the new view or start a player nobody will stop).
let routeGeneration = 0;
const current = (generation) => generation === routeGeneration;

function leave() { routeGeneration++; cleanup.forEach((f) => f()); cleanup = []; }

// MARK: login

function showLogin(message) {
  leave();
  session = null;
  document.getElementById('nav').hidden = true;
  const user = h('input', { id: 'user', name: 'user', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p.error', { role: 'alert' }, message ?? '');
  const form = h('form.login', {
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      try {
        const s = await api('POST', '/api/login', { user: user.value, password: password.value });
        await started(s);
      } catch (err) {
        error.textContent = err instanceof APIError ? err.message : 'The NVR did not answer.';
        password.select();
      }
    },
  }, h('h1', {}, 'Log in'),
  h('label', { for: 'user' }, 'User'), user,
  h('label', { for: 'password' }, 'Password'), password,
  h('button.primary', { type: 'submit' }, 'Log in'), error);
  main.replaceChildren(form);
  user.focus();
}

async function started(s) {
  session = s;
  setCSRF(s.csrf);
  document.getElementById('nav').hidden = false;
  document.getElementById('who').textContent = `${s.user} (${s.role})`;
  document.getElementById('nav-discover').hidden = s.role !== 'admin';
  document.getElementById('nav-settings').hidden = s.role !== 'admin';
  serverStatus();
  route();
}

/// The server's own links (today: the MQTT broker, when nvr.toml has [mqtt]), from
/// /api/health every 15 s: "MQTT connected", or why not.
async function serverStatus() {
  const el = document.getElementById('server');
  clearTimeout(serverStatus.timer);
  try {
    // 503 (a camera down) still carries the JSON: not api(), which throws on it.
    const r = await fetch('/api/health', { credentials: 'same-origin' });
    const mqtt = (await r.json()).mqtt;
    el.hidden = !mqtt;
    if (mqtt) {
      const ok = mqtt.state === 'connected';
      el.textContent = ok ? 'MQTT connected' : `MQTT ${mqtt.state}`;
      el.title = ok ? `broker ${mqtt.broker}` : `broker ${mqtt.broker}: ${mqtt.reason ?? mqtt.state}`;
      el.classList.toggle('bad', !ok);
    }
  } catch { /* the next round */ }
  if (session) serverStatus.timer = setTimeout(serverStatus, 15000);
}

document.getElementById('logout').addEventListener('click', async () => {
  try { await api('POST', '/api/logout'); } catch { /* gone anyway */ }
  showLogin('Logged out.');
});

setUnauthorizedHandler(() => { if (session) showLogin('Your session has ended: log in again.'); });

// MARK: routes

async function route() {
  if (!session) return;
  leave();
  const hash = location.hash.slice(1) || '/';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query ?? '');
  const generation = routeGeneration;
  // What every view is given: where to draw, who is logged in, whether the user is still on
  // it, and where to register what to undo when the user leaves.
  const ctx = { main, session, h, toast, isCurrent: () => current(generation), onCleanup: (f) => cleanup.push(f) };
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('here', path.startsWith(a.getAttribute('href').slice(1)) && (a.getAttribute('href') !== '#/' || path === '/'));
  try {
    if (path.startsWith('/camera/')) await cameraView(ctx, decodeURIComponent(path.slice(8)), params);
    else if (path === '/events') await eventsView(ctx);
    else if (path === '/review') await reviewView(ctx);
    else if (path === '/export') await exportView(ctx, params);
    else if (path === '/moment') await momentView(ctx, params);
    else if (path === '/discover' && session.role === 'admin') await discoverView(ctx);
    else if (path === '/account') await accountView(ctx);
    else if (path === '/settings' && session.role === 'admin') await settingsView(ctx);
    else if (path === '/settings/users' && session.role === 'admin') await usersView(ctx);
    else if (path === '/settings/storage' && session.role === 'admin') await storageView(ctx);
    else if (path === '/settings/server' && session.role === 'admin') await serverView(ctx);
    else if (path.startsWith('/settings/camera/') && session.role === 'admin') await cameraSettingsView(ctx, decodeURIComponent(path.slice(17)));
    else await gridView(ctx);
    main.focus({ preventScroll: true });
  } catch (e) {
    if (!(e instanceof APIError && e.status === 401)) main.replaceChildren(h('p.error.pad', {}, `Could not load: ${e.message}`));
  }
}
window.addEventListener('hashchange', route);

// MARK: start

(async () => {
  try {
    await started(await get('/api/session'));
  } catch (e) {
    showLogin(e instanceof APIError && e.status === 401 ? '' : `The NVR did not answer: ${e.message}`);
  }
})();
