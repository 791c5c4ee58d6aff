// The account settings (SPEC §16.2): this browser's player, its sessions
// (one per device: labelled, listed with their last use, revocable), a
// recovery code to get the account back on another device, a recovery
// form for this one, the players it blocks, and the account's deletion.
// Everything goes through the public HTTP API, as an app would.
import * as api from './api.js';
import { t } from './i18n.js';
import { loadMe, playerToken } from './players.js';
import * as storage from './storage.js';
import { confirmDialog, copyText, fill, h, toast } from './ui.js';

const account = {
  sessions: (token) => api.call('GET', '/v1/players/me/sessions', { token }),
  labelSession: (token, label) => api.call('PATCH', '/v1/players/me/sessions/current', { token, body: { label } }),
  revokeSession: (token, id) => api.call('DELETE', `/v1/players/me/sessions/${encodeURIComponent(id)}`, { token }),
  newRecoveryCode: (token) => api.call('POST', '/v1/players/me/recovery-code', { token, body: {} }),
  recover: (playerId, recoveryCode) => api.call('POST', '/v1/players/recover', { body: { playerId, recoveryCode } }),
  blocks: (token) => api.call('GET', '/v1/players/me/blocks', { token }),
  block: (token, id) => api.call('POST', `/v1/players/me/blocks/${encodeURIComponent(id)}`, { token }),
  unblock: (token, id) => api.call('DELETE', `/v1/players/me/blocks/${encodeURIComponent(id)}`, { token }),
  deleteMe: (token) => api.call('DELETE', '/v1/players/me', { token }),
};

export function mountSettings(root) {
  const status = h('p#settings-status.muted', t('lobby.loading'));
  const meBox = h('div#settings-me');
  const sessionList = h('ul#session-list.game-list');
  const blockList = h('ul#block-list.game-list');
  const codeBox = h('div#recovery-code-box');
  const labelInput = h('input#session-label', { maxlength: 40, placeholder: t('settings.sessions.labelPlaceholder'), autocomplete: 'off' });
  const blockInput = h('input#block-id', { placeholder: t('settings.blocks.placeholder'), autocomplete: 'off' });
  const recoverId = h('input#recover-id', { placeholder: t('settings.recover.id'), autocomplete: 'off' });
  const recoverCode = h('input#recover-code', { placeholder: t('settings.recover.code'), autocomplete: 'off' });

  fill(root, h('div.screen.settings', { dataset: { state: 'loading' } },
    h('header.topbar', h('a.back', { href: '#/' }, '← ', t('nav.home')), h('span.title', t('settings.title'))),
    h('main.settings-main',
      status,
      h('section.card', meBox),
      h('section.card#sessions-card',
        h('h2', t('settings.sessions.title')),
        h('p.muted', t('settings.sessions.explain')),
        sessionList,
        h('form.row', { onsubmit: (e) => { e.preventDefault(); run(saveLabel); } },
          labelInput, h('button#btn-session-label', { type: 'submit' }, t('settings.sessions.label')))),
      h('section.card#recovery-card',
        h('h2', t('settings.recovery.title')),
        h('p.muted', t('settings.recovery.explain')),
        h('div.row', h('button#btn-recovery-code', { onclick: () => run(newCode) }, t('settings.recovery.new'))),
        codeBox,
        h('details',
          h('summary', t('settings.recover.title')),
          h('p.muted', t('settings.recover.explain')),
          h('form.row', { onsubmit: (e) => { e.preventDefault(); run(recover); } },
            recoverId, recoverCode, h('button#btn-recover', { type: 'submit' }, t('settings.recover.use'))))),
      h('section.card#blocks-card',
        h('h2', t('settings.blocks.title')),
        h('p.muted', t('settings.blocks.explain')),
        blockList,
        h('form.row', { onsubmit: (e) => { e.preventDefault(); run(block); } },
          blockInput, h('button#btn-block', { type: 'submit' }, t('settings.blocks.block')))),
      h('section.card.danger#delete-card',
        h('h2', t('settings.delete.title')),
        h('p.muted', t('settings.delete.explain')),
        h('button#btn-delete-account.danger', { onclick: () => run(deleteAccount) }, t('settings.delete.button'))))));
  const screen = root.querySelector('.screen.settings');

  let stopped = false;

  // run calls an action and shows its error; the lists are read again
  // after it.
  async function run(action) {
    try {
      await action();
    } catch (e) {
      if (!stopped) toast(e.message, 'error');
    }
  }

  async function refresh() {
    // loadMe: a token signed out elsewhere is replaced by a new player.
    const me = await loadMe();
    if (stopped) return;
    if (!me) {
      status.textContent = t('players.unavailable');
      screen.dataset.state = 'unavailable';
      return;
    }
    const token = playerToken();
    const [sessions, blocks] = await Promise.all([account.sessions(token), account.blocks(token)]);
    if (stopped) return;
    fill(meBox,
      h('div.me-line', h('strong.me-name', me.name), h('span.tag', me.rank), h('span.muted', t('players.rating', { rating: me.rating, games: me.ratedGames }))),
      h('p.muted', t('settings.playerId'), ' ', h('code#my-player-id', me.playerId)));
    fill(sessionList, sessions.sessions.map((s) => h('li.session', { dataset: { session: s.sessionId, current: String(s.current) } },
      h('div',
        h('strong', s.label || t('settings.sessions.unnamed')),
        s.current ? h('span.tag.me', t('settings.sessions.current')) : null),
      h('div.muted', t('settings.sessions.times', { created: when(s.createdAt), used: when(s.lastUsedAt) })),
      h('button.btn-revoke', { onclick: () => run(() => revoke(s)) }, s.current ? t('settings.sessions.signOut') : t('settings.sessions.revoke')))));
    const current = sessions.sessions.find((s) => s.current);
    if (current && document.activeElement !== labelInput) labelInput.value = current.label;
    fill(blockList, blocks.blocks.length
      ? blocks.blocks.map((b) => h('li.blocked', { dataset: { player: b.playerId } },
        h('strong', b.name), h('span.muted', when(b.blockedAt)),
        h('button.btn-unblock', { onclick: () => run(() => unblock(b.playerId)) }, t('settings.blocks.unblock'))))
      : h('li.muted#no-blocks', t('settings.blocks.none')));
    status.textContent = '';
    screen.dataset.state = 'ready';
  }

  async function saveLabel() {
    await account.labelSession(playerToken(), labelInput.value);
    toast(t('settings.saved'));
    await refresh();
  }

  async function revoke(s) {
    if (s.current) {
      const ok = await confirmDialog({ id: 'confirm-sign-out', title: t('settings.sessions.signOut'), body: t('settings.sessions.signOutExplain'), yes: t('settings.sessions.signOut'), danger: true });
      if (!ok) return;
    }
    await account.revokeSession(playerToken(), s.sessionId);
    if (s.current) {
      storage.forgetPlayer();
      location.hash = '#/';
      return;
    }
    toast(t('settings.sessions.revoked'));
    await refresh();
  }

  async function newCode() {
    const { recoveryCode } = await account.newRecoveryCode(playerToken());
    const id = storage.getPlayer()?.playerId ?? '';
    const input = h('input#recovery-code', { value: recoveryCode, readonly: true });
    fill(codeBox,
      h('p', h('strong', t('settings.recovery.shown'))),
      h('div.row', input, h('button#btn-copy-code', { onclick: () => copyText(`${id} ${recoveryCode}`, input).then((ok) => ok && toast(t('settings.copied'))) }, t('settings.copy'))),
      h('p.muted', t('settings.recovery.with', { id })));
  }

  async function recover() {
    const answer = await account.recover(recoverId.value.trim(), recoverCode.value.trim());
    storage.setPlayer({ playerId: answer.playerId, token: answer.token });
    recoverId.value = recoverCode.value = '';
    toast(t('settings.recover.done'));
    await refresh(); // the other screens read the player when they open
  }

  async function block() {
    const id = blockInput.value.trim();
    if (!id) return;
    await account.block(playerToken(), id);
    blockInput.value = '';
    await refresh();
  }

  async function unblock(id) {
    await account.unblock(playerToken(), id);
    await refresh();
  }

  async function deleteAccount() {
    const ok = await confirmDialog({ id: 'confirm-delete', title: t('settings.delete.title'), body: t('settings.delete.confirm'), yes: t('settings.delete.button'), danger: true });
    if (!ok) return;
    await account.deleteMe(playerToken());
    storage.forgetPlayer();
    toast(t('settings.delete.done'));
    location.hash = '#/';
  }

  refresh().catch((e) => {
    if (stopped) return;
    status.textContent = e.message;
    screen.dataset.state = 'error';
  });
  return () => {
    stopped = true;
  };
}

// when is a time as the reader's locale writes it.
function when(ms) {
  return new Date(ms).toLocaleString(document.documentElement.lang || undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
