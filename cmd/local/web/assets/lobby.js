// The rooms of seeds/003 (SPEC §12, §15): free, beginner (≤ 1299),
// intermediate and expert (≥ 1500); the waiting games of a room, oldest
// first; quick pairing; creating a room game (per-move time as seeds/003
// has it). The list is read when the screen opens, when the room changes,
// on the refresh button and when the tab comes back into view — never on a
// timer.
import * as api from './api.js';
import { t } from './i18n.js';
import { loadMe, playerCard, playerToken, ensurePlayer } from './players.js';
import { PER_MOVE, segmented, timeLabel, timeSelect } from './home.js';
import * as storage from './storage.js';
import { fill, h, toast } from './ui.js';

export const ROOMS = ['free', 'beginner', 'intermediate', 'expert'];

export function mountLobby(root, { room = 'free' } = {}) {
  if (!ROOMS.includes(room)) room = 'free';
  const prefs = storage.getPrefs().lastRoom ?? {};
  const list = h('ul#lobby-list.game-list');
  const status = h('p#lobby-status.muted');
  const meBox = h('div#me-box');
  // A rated room plays seeds/003's game: the per-move times only.
  const rated = room !== 'free';
  const time = rated
    ? h('select', { name: 'room-time', id: 'room-time' }, PER_MOVE.map((tc) => h('option', { value: tc, selected: tc === (prefs.time ?? 'perMove:60') }, timeLabel(tc))))
    : timeSelect('room-time', prefs.time ?? 'perMove:60', PER_MOVE);
  const form = h('form#room-form', { onsubmit: (e) => { e.preventDefault(); createRoomGame(form, room); } },
    h('div.field', h('label.label', { for: 'room-time' }, t('home.time')), time),
    h('div.field', h('span.label', t('home.variant')),
      segmented('rvariant', [['standard', t('variant.standard')], ['chess960', t('variant.chess960')]], prefs.variant ?? 'standard')),
    h('div.row',
      h('button#btn-quick.primary', { type: 'button', onclick: () => quick(form, room) }, t('lobby.quick')),
      h('button#btn-create-room', { type: 'submit' }, t('lobby.create'))));

  const tabs = h('nav.room-tabs', ROOMS.map((r) => h('a.room-tab', {
    id: 'room-' + r,
    href: '#/lobby/' + r,
    class: r === room ? 'active' : null,
    'aria-current': r === room ? 'page' : null,
  }, h('strong', t('room.' + r)), h('small', t('room.' + r + '.gate')))));

  fill(root, h('div.screen.lobby',
    h('header.topbar', h('a.back', { href: '#/' }, '← ', t('nav.home')), h('span.title', t('lobby.title'))),
    h('main.lobby-main',
      meBox,
      tabs,
      h('section.card', h('h2', t('room.' + room)), h('p.muted', t('room.' + room + '.explain')), form),
      h('section.card',
        h('div.row.spread', h('h2', t('lobby.waiting')),
          h('button#btn-refresh', { onclick: () => refresh() }, t('lobby.refresh'))),
        status, list))));

  let stopped = false;
  const onVisible = () => document.visibilityState === 'visible' && refresh();
  document.addEventListener('visibilitychange', onVisible);

  async function refresh() {
    status.textContent = t('lobby.loading');
    status.dataset.state = 'loading';
    try {
      const token = playerToken();
      const { items } = await api.lobby(room, token);
      if (stopped) return;
      const mine = storage.getPlayer()?.playerId;
      status.textContent = items.length ? '' : t('lobby.empty');
      status.dataset.state = 'ready';
      fill(list, items.map((g) => h('li.lobby-game', { dataset: { game: g.gameId } },
        h('div.host',
          h('strong', g.host?.name || t('players.noName')),
          g.host?.rank ? h('span.tag', g.host.rank) : null,
          g.host?.rating != null ? h('span.muted', String(g.host.rating)) : null),
        h('div.muted', [timeLabel(g.options?.timeControl ?? '10+5'),
          g.options?.variant === 'chess960' ? t('variant.chess960') : null,
          waitedFor(g.createdAt)].filter(Boolean).join(' · ')),
        g.host?.playerId === mine
          ? h('a.button', { href: '#/g/' + g.gameId }, t('lobby.yours'))
          : h('button.btn-enter.primary', { onclick: () => enter(g.gameId) }, t('lobby.enter')))));
    } catch (e) {
      if (stopped) return;
      status.textContent = api.notServed(e) ? t('lobby.unavailable') : e.message;
      status.dataset.state = api.notServed(e) ? 'unavailable' : 'error';
    }
  }

  loadMe().then((me) => !stopped && fill(meBox, playerCard(me)), (e) => !stopped && fill(meBox, h('p.muted', e.message)));
  refresh();
  return () => {
    stopped = true;
    document.removeEventListener('visibilitychange', onVisible);
  };
}

function waitedFor(createdAt) {
  const minutes = Math.floor((Date.now() - createdAt) / 60000);
  return minutes < 1 ? t('lobby.justNow') : t('lobby.waitingFor', { m: minutes });
}

function roomChoice(form) {
  const f = form.elements;
  const choice = { time: f['room-time'].value, variant: f.rvariant.value };
  storage.setPrefs({ lastRoom: choice });
  return choice;
}

async function enter(gameId) {
  try {
    await ensurePlayer();
    const answer = await api.joinGame(gameId, {}, playerToken());
    location.hash = '#/g/' + storage.rememberSeat({ ...answer, gameId });
  } catch (e) {
    toast(e.message, 'error');
  }
}

async function quick(form, room) {
  const choice = roomChoice(form);
  try {
    const p = await ensurePlayer();
    if (!p) throw new Error(t('lobby.unavailable'));
    const answer = await api.quickPair(p.token, room, { timeControl: choice.time, variant: choice.variant });
    toast(answer.matched ? t('lobby.matched') : t('lobby.waitingForOpponent'));
    location.hash = '#/g/' + storage.rememberSeat(answer);
  } catch (e) {
    toast(e.message, 'error');
  }
}

async function createRoomGame(form, room) {
  const choice = roomChoice(form);
  try {
    const p = await ensurePlayer();
    const body = { opponent: { type: 'human' }, options: { room, timeControl: choice.time, variant: choice.variant } };
    const answer = await api.createGame(body, p?.token);
    location.hash = '#/g/' + storage.rememberSeat(answer);
  } catch (e) {
    toast(e.message, 'error');
  }
}
