// The NVR's HTTP API as the page uses it: JSON in and out, the session's CSRF token on
// every change, and a 401 anywhere sends the page back to the login form.

let csrf = null;
let onUnauthorized = () => {};

export function setUnauthorizedHandler(f) { onUnauthorized = f; }
export function setCSRF(token) { csrf = token; }

export class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

export async function api(method, path, body) {
  // A Blob (a picture) is sent as it is, with its own type; anything else as JSON.
  const raw = body instanceof Blob;
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = raw ? (body.type || 'application/octet-stream') : 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrf) headers['X-CSRF-Token'] = csrf;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : raw ? body : JSON.stringify(body), credentials: 'same-origin' });
  if (r.status === 204) return null;
  let data = null;
  try { data = await r.json(); } catch { /* not JSON */ }
  if (!r.ok) {
    if (r.status === 401 && path !== '/api/login') onUnauthorized();
    throw new APIError(r.status, data?.error ?? 'http_' + r.status, data?.message ?? r.statusText);
  }
  return data;
}

export const get = (path) => api('GET', path);

/// A camera name in a URL path.
export const cam = (name) => encodeURIComponent(name);
