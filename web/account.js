// Your account (everyone): your password, your API tokens (a new one is shown once) and your
// logins (end any of them). An admin sees everyone's tokens and logins here.
import { api, get, setCSRF } from './api.js';
import { h, toast } from './dom.js';
import { dateTime } from './time.js';

const when = (s) => (s ? dateTime(Math.round(Date.parse(s) * 90)) : '—');

export async function accountView({ main, session, isCurrent }) {
  const current = h('input', { id: 'password-current', type: 'password', autocomplete: 'current-password' });
  const next = h('input', { id: 'password-new', type: 'password', autocomplete: 'new-password' });
  const again = h('input', { id: 'password-again', type: 'password', autocomplete: 'new-password' });
  const passwordError = h('p.error', { id: 'password-error', role: 'alert' });
  const tokens = h('ul.settings-list', { id: 'token-list' });
  const tokenName = h('input', { id: 'token-name', placeholder: 'home-assistant' });
  const tokenError = h('p.error', { id: 'token-error', role: 'alert' });
  const shown = h('p', { id: 'token-shown', hidden: true });
  const sessions = h('ul.settings-list', { id: 'session-list' });
  main.replaceChildren(h('section.camera.settings-page', {},
    h('h1', {}, `Account: ${session.user}`),
    h('h2', {}, 'Password'),
    h('form.fields.column', {
      id: 'password-form',
      onsubmit: async (e) => {
        e.preventDefault();
        passwordError.textContent = '';
        if (next.value !== again.value) { passwordError.textContent = 'The new password and its repetition differ.'; return; }
        try {
          // Every login of yours ends; this browser gets a new one, with its own CSRF token.
          const fresh = await api('PUT', '/api/session/password', { current: current.value, new: next.value });
          if (fresh?.csrf) setCSRF(fresh.csrf);
          current.value = next.value = again.value = '';
          toast('Password changed: your other logins have ended.');
          await loadSessions();
        } catch (err) { passwordError.textContent = err.message; }
      },
    }, h('label', {}, 'Current password ', current), h('label', {}, 'New password ', next), h('label', {}, 'New password again ', again),
    passwordError, h('div.fields', {}, h('button.primary', { type: 'submit', id: 'password-save' }, 'Change password'))),
    h('h2', {}, 'API tokens'),
    h('p.muted', {}, 'For scripts and Home Assistant: send it as Authorization: Bearer TOKEN. It is shown once.'),
    tokens,
    h('form.fields', {
      id: 'token-form',
      onsubmit: async (e) => {
        e.preventDefault();
        tokenError.textContent = '';
        try {
          const t = await api('POST', '/api/tokens', { name: tokenName.value.trim() });
          shown.hidden = false;
          shown.replaceChildren('New token (copy it now, it is not shown again): ', h('code', { id: 'token-value' }, t.token));
          tokenName.value = '';
          await loadTokens();
        } catch (err) { tokenError.textContent = err.message; }
      },
    }, h('label', {}, 'Name ', tokenName), h('button', { type: 'submit', id: 'token-add' }, 'Create token')),
    tokenError, shown,
    h('h2', {}, 'Logins'), sessions));

  async function loadTokens() {
    const list = (await get('/api/tokens')).tokens;
    tokens.replaceChildren(...(list.length ? list.map((t) => h('li', { dataset: { token: t.name } },
      h('strong', {}, t.name), h('span.muted', {}, ` ${t.user} · made ${when(t.created)} · last used ${when(t.lastUsed)} `),
      h('button', { type: 'button', onclick: async () => {
        try { await api('DELETE', `/api/tokens/${t.id}`); toast(`Token ${t.name} revoked.`); await loadTokens(); } catch (err) { tokenError.textContent = err.message; }
      } }, 'Revoke'))) : [h('li.muted', {}, 'No tokens.')]));
  }
  async function loadSessions() {
    const list = (await get('/api/sessions')).sessions;
    sessions.replaceChildren(...list.map((s) => h('li', { dataset: { session: String(s.id) } },
      h('strong', {}, s.current ? 'this browser' : (s.userAgent ?? 'a browser').slice(0, 60)),
      h('span.muted', {}, ` ${s.user} · from ${s.address ?? '?'} · last seen ${when(s.lastSeen)} · until ${when(s.expires)} `),
      s.current ? null : h('button', { type: 'button', onclick: async () => {
        try { await api('DELETE', `/api/sessions/${s.id}`); toast('Logged out there.'); await loadSessions(); } catch (err) { toast(err.message); }
      } }, 'End'))));
  }
  await Promise.all([loadTokens(), loadSessions()]);
  if (!isCurrent()) return;
}
