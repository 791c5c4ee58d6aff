// The player of this browser (SPEC §12): created once, its token kept in
// localStorage, sent when creating and joining games so seats bind to the
// player (ratings, rated rooms, "my games" on another device). A server
// without the players routes answers 404 not_found; the client then plays
// with anonymous seats, as the API allows.
import * as api from './api.js';
import { t } from './i18n.js';
import * as storage from './storage.js';
import { h, fill, toast } from './ui.js';

let supported = null; // null: not asked yet

export const playerToken = () => storage.getPlayer()?.token ?? null;

// playersSupported: true, false, or null before the first answer.
export const playersSupported = () => (storage.getPlayer() ? true : supported);

// ensurePlayer returns this browser's player, creating it on first use;
// null when the server has no players.
export async function ensurePlayer() {
  const p = storage.getPlayer();
  if (p) return p;
  if (supported === false) return null;
  try {
    const answer = await api.createPlayer(storage.getPrefs().name);
    const rec = { playerId: answer.playerId, token: answer.token };
    storage.setPlayer(rec);
    supported = true;
    return rec;
  } catch (e) {
    if (api.notServed(e)) {
      supported = false;
      return null;
    }
    throw e;
  }
}

// loadMe reads the player's profile; a token the server no longer knows is
// replaced by a new player.
export async function loadMe() {
  const p = await ensurePlayer();
  if (!p) return null;
  try {
    return await api.getMe(p.token);
  } catch (e) {
    if (e.code !== 'invalid_token' && e.code !== 'unauthorized') throw e;
    storage.forgetPlayer();
    const again = await ensurePlayer();
    return again ? api.getMe(again.token) : null;
  }
}

// saveName keeps the display name (for anonymous seats) and, with a player,
// renames it on the server.
export async function saveName(name) {
  name = name.trim();
  storage.setPrefs({ name });
  const token = playerToken();
  if (!token) return;
  try {
    await api.renameMe(token, name);
  } catch (e) {
    toast(e.message, 'error');
  }
}

// playerCard shows name, rank and rating, and the other-device link codes.
export function playerCard(me) {
  const card = h('div.player-card#player-card');
  if (!me) {
    card.append(h('p.muted#players-unavailable', t('players.unavailable')));
    return card;
  }
  card.append(
    h('div.me-line',
      h('strong.me-name', me.name || t('players.noName')),
      h('span.tag', me.rank ?? ''),
      h('span.muted', t('players.rating', { rating: me.rating ?? '—', games: me.ratedGames ?? 0 })),
      h('a#btn-settings.button', { href: '#/settings' }, t('settings.open'))),
    linkDevice());
  return card;
}

function linkDevice() {
  const out = h('div.link-device');
  const codeBox = h('div.link-code');
  const input = h('input#link-code-input', { placeholder: t('players.link.placeholder'), maxlength: 16, autocomplete: 'off' });
  out.append(
    h('details',
      h('summary', t('players.link.title')),
      h('p.muted', t('players.link.explain')),
      h('div.row',
        h('button#btn-link-code', {
          onclick: async () => {
            try {
              const { code, expiresAt } = await api.newLinkCode(playerToken());
              // expiresAt as Unix ms or as an RFC 3339 string: Date reads both.
              const minutes = Math.max(1, Math.round((new Date(expiresAt).getTime() - Date.now()) / 60000));
              fill(codeBox, h('strong.code', code), ' ', h('span.muted', t('players.link.valid', { minutes })));
            } catch (e) {
              toast(e.message, 'error');
            }
          },
        }, t('players.link.show'))),
      codeBox,
      h('div.row', input,
        h('button#btn-link-use', {
          onclick: async () => {
            try {
              const answer = await api.linkDevice(input.value.trim());
              storage.setPlayer({ playerId: answer.playerId, token: answer.token });
              toast(t('players.link.done'));
              location.reload();
            } catch (e) {
              toast(e.message, 'error');
            }
          },
        }, t('players.link.use')))));
  return out;
}
