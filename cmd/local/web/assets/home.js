// The first screen: continue a game, play the AI (level choice), create a
// game for a friend (open or private link), the rooms, the rules.
import * as api from './api.js';
import { lang, t, setLanguage } from './i18n.js';
import { ensurePlayer, playerToken, playersSupported, saveName } from './players.js';
import * as storage from './storage.js';
import { fill, h, markAfterPaint, openRules, toast } from './ui.js';
import { DAYS } from './correspondence.js';

export const TIME_CONTROLS = ['3+2', '5+0', '5+3', '10+0', '10+5', '15+10', '30+0', 'none'];
export const PER_MOVE = ['perMove:30', 'perMove:60', 'perMove:120'];
const AI_LEVELS = ['easy', 'normal', 'hard', 'max'];

// segmented is a row of radio buttons that looks like a switch.
export function segmented(name, choices, value) {
  return h('div.segmented', { role: 'radiogroup' }, choices.map(([v, label]) => {
    const id = `${name}-${v}`.replace(/[^a-zA-Z0-9-]/g, '-');
    return [
      h('input', { type: 'radio', name, id, value: v, checked: v === value }),
      h('label', { for: id }, label),
    ];
  }));
}

export function timeSelect(name, value, extra = []) {
  return h('select', { name, id: name },
    [...TIME_CONTROLS, ...extra].map((tc) => h('option', { value: tc, selected: tc === value }, timeLabel(tc))));
}

export function timeLabel(tc) {
  if (tc === 'none') return t('time.none');
  if (tc.startsWith('perMove:')) return t('time.perMove', { s: tc.slice(8) });
  if (tc.startsWith('days:')) return t('time.days', { n: tc.slice(5) });
  const [m, s] = tc.split('+');
  return t('time.fischer', { m, s });
}

export function mountHome(root) {
  const prefs = storage.getPrefs();
  const ai = prefs.lastAi ?? {};
  const friend = prefs.lastFriend ?? {};

  const nameInput = h('input#name-input', {
    value: prefs.name ?? '',
    maxlength: 40,
    placeholder: t('home.namePlaceholder'),
    autocomplete: 'nickname',
    onchange: (e) => saveName(e.target.value),
  });

  const aiForm = h('form#ai-form.card', { onsubmit: (e) => { e.preventDefault(); playAI(aiForm); } },
    h('h2', t('home.ai.title')),
    h('div.field', h('span.label', t('home.level')),
      segmented('level', AI_LEVELS.map((l) => [l, t('ai.level.' + l)]), ai.level ?? 'easy')),
    h('div.field', h('span.label', t('home.color')),
      segmented('color', [['random', t('home.color.random')], ['hostWhite', t('color.white')], ['hostBlack', t('color.black')]], ai.color ?? 'random')),
    h('div.field', h('span.label', t('home.variant')),
      segmented('variant', [['standard', t('variant.standard')], ['chess960', t('variant.chess960')]], ai.variant ?? 'standard')),
    h('div.field', h('label.label', { for: 'ai-time' }, t('home.time')), timeSelect('ai-time', ai.time ?? '10+5', DAYS)),
    h('button#btn-play-ai.primary.wide', { type: 'submit' }, t('home.ai.start')));

  const friendForm = h('form#friend-form.card', { onsubmit: (e) => { e.preventDefault(); createForFriend(friendForm); } },
    h('h2', t('home.friend.title')),
    h('div.field', h('span.label', t('home.invite')),
      segmented('invite', [['open', t('home.invite.open')], ['private', t('home.invite.private')]], friend.invite ?? 'open')),
    h('div.field', h('span.label', t('home.color')),
      segmented('fcolor', [['random', t('home.color.random')], ['hostWhite', t('color.white')], ['hostBlack', t('color.black')]], friend.color ?? 'random')),
    h('div.field', h('span.label', t('home.variant')),
      segmented('fvariant', [['standard', t('variant.standard')], ['chess960', t('variant.chess960')]], friend.variant ?? 'standard')),
    h('div.field', h('label.label', { for: 'friend-time' }, t('home.time')), timeSelect('friend-time', friend.time ?? '10+5', [...PER_MOVE, ...DAYS])),
    h('button#btn-create-friend.primary.wide', { type: 'submit' }, t('home.friend.create')));

  const continueList = h('ul#continue-list.game-list');
  const continueCard = h('section#continue.card', { hidden: true }, h('h2', t('home.continue')), continueList);

  fill(root, h('div.screen.home',
    h('header.topbar',
      h('span.title', t('app.title')),
      h('span.topbar-right',
        h('button#btn-lang.icon', { onclick: () => setLanguage(lang === 'ko' ? 'en' : 'ko'), title: t('lang.switch') }, lang === 'ko' ? 'EN' : '한국어'))),
    h('main.home-grid',
      h('section.card.hello', h('label.label', { for: 'name-input' }, t('home.name')), nameInput),
      continueCard,
      aiForm,
      friendForm,
      h('section.card',
        h('h2', t('home.rooms.title')),
        h('p.muted', t('home.rooms.explain')),
        h('a#btn-lobby.button.wide', { href: '#/lobby' }, t('home.rooms.open'))),
      h('section.card',
        h('h2', t('home.rules.title')),
        h('button#btn-home-rules.wide', { onclick: openRules }, t('controls.rules'))))));

  markAfterPaint('home-interactive', 'home');
  showContinue(continueCard, continueList);
  return () => {};
}

async function playAI(form) {
  const f = form.elements;
  const choice = { level: f.level.value, color: f.color.value, variant: f.variant.value, time: f['ai-time'].value };
  storage.setPrefs({ lastAi: choice });
  await create(form, {
    opponent: { type: 'ai', level: choice.level },
    options: { variant: choice.variant, timeControl: choice.time, colorAssignment: choice.color },
  });
}

async function createForFriend(form) {
  const f = form.elements;
  const choice = { invite: f.invite.value, color: f.fcolor.value, variant: f.fvariant.value, time: f['friend-time'].value };
  storage.setPrefs({ lastFriend: choice });
  const opponent = { type: 'human' };
  // Open is the default; only a private game names its invite, so an
  // open game can be made on a server without invites too.
  if (choice.invite === 'private') opponent.invite = 'private';
  await create(form, {
    opponent,
    options: { variant: choice.variant, timeControl: choice.time, colorAssignment: choice.color },
  });
}

// create makes a game with the browser's player (or an anonymous seat with
// the chosen name) and opens it.
export async function create(form, body) {
  const button = form?.querySelector('button[type=submit]');
  if (button) button.disabled = true;
  try {
    await ensurePlayer();
    const name = storage.getPrefs().name;
    if (!playerToken() && name) body.player = { name };
    const answer = await api.createGame(body, playerToken());
    location.hash = '#/g/' + storage.rememberSeat(answer);
  } catch (e) {
    toast(e.message, 'error');
  } finally {
    if (button) button.disabled = false;
  }
}

// showContinue lists the games still going: the player's games from the
// server when it keeps them (any device), else the seats in this browser.
async function showContinue(card, list) {
  let items = [];
  try {
    const token = playerToken();
    if (token && playersSupported() !== false) {
      try {
        items = (await api.myGames(token, 'active', 10)).items.map((g) => ({
          gameId: g.gameId, phase: g.phase, variant: g.variant, you: g.myColor, opponent: g.opponent?.name,
        }));
      } catch (e) {
        if (!api.notServed(e)) throw e;
        items = await seatsStillGoing();
      }
    } else {
      items = await seatsStillGoing();
    }
  } catch {
    return; // the list is a convenience; the screen works without it
  }
  if (!items.length || !card.isConnected) return;
  fill(list, items.map((g) => h('li', h('a.game-link', { href: '#/g/' + g.gameId, dataset: { game: g.gameId } },
    h('span.swatch.' + (g.you ?? 'white')),
    h('span', t('home.continue.vs', { name: g.opponent || t('game.opponent') })),
    h('span.muted', [t('phase.' + g.phase), g.variant === 'chess960' ? ' · ' + t('variant.chess960') : ''].join(''))))));
  card.hidden = false;
}

async function seatsStillGoing() {
  const seats = storage.recentSeats(8);
  const views = await Promise.all(seats.map(async (s) => {
    try {
      return (await api.getGame(s.gameId, s.token)).game;
    } catch (e) {
      if (e.code === 'game_not_found' || e.code === 'forbidden') storage.forgetSeat(s.gameId);
      return null;
    }
  }));
  return views.filter((v) => v && v.phase !== 'finished' && v.you).map((v) => {
    const opp = v.players[v.you === 'white' ? 'black' : 'white'];
    return { gameId: v.gameId, phase: v.phase, variant: v.variant, you: v.you, opponent: opp?.name };
  });
}
