// The public HTTP API (openapi.yaml), nothing else: every call sends the
// interface language so the server's texts (errors, result summaries, AI
// names) come back in it (SPEC §14), and every error is turned into an
// ApiError carrying the server's code and message.
import { lang, t } from './i18n.js';
import { randomId } from './ui.js';

export class ApiError extends Error {
  constructor(status, code, message, field, body) {
    super(message);
    this.status = status; // 0: no answer (network)
    this.code = code;
    this.field = field;
    this.body = body;
  }
}

// call sends one request. token: a seat or player token (Bearer).
export async function call(method, path, { token, body, signal } = {}) {
  const headers = { 'Accept-Language': lang };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = 'Bearer ' + token;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', t('error.network'));
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page: reported by status below.
  }
  if (!res.ok) {
    const e = data?.error;
    throw new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? data?.message ?? t('error.server', { status: res.status }), e?.field, data);
  }
  return data;
}

// Games.
export const createGame = (body, playerToken) => call('POST', '/v1/games', { body, token: playerToken });
export const joinGame = (id, body, playerToken) => call('POST', `/v1/games/${enc(id)}/join`, { body, token: playerToken });
export const getGame = (id, token, signal) => call('GET', `/v1/games/${enc(id)}`, { token, signal });

// act sends one action with a request id, retried on a lost answer: the
// server applies an id at most once, so a retry can never move twice.
export async function act(id, token, type, payload) {
  const body = { type, requestId: randomId() };
  if (payload !== undefined) body.payload = payload;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call('POST', `/v1/games/${enc(id)}/actions`, { token, body });
    } catch (e) {
      if (e.status !== 0 || attempt >= 2) throw e;
      await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
    }
  }
}

// Players, the lobby and invites (SPEC §12, §15).
export const createPlayer = (name) => call('POST', '/v1/players', { body: name ? { name } : {} });
export const getMe = (token) => call('GET', '/v1/players/me', { token });
export const renameMe = (token, name) => call('PATCH', '/v1/players/me', { token, body: { name } });
export const myGames = (token, status = 'active', limit = 20) => call('GET', `/v1/players/me/games?status=${status}&limit=${limit}`, { token });
export const newLinkCode = (token) => call('POST', '/v1/players/me/link-codes', { token, body: {} });
export const linkDevice = (code) => call('POST', '/v1/players/link', { body: { code } });
export const lobby = (room, token, cursor) => call('GET', `/v1/lobby?room=${enc(room)}&limit=50${cursor ? '&cursor=' + enc(cursor) : ''}`, { token });
export const quickPair = (token, room, options) => call('POST', '/v1/lobby/quick', { token, body: options ? { room, options } : { room } });

const enc = encodeURIComponent;

// notServed says an error means the server has no such route (an older
// server without the players and lobby routes of SPEC §12).
export const notServed = (e) => e instanceof ApiError && (e.code === 'not_found' || e.code === 'method_not_allowed');
