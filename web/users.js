// Users (admins): who may log in, as admin or viewer, which cameras a viewer sees (ticked) and
// whether it may turn and zoom them (PTZ); add, change (role, cameras, PTZ, a new password) and
// remove them; and the audit log of changes,
// filtered by user and action, newest first, older on demand.
import { api, get } from './api.js';
import { h, toast } from './dom.js';
import { dateTime } from './time.js';

/// A viewer's cameras as ticks, one per camera (none ticked: every camera).
function cameraTicks(cameras, chosen, label) {
  const box = h('span.camera-ticks', { role: 'group', 'aria-label': label },
    cameras.map((c) => h('label.check', {}, h('input', { type: 'checkbox', value: c.name, checked: chosen.includes(c.name) }), ` ${c.name}`)));
  box.chosen = () => [...box.querySelectorAll('input:checked')].map((i) => i.value);
  box.clear = () => box.querySelectorAll('input').forEach((i) => { i.checked = false; });
  return box;
}

export async function usersView({ main, session, isCurrent }) {
  const [{ users }, { cameras }] = await Promise.all([get('/api/users'), get('/api/cameras')]);
  if (!isCurrent()) return;
  const list = h('ul.settings-list', { id: 'user-list' });
  const addError = h('p.error', { id: 'user-add-error', role: 'alert' });
  const name = h('input', { id: 'user-name', autocomplete: 'off' });
  const password = h('input', { id: 'user-password', type: 'password', autocomplete: 'new-password' });
  const role = h('select', { id: 'user-role' }, h('option', { value: 'viewer' }, 'viewer'), h('option', { value: 'admin' }, 'admin'));
  const seen = cameraTicks(cameras, [], 'Cameras of the new user (none ticked: every camera)');
  seen.id = 'user-cameras';
  const steer = h('input', { type: 'checkbox', id: 'user-ptz' });
  const speak = h('input', { type: 'checkbox', id: 'user-talk' });
  const auditUser = h('input', { id: 'audit-user', placeholder: 'any user', size: 12 });
  const auditAction = h('input', { id: 'audit-action', placeholder: 'any action (camera., user.…)', size: 22 });
  const audit = h('table.audit', { id: 'audit' });
  const older = h('button', { type: 'button', id: 'audit-older', hidden: true }, 'Older');
  main.replaceChildren(h('section.camera.settings-page', {},
    h('h1', {}, h('a', { href: '#/settings' }, 'Settings'), ' › Users'),
    h('p.muted', {}, 'Admins change everything; viewers watch the cameras they are given (all when none are named). Your own password and tokens: ',
      h('a', { href: '#/account' }, 'Account'), '.'),
    list,
    h('h2', {}, 'Add a user'),
    h('form.fields', {
      id: 'user-add',
      onsubmit: async (e) => {
        e.preventDefault();
        addError.textContent = '';
        const body = { name: name.value.trim(), password: password.value, role: role.value };
        if (role.value === 'viewer' && seen.chosen().length) body.cameras = seen.chosen();
        if (role.value === 'viewer') { body.ptz = steer.checked; body.talk = speak.checked; }
        try {
          await api('POST', '/api/users', body);
          toast(`${body.name} can log in now.`);
          name.value = password.value = '';
          seen.clear();
          steer.checked = false;
          speak.checked = false;
          await load();
        } catch (err) { addError.textContent = err.message; }
      },
    }, h('label', {}, 'Name ', name), h('label', {}, 'Password ', password), h('label', {}, 'Role ', role),
    h('span', {}, 'Cameras (a viewer; none ticked: every camera) ', seen),
    h('label.check', { title: 'A viewer may pan, tilt and zoom its cameras (admins always may)' }, steer, ' May turn and zoom (PTZ)'),
    h('label.check', { title: 'A viewer may talk through its cameras\' speakers (admins always may)' }, speak, ' May talk'),
    h('button.primary', { type: 'submit', id: 'user-add-submit' }, 'Add')),
    addError,
    h('h2', {}, 'Audit log'),
    h('div.fields', {}, h('label', {}, 'User ', auditUser), h('label', {}, 'Action ', auditAction)),
    audit, older));

  function row(u) {
    const r = h('select', { 'aria-label': `${u.name}'s role` }, ['viewer', 'admin'].map((x) => h('option', { value: x, selected: x === u.role }, x)));
    const c = cameraTicks(cameras, u.cameras ?? [], `${u.name}'s cameras (none ticked: every camera)`);
    const steers = h('input', { type: 'checkbox', checked: u.role === 'admin' || u.ptz, disabled: u.role === 'admin', 'aria-label': `${u.name} may turn and zoom cameras` });
    // An admin always may; a viewer has what is stored (an admin made a viewer gains nothing).
    const talks = h('input', { type: 'checkbox', checked: u.role === 'admin' || u.talk, disabled: u.role === 'admin', 'aria-label': `${u.name} may talk through cameras` });
    r.addEventListener('change', () => {
      steers.disabled = talks.disabled = r.value === 'admin';
      steers.checked = r.value === 'admin' || u.ptz;
      talks.checked = r.value === 'admin' || u.talk;
    });
    const p = h('input', { 'aria-label': `${u.name}'s new password`, type: 'password', placeholder: 'new password', autocomplete: 'new-password', size: 14 });
    const error = h('p.error', { role: 'alert' });
    const save = h('button', { type: 'button', onclick: async () => {
      error.textContent = '';
      const body = { role: r.value, cameras: r.value === 'viewer' && c.chosen().length ? c.chosen() : null };
      if (r.value === 'viewer') { body.ptz = steers.checked; body.talk = talks.checked; }
      if (p.value) body.password = p.value;
      try { await api('PATCH', `/api/users/${encodeURIComponent(u.name)}`, body); toast(`${u.name} saved.`); await load(); } catch (err) { error.textContent = err.message; }
    } }, 'Save');
    const remove = u.name === session.user ? null : h('button.danger', { type: 'button', onclick: async () => {
      if (!confirm(`Remove ${u.name}? Their logins and tokens end.`)) return;
      try { await api('DELETE', `/api/users/${encodeURIComponent(u.name)}`); toast(`${u.name} removed.`); await load(); } catch (err) { error.textContent = err.message; }
    } }, 'Remove');
    return h('li', { dataset: { user: u.name } }, h('div.fields', {}, h('strong', {}, u.name), r, c, h('label.check', {}, steers, ' PTZ'), h('label.check', {}, talks, ' Talk'), p, save, remove), error);
  }
  async function load() {
    const fresh = (await get('/api/users')).users;
    list.replaceChildren(...fresh.map(row));
  }

  // The audit log: pages of 100 from the server, filtered here.
  let entries = [];
  function drawAudit() {
    const who = auditUser.value.trim().toLowerCase(), what = auditAction.value.trim().toLowerCase();
    const shown = entries.filter((e) => (!who || e.user.toLowerCase().includes(who)) && (!what || e.action.toLowerCase().includes(what)));
    audit.replaceChildren(h('tr', {}, ['When', 'User', 'Action', 'Target', 'From'].map((t) => h('th', {}, t))),
      ...shown.map((e) => h('tr', { dataset: { action: e.action } }, h('td', {}, dateTime(e.time90k)), h('td', {}, e.user), h('td', {}, e.action),
        h('td', {}, e.target ?? ''), h('td.muted', {}, e.address ?? ''))));
  }
  async function loadAudit(before) {
    const page = (await get(`/api/audit?limit=100${before ? `&before=${before}` : ''}`)).entries;
    entries = before ? entries.concat(page) : page;
    older.hidden = page.length < 100;
    drawAudit();
  }
  older.addEventListener('click', () => loadAudit(entries.at(-1)?.id));
  auditUser.addEventListener('input', drawAudit);
  auditAction.addEventListener('input', drawAudit);
  list.replaceChildren(...users.map(row));
  await loadAudit();
}
