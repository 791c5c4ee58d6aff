// The inbox (SPEC §16.3): every notification of this browser's player —
// the opponent's move, a game started or ended, a rematch offer, the
// clock running low, the disconnect grace — newest first, the unread ones
// marked, each a link to its game. The texts come worded by the server in
// the request's language. Read when the screen opens and when the tab
// comes back into view; "mark all read" marks up to the newest shown.
import * as api from './api.js';
import { t } from './i18n.js';
import { ensurePlayer } from './players.js';
import { fill, h, toast } from './ui.js';

const PAGE = 20;

export function mountInbox(root) {
  const list = h('ul#inbox-list.inbox-list');
  const status = h('p#inbox-status.muted');
  const more = h('button#btn-inbox-more', { hidden: true, onclick: () => load(cursor) }, t('inbox.more'));
  const markAll = h('button#btn-inbox-read', { disabled: true, onclick: () => markRead() }, t('inbox.markRead'));
  fill(root, h('div.screen.inbox',
    h('header.topbar', h('a.back', { href: '#/' }, '← ', t('nav.home')), h('span.title', t('inbox.title'))),
    h('main.inbox-main',
      h('section.card',
        h('div.row.spread', h('h2', t('inbox.title')), markAll),
        status, list, more))));

  let stopped = false;
  let cursor = null;
  let newest = null; // the newest id shown: what "mark all read" marks up to
  let token = null;
  const onVisible = () => document.visibilityState === 'visible' && load(null);
  document.addEventListener('visibilitychange', onVisible);

  async function load(from) {
    status.dataset.state = 'loading';
    if (!from) status.textContent = t('inbox.loading');
    try {
      token ??= (await ensurePlayer())?.token;
      if (!token) {
        status.textContent = t('inbox.unavailable');
        status.dataset.state = 'unavailable';
        return;
      }
      const page = await api.notifications(token, PAGE, from);
      if (stopped) return;
      const items = page.notifications.map(item);
      if (from) list.append(...items);
      else {
        fill(list, items);
        newest = page.notifications[0]?.notificationId ?? null;
      }
      cursor = page.cursor ?? null;
      more.hidden = !cursor;
      markAll.disabled = !newest || !list.querySelector('.unread');
      status.textContent = list.children.length ? '' : t('inbox.empty');
      status.dataset.state = 'ready';
    } catch (e) {
      if (stopped) return;
      status.textContent = api.notServed(e) ? t('inbox.unavailable') : e.message;
      status.dataset.state = api.notServed(e) ? 'unavailable' : 'error';
    }
  }

  async function markRead() {
    if (!newest || !token) return;
    try {
      await api.markNotificationsRead(token, newest);
      for (const li of list.querySelectorAll('.unread')) li.classList.remove('unread');
      markAll.disabled = true;
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  load(null);
  return () => {
    stopped = true;
    document.removeEventListener('visibilitychange', onVisible);
  };
}

// item is one notification: its title and body, when, and a link to the
// game it is about.
function item(n) {
  return h('li.notification', { class: n.read ? null : 'unread', dataset: { kind: n.kind, id: n.notificationId } },
    h('a.inbox-link', { href: '#/g/' + encodeURIComponent(n.gameId) },
      h('strong.inbox-title', n.title),
      h('span.inbox-body', n.body),
      h('time.muted', { datetime: new Date(n.at).toISOString() }, when(n.at))));
}

// when is a notification's time: the clock today, the date before.
function when(at) {
  const d = new Date(at);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}
