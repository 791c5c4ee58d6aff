// The game screen (seeds/000 §9): opponent on top, the board oriented to
// the viewer's colour, the viewer's clock and buttons below; the stream
// keeps it live. A viewer without a seat is a spectator (flip button, local
// move-list navigation) and may join a waiting game from its link.
import * as api from './api.js';
import { Board, parsePlacement } from './board.js';
import { ClockState, formatClock, LOW_TIME_MS } from './clock.js';
import { t, colorName } from './i18n.js';
import { GameStream } from './stream.js';
import { applyDelta } from './delta.js';
import * as storage from './storage.js';
import { confirmDialog, copyText, fill, h, markAfterPaint, modal, onActivate, openRules, refill, toast } from './ui.js';
import { ensurePlayer, playerToken } from './players.js';
import { pieceIcon } from './pieces.js';
import { takeFirstView } from './firstview.js';

const PROMOTION_ORDER = ['q', 'r', 'b', 'n']; // queen first (seeds/000 §2 autoQueen)
// SKELETON_DELAY_MS: how long the screen waits for the game's view before
// it shows the empty board (on loopback the answer takes tens of
// milliseconds; a phone network can take several hundred).
const SKELETON_DELAY_MS = 200;

export function mountGame(root, { gameId, invite }) {
  const screen = new GameScreen(root, gameId, invite);
  screen.start();
  return () => screen.stop();
}

// shareLink is the link that opens a game; a private game's carries its
// invite code (kept out of the server's logs and referrers: it is in the
// fragment, which browsers never send).
export function shareLink(gameId, inviteCode) {
  const base = `${location.origin}${location.pathname}#/g/${gameId}`;
  return inviteCode ? `${base}?invite=${encodeURIComponent(inviteCode)}` : base;
}

// moveAnimation lists what slides for the last move: the piece, or for
// castling the king and the rook, from where they stood to where they
// stand now (Chess960 castling is king→own rook in UCI, standard e1g1).
function moveAnimation(view) {
  const lm = view.lastMove;
  if (!/^O-O/.test(lm.san)) return [{ from: lm.from, to: lm.to }];
  const queenSide = lm.san.startsWith('O-O-O');
  const rank = lm.color === 'white' ? '1' : '8';
  const kingTo = (queenSide ? 'c' : 'g') + rank;
  const rookTo = (queenSide ? 'd' : 'f') + rank;
  const rookFrom = view.variant === 'chess960' ? lm.to : (queenSide ? 'a' : 'h') + rank;
  return [{ from: lm.from, to: kingTo }, { from: rookFrom, to: rookTo }];
}

// uciSquares reads from/to of a UCI move (for history highlights).
const uciSquares = (uci) => ({ from: uci.slice(0, 2), to: uci.slice(2, 4) });

function kingSquare(fen, color) {
  for (const [sq, code] of parsePlacement(fen)) if (code === color[0] + 'k') return sq;
  return null;
}

const other = (c) => (c === 'white' ? 'black' : 'white');

class GameScreen {
  constructor(root, gameId, invite) {
    this.root = root;
    this.gameId = gameId;
    this.invite = invite;
    this.view = null;
    this.clock = null;
    this.viewPly = null; // null: the live position; n: after n plies
    this.flipped = false;
    this.busy = false;
    this.localMove = null; // {from, to}: shown before the server's answer
    this.resultShown = false;
    this.closeResult = null;
    this.streamStatus = 'connecting';
    this.seat = storage.getSeat(gameId);
    this.lastBeep = null;
    this.board = new Board({
      onMove: (m) => this.onBoardMove(m),
      onSelect: (sq, targets) => this.onBoardSelect(sq, targets),
    });
    this.onKey = (e) => this.keyNav(e);
  }

  get token() {
    return this.seat?.token ?? null;
  }

  get you() {
    return this.view?.you ?? null;
  }

  // ---- lifecycle --------------------------------------------------------

  // start reads the game first and builds the screen when the view is
  // there, so the screen's first layout and paint already show the game;
  // the browser lays the page out once instead of twice (an empty board,
  // then the position). A view slower than SKELETON_DELAY_MS gets the
  // empty screen in the meantime.
  async start() {
    const loading = this.load();
    this.skeletonTimer = setTimeout(() => this.build(), SKELETON_DELAY_MS);
    let view;
    try {
      view = await loading;
    } catch (e) {
      clearTimeout(this.skeletonTimer);
      if (!this.stopped) this.showLoadError(e);
      return;
    }
    clearTimeout(this.skeletonTimer);
    if (this.stopped) return;
    this.build();
    this.applyView(view);
    this.startStream();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.skeletonTimer);
    this.stream?.stop();
    clearTimeout(this.tickTimer);
    this.closeResult?.();
    document.removeEventListener('keydown', this.onKey);
  }

  // load reads the game once over HTTP and returns the view; the stream
  // takes over from its version. A stored token the server no longer
  // accepts is dropped and the game opens for a spectator.
  async load() {
    const tokens = storage.gameTokens(this.gameId);
    let view;
    for (const token of tokens) {
      try {
        ({ game: view } = await (takeFirstView(this.gameId, token) ?? api.getGame(this.gameId, token)));
      } catch (e) {
        if (token && ['forbidden', 'invalid_token', 'unauthorized'].includes(e.code)) {
          if (token === this.token) {
            storage.forgetSeat(this.gameId);
            this.seat = null;
          }
          continue;
        }
        throw e;
      }
      if (!this.seat && view.you && token) this.seat = { token, color: view.you };
      break;
    }
    return view;
  }

  startStream() {
    this.stream?.stop();
    this.stream = new GameStream({
      gameId: this.gameId,
      token: this.token,
      version: () => this.view?.version ?? null,
      onMessage: (m) => this.onStream(m),
      onStatus: (s) => {
        this.streamStatus = s;
        this.renderConnection();
      },
    });
  }

  // onStream takes the stream's messages: the whole view (subscribed, with
  // the events of the versions missed while away), then each version's
  // delta. A version already on the screen (an action's answer brought it)
  // is ignored; one that does not follow the screen's version means the
  // screen missed some: it catches up by subscribing again from its own.
  onStream(msg) {
    switch (msg.type) {
      case 'subscribed':
        if (msg.game) this.applyView(msg.game, (msg.missed ?? []).flatMap((c) => c.events));
        else this.refetch();
        break;
      case 'change': {
        const old = this.view;
        if (!old || msg.version <= old.version) break;
        if (msg.version !== old.version + 1) {
          this.stream?.subscribe();
          break;
        }
        this.applyView(applyDelta(old, msg.delta), msg.events);
        break;
      }
      case 'error':
        toast(msg.message, 'error');
        break;
    }
  }

  async refetch() {
    try {
      const { game } = await api.getGame(this.gameId, this.token);
      this.applyView(game);
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  showLoadError(e) {
    fill(this.root, h('div.screen.center',
      h('h2', e.code === 'game_not_found' ? t('game.notFound') : t('game.loadFailed')),
      h('p', e.message),
      h('a.button.primary', { href: '#/' }, t('nav.home'))));
  }

  // ---- the view ---------------------------------------------------------

  // applyView takes a newer view from any source (the load, an action's
  // answer, the stream); older or equal versions are ignored, so the
  // action's answer and the stream's copy of the same change meet once.
  applyView(view, events = []) {
    if (this.stopped || view.gameId !== this.gameId) return;
    const old = this.view;
    if (old && view.version <= old.version) return;
    this.view = view;
    // A delta that left the clock alone keeps its reading, and the moment
    // it was read.
    this.clock = new ClockState(view, old && view.clock === old.clock ? this.clock.receivedAt : undefined);
    let animate = [];
    if (old && this.viewPly === null && view.lastMove && view.moves.length === old.moves.length + 1) {
      const local = this.localMove;
      // The viewer's own move is on the board already; only castling's
      // rook (and promotions, en passant) still change, without a slide.
      if (!(local && local.from === view.lastMove.from)) animate = moveAnimation(view);
    }
    this.localMove = null;
    if (this.viewPly !== null && this.viewPly > view.moves.length) this.viewPly = null;
    this.announce(events, old);
    this.render(animate);
    if (view.phase === 'finished' && (!old || old.phase !== 'finished' || !this.resultShown)) {
      this.resultShown = true;
      this.showResult();
    } else if (view.rematch?.next && view.rematch.next !== old?.rematch?.next && document.getElementById('result-modal')) {
      this.showResult(); // now with the opponent's rematch to join
    }
    if (!this.interactiveMarked && this.board.el.isConnected) {
      this.interactiveMarked = true;
      markAfterPaint('board-interactive', 'board');
    }
  }

  // announce tells the viewer what the other side did.
  announce(events = [], old) {
    if (!old || !this.you) return;
    for (const e of events) {
      const mine = e.color === this.you;
      switch (e.type) {
        case 'playerJoined':
          if (!mine) toast(t('game.toast.joined'));
          break;
        case 'drawDeclined':
          if (!mine) toast(t('game.toast.drawDeclined'));
          break;
        case 'undoDeclined':
          if (!mine) toast(t('game.toast.undoDeclined'));
          break;
        case 'undoAccepted':
          toast(t('game.toast.undoAccepted'));
          break;
        case 'playerDisconnected':
          if (!mine) toast(t('game.toast.opponentLeft'));
          break;
        case 'playerReconnected':
          if (!mine) toast(t('game.toast.opponentBack'));
          break;
      }
    }
  }

  // ---- building and rendering -----------------------------------------

  // build puts the screen's elements in place, once (see start).
  build() {
    if (this.els) return;
    document.addEventListener('keydown', this.onKey);
    this.els = {};
    const e = this.els;
    const bar = (pos) => h(`section.player-bar.${pos}`,
      h('div.who',
        h('div.who-line', h('span.swatch'), h('span.name'), h('span.tags')),
        h('div.captured')),
      h('div.clock', { role: 'timer' }, '--:--'));
    e.top = bar('top');
    e.bottom = bar('bottom');
    e.status = h('div#status-line', { role: 'status', 'aria-live': 'polite' });
    e.offline = h('div#offline-banner', { hidden: true, role: 'alert' }, t('conn.banner'));
    e.banner = h('div#banner');
    e.castleHint = h('div#castle-hint', { hidden: true }, t('board.castleHint'));
    e.c960 = h('div#c960', { hidden: true },
      h('span#c960-index'),
      h('span.castle-buttons',
        h('button#btn-oo', { onclick: () => this.castle('king') }, t('game.castleKing')),
        h('button#btn-ooo', { onclick: () => this.castle('queen') }, t('game.castleQueen'))));
    e.controls = h('nav#controls');
    e.moves = h('ol#move-list');
    e.movesPanel = h('div#moves-panel',
      h('div.move-nav',
        h('button#nav-first', { title: t('moves.first'), onclick: () => this.goPly(0) }, '«'),
        h('button#nav-prev', { title: t('moves.prev'), onclick: () => this.stepPly(-1) }, '‹'),
        h('button#nav-next', { title: t('moves.next'), onclick: () => this.stepPly(1) }, '›'),
        h('button#nav-last', { title: t('moves.last'), onclick: () => this.goPly(null) }, '»')),
      e.moves);
    e.conn = h('span#conn-status', { title: '' });
    e.sound = h('button#btn-sound.icon', { onclick: () => this.toggleSound() });
    e.title = h('span.title', t('app.title'));
    const header = h('header.topbar',
      h('a.back', { href: '#/' }, '← ', t('nav.home')),
      e.title,
      h('span.topbar-right', e.conn, e.sound));
    e.boardWrap = h('div.board-wrap', this.board.el);
    this.root.replaceChildren(h('div.screen.game',
      header,
      h('div.game-layout',
        h('div.board-column', e.offline, e.top, e.boardWrap, e.bottom, e.castleHint),
        h('div.side', e.status, e.banner, e.c960, e.controls, e.movesPanel))));
    this.renderSound();
    this.renderConnection();
  }

  orientation() {
    const base = this.you ?? 'white';
    return this.flipped ? other(base) : base;
  }

  render(animate = []) {
    const v = this.view;
    if (!v) return;
    const root = this.root.querySelector('.screen.game');
    root.dataset.phase = v.phase;
    root.dataset.you = v.you ?? 'spectator';
    root.dataset.variant = v.variant;
    this.els.title.textContent = v.variant === 'chess960' ? t('app.title960') : t('app.title');
    this.board.setOrientation(this.orientation());
    this.renderBoard(animate);
    this.renderBars();
    this.renderStatus();
    this.renderBanner();
    this.render960();
    this.renderControls();
    this.renderMoves();
    this.tick();
  }

  // renderBoard shows the live position (interactive for the seat to move)
  // or a position of the move list.
  renderBoard(animate = []) {
    const v = this.view;
    if (this.viewPly !== null) {
      const ply = this.viewPly;
      const fen = ply === 0 ? v.startFen : v.moves[ply - 1].fenAfter;
      const san = ply > 0 ? v.moves[ply - 1].san : '';
      const whiteStarts = v.startFen.split(' ')[1] !== 'b';
      const turn = (ply % 2 === 0) === whiteStarts ? 'white' : 'black';
      this.board.update({
        fen,
        lastMove: ply > 0 ? uciSquares(v.moves[ply - 1].uci) : null,
        check: /[+#]$/.test(san) ? kingSquare(fen, turn) : null,
        legalMoves: null,
      });
      this.board.el.dataset.ply = ply;
      return;
    }
    delete this.board.el.dataset.ply;
    const canMove = v.phase === 'playing' && v.you && v.turn === v.you && !this.busy && v.legalMoves;
    this.board.update({
      fen: v.fen,
      lastMove: v.lastMove,
      check: v.check ? kingSquare(v.fen, v.turn) : null,
      legalMoves: canMove ? v.legalMoves : null,
      mover: v.you,
      hints: v.options.hints !== 'off',
      animate,
    });
  }

  renderBars() {
    const bottom = this.orientation();
    this.renderBar(this.els.bottom, bottom);
    this.renderBar(this.els.top, other(bottom));
  }

  renderBar(el, color) {
    const v = this.view;
    const p = v.players[color];
    el.dataset.color = color;
    el.querySelector('.swatch').className = 'swatch ' + color;
    el.querySelector('.name').textContent = p ? p.name || colorName(color) : t('game.emptySeat');
    const tags = [];
    if (color === v.you) tags.push(h('span.tag.me', t('game.you')));
    if (p?.ai) tags.push(h('span.tag', t('ai.level.' + p.ai)));
    if (p?.rank) tags.push(h('span.tag', p.rank));
    else if (p?.rating != null) tags.push(h('span.tag', String(p.rating)));
    // Offline: the seat's stream closed and its grace runs (a seat that
    // plays over HTTP only was never connected, and is not offline).
    if (p && !p.ai && isOffline(p) && v.phase !== 'finished') tags.push(h('span.tag.warn', t('game.offline')));
    fill(el.querySelector('.tags'), tags);
    // The pieces this side has taken, and its material lead.
    const taken = v.captured[color].map((letter) => {
      const code = (color === 'white' ? 'b' : 'w') + letter;
      return h('span.cap.pc.pc-' + code, pieceIcon(code));
    });
    const lead = color === 'white' ? v.materialDiff : -v.materialDiff;
    fill(el.querySelector('.captured'), taken, lead > 0 ? h('span.lead', '+' + lead) : null);
    el.classList.toggle('to-move', v.phase === 'playing' && v.turn === color);
  }

  // tick redraws the clocks and schedules the next redraw for the moment a
  // figure changes (a local timer; nothing is fetched).
  tick() {
    clearTimeout(this.tickTimer);
    const v = this.view;
    if (!v || this.stopped) return;
    const now = performance.now();
    for (const el of [this.els.top, this.els.bottom]) {
      const color = el.dataset.color;
      const clockEl = el.querySelector('.clock');
      if (v.clock.type === 'none') {
        clockEl.textContent = '∞';
        clockEl.classList.remove('low', 'running');
        continue;
      }
      const ms = this.clock.remaining(color, now);
      clockEl.textContent = formatClock(ms);
      clockEl.classList.toggle('low', ms < LOW_TIME_MS && v.phase !== 'finished');
      clockEl.classList.toggle('running', this.clock.running === color);
      if (v.clock.type === 'perMove') clockEl.dataset.ext = t('game.extensions', { n: v.clock.extensionsLeft[color] });
      if (color === v.you && this.clock.running === color && ms < LOW_TIME_MS) this.beep(Math.ceil(ms / 1000));
    }
    this.renderCountdown(now);
    // The start is the server's to commit: at startsAt, read the game
    // (the read starts it, and an AI's first move with it).
    if (this.clock.startsIn(now) === 0 && this.startRead !== v.version) {
      this.startRead = v.version;
      this.refetch();
    }
    const wait = this.clock.nextChange(now);
    if (wait != null) this.tickTimer = setTimeout(() => this.tick(), wait);
  }

  renderCountdown(now) {
    const el = this.els.status.querySelector('.countdown');
    if (!el) return;
    const starts = this.clock.startsIn(now);
    const left = this.clock.deadlineIn(now);
    if (starts != null) el.textContent = t('game.startsIn', { s: Math.ceil(starts / 1000) });
    else if (this.view.phase === 'ready') el.textContent = left == null ? '' : t('game.readyIn', { s: Math.ceil(left / 1000) });
    else el.textContent = left == null ? '' : t('game.firstMoveIn', { s: Math.ceil(left / 1000) });
  }

  renderStatus() {
    const v = this.view;
    const parts = [];
    if (this.viewPly !== null) {
      parts.push(h('span', this.viewPly === 0 ? t('moves.viewingStart') : t('moves.viewing', { n: this.viewPly })),
        h('button#btn-live.link', { onclick: () => this.goPly(null) }, t('moves.backToLive')));
    } else if (v.phase === 'waiting') {
      parts.push(h('span', t('game.status.waiting')));
    } else if (v.phase === 'ready') {
      // The rooms' game (seeds/003): both get ready, it starts 3 s later.
      parts.push(h('span', t('game.status.ready')), h('span.countdown'));
    } else if (v.phase === 'finished') {
      parts.push(h('span.summary', v.result.summary),
        h('button#btn-show-result.link', { onclick: () => this.showResult() }, t('game.showResult')));
    } else {
      if (v.check) parts.push(h('strong.check-text', t('board.check')));
      const opp = v.players[v.turn];
      if (!v.you) parts.push(h('span', t('game.status.turnOf', { color: colorName(v.turn) })));
      else if (v.turn === v.you) parts.push(h('span', t('game.status.yourTurn')));
      else parts.push(h('span', opp?.ai ? t('game.status.aiThinking') : t('game.status.theirTurn')));
      if (!v.clock.started[v.turn] && v.deadline != null) parts.push(h('span.countdown'));
    }
    fill(this.els.status, parts);
  }

  renderBanner() {
    const v = this.view;
    const you = v.you;
    const items = [];
    const seatOpen = v.phase === 'waiting' && (!v.players.white || !v.players.black);
    if (seatOpen && you) {
      const link = shareLink(v.gameId, this.seat?.inviteCode);
      const input = h('input#share-link', { readonly: true, value: link, onfocus: (e) => e.target.select() });
      items.push(h('div.share',
        h('p', this.seat?.inviteCode ? t('game.share.private') : t('game.share.open')),
        h('div.share-row', input,
          h('button#btn-copy.primary', {
            onclick: async () => toast((await copyText(link, input)) ? t('game.share.copied') : t('game.share.copyFailed')),
          }, t('game.share.copy')))));
    } else if (seatOpen && !you) {
      items.push(h('div.join',
        h('p', t('game.join.prompt')),
        h('button#btn-join.primary', { onclick: () => this.join() }, t('game.join.button'))));
    }
    if (v.phase === 'ready' && you && v.startsAt == null) {
      items.push(v.ready?.[you]
        ? h('div.request#ready-done', h('p', t('game.ready.done')))
        : h('div.request#ready-request', h('p', t('game.ready.prompt')),
          h('button#btn-ready.primary', { onclick: () => this.act('ready') }, t('game.ready.button'))));
    }
    if (v.phase === 'playing' && you) {
      const draw = v.pending.draw;
      const undo = v.pending.undo;
      if (draw && draw.by !== you) {
        items.push(h('div.request#draw-request', h('p', t('game.draw.offered')),
          h('button#draw-decline', { onclick: () => this.act('respondDraw', { accept: false }) }, t('common.decline')),
          h('button#draw-accept.primary', { onclick: () => this.act('respondDraw', { accept: true }) }, t('common.accept'))));
      } else if (draw) {
        items.push(h('div.request#draw-pending', h('p', t('game.draw.sent')),
          h('button#draw-cancel', { onclick: () => this.act('cancelOffer') }, t('common.withdraw'))));
      }
      if (undo && undo.by !== you) {
        items.push(h('div.request#undo-request', h('p', t('game.undo.requested', { n: undo.plies })),
          h('button#undo-decline', { onclick: () => this.act('respondUndo', { accept: false }) }, t('common.decline')),
          h('button#undo-accept.primary', { onclick: () => this.act('respondUndo', { accept: true }) }, t('common.accept'))));
      } else if (undo) {
        items.push(h('div.request#undo-pending', h('p', t('game.undo.sent')),
          h('button#undo-cancel', { onclick: () => this.act('cancelOffer') }, t('common.withdraw'))));
      }
      if (v.claimable && v.turn === you) {
        items.push(h('div.request#claim', h('p', t('game.claim.' + v.claimable)),
          h('button#btn-claim.primary', { onclick: () => this.act('claimDraw') }, t('game.claim.button'))));
      }
    }
    if (v.phase === 'finished' && you && v.rematch?.next && !storage.getSeat(v.rematch.next)) {
      items.push(h('div.request#rematch-offer', h('p', t('game.rematch.offered')),
        h('button#btn-rematch-join.primary', { onclick: () => this.joinRematch(v.rematch.next) }, t('game.rematch.join'))));
    }
    if (!you && v.phase !== 'waiting') items.push(h('div.spectating', t('game.spectating')));
    refill(this.els.banner, items);
  }

  render960() {
    const v = this.view;
    const on = v.variant === 'chess960';
    this.els.c960.hidden = !on;
    if (!on) return;
    this.els.c960.querySelector('#c960-index').textContent = t('game.c960', { n: v.chess960Index });
    const sides = new Set((this.board.mover ? v.legalMoves || [] : []).filter((m) => m.castle).map((m) => m.castle));
    const oo = this.els.c960.querySelector('#btn-oo');
    const ooo = this.els.c960.querySelector('#btn-ooo');
    oo.disabled = !sides.has('king');
    ooo.disabled = !sides.has('queen');
    this.els.c960.querySelector('.castle-buttons').hidden = !v.you || v.phase !== 'playing';
  }

  renderControls() {
    const v = this.view;
    const you = v.you;
    const buttons = [];
    const playing = v.phase === 'playing' && you && this.viewPly === null;
    if (you && v.phase === 'playing') {
      const myMoves = v.moves.filter((m) => m.color === you).length;
      buttons.push(h('button#btn-undo', {
        disabled: !playing || v.options.undo === 'off' || myMoves === 0 || !!v.pending.undo || this.busy,
        onclick: () => this.act('requestUndo'),
      }, t('controls.undo')));
      buttons.push(h('button#btn-draw', {
        disabled: !playing || !v.options.drawOffer || !!v.pending.draw || this.busy,
        onclick: () => this.act('offerDraw'),
      }, t('controls.draw')));
      buttons.push(h('button#btn-resign', { disabled: this.busy, onclick: () => this.resign() }, t('controls.resign')));
    } else if (you && v.phase === 'ready') {
      buttons.push(h('button#btn-resign', { disabled: this.busy, onclick: () => this.resign() }, t('controls.resign')));
    }
    if (!you || v.phase === 'finished') {
      buttons.push(h('button#btn-flip', { onclick: () => this.flip() }, t('controls.flip')));
    }
    if (you && v.phase === 'finished') {
      buttons.push(h('button#btn-rematch', { onclick: () => this.rematch() }, t('controls.rematch')));
    }
    buttons.push(h('button#btn-moves', {
      'aria-expanded': String(this.root.querySelector('.screen.game').classList.contains('show-moves')),
      onclick: () => this.toggleMoves(),
    }, t('controls.moves')));
    buttons.push(h('button#btn-rules', { onclick: openRules }, t('controls.rules')));
    refill(this.els.controls, buttons);
  }

  renderMoves() {
    const v = this.view;
    const current = this.viewPly ?? v.moves.length;
    const rows = [];
    const blackFirst = v.startFen.split(' ')[1] === 'b';
    const startNo = Number(v.startFen.split(' ')[5]) || 1;
    let row = null;
    v.moves.forEach((m, i) => {
      const ply = i + 1;
      if (m.color === 'white' || row === null) {
        const no = startNo + Math.floor((i + (blackFirst ? 1 : 0)) / 2);
        row = h('li', h('span.no', no + '.'));
        if (m.color === 'black') row.append(h('span.san.empty', '…'));
        rows.push(row);
      }
      row.append(h('button.san', {
        dataset: { ply },
        class: ply === current ? 'current' : null,
        onclick: () => this.goPly(ply === v.moves.length ? null : ply),
      }, m.san));
    });
    fill(this.els.moves, rows.length ? rows : h('li.empty', t('moves.none')));
    // Keep the current move in view inside the list (never the page).
    const cur = this.els.moves.querySelector('.current');
    if (cur) this.els.moves.scrollTop = cur.offsetTop - this.els.moves.clientHeight / 2;
    const atLive = this.viewPly === null;
    this.els.movesPanel.querySelector('#nav-next').disabled = atLive;
    this.els.movesPanel.querySelector('#nav-last').disabled = atLive;
    this.els.movesPanel.querySelector('#nav-prev').disabled = current === 0;
    this.els.movesPanel.querySelector('#nav-first').disabled = current === 0;
  }

  renderConnection() {
    const el = this.els?.conn;
    if (!el) return;
    el.dataset.status = this.streamStatus;
    el.textContent = t('conn.' + this.streamStatus);
    // Only a lost connection earns the banner; the first connect is quick.
    this.els.offline.hidden = this.streamStatus !== 'offline';
  }

  // ---- move list navigation (local) ------------------------------------

  goPly(ply) {
    if (!this.view) return;
    if (ply !== null && ply >= this.view.moves.length) ply = null;
    this.viewPly = ply;
    this.board.select(null);
    this.render();
  }

  stepPly(delta) {
    if (!this.view) return;
    const cur = this.viewPly ?? this.view.moves.length;
    this.goPly(Math.max(0, cur + delta));
  }

  keyNav(e) {
    if (e.target.closest?.('input, textarea, select') || document.querySelector('.modal')) return;
    if (e.key === 'ArrowLeft') this.stepPly(-1);
    else if (e.key === 'ArrowRight') this.stepPly(1);
    else return;
    e.preventDefault();
  }

  toggleMoves() {
    const root = this.root.querySelector('.screen.game');
    root.classList.toggle('show-moves');
    this.renderControls();
  }

  flip() {
    this.flipped = !this.flipped;
    this.render();
  }

  // ---- moves and actions ------------------------------------------------

  onBoardSelect(sq, targets) {
    const castling = [...targets.values()].includes('castle');
    this.els.castleHint.hidden = !castling;
  }

  async onBoardMove({ from, to, moves, animate }) {
    const v = this.view;
    if (!moves.length) return;
    let move = moves[0];
    if (moves.some((m) => m.promotion)) {
      const piece = v.options.autoQueen ? 'q' : await this.choosePromotion(v.you);
      if (!piece) {
        this.renderBoard(); // the pawn goes back
        return;
      }
      move = moves.find((m) => m.promotion === piece);
    }
    if (!move.castle && !move.promotion) {
      this.board.showMove(from, to, animate);
      this.localMove = { from, to };
    }
    await this.act('move', { uci: move.uci });
  }

  castle(side) {
    const move = (this.view.legalMoves || []).find((m) => m.castle === side);
    if (move) this.act('castle', { side });
  }

  choosePromotion(color) {
    const c = color === 'white' ? 'w' : 'b';
    return new Promise((resolve) => {
      const body = h('div.promo-choices', PROMOTION_ORDER.map((p) =>
        onActivate(h('button.promo-choice', { dataset: { piece: p }, 'aria-label': t('piece.' + p) },
          h('span.pc.pc-' + c + p, pieceIcon(c + p)), h('span.label', t('piece.' + p))), () => {
          close();
          resolve(p);
        })));
      const close = modal({ id: 'promo-modal', title: t('game.promotion'), body, onDismiss: () => resolve(null) });
    });
  }

  // act sends one action of the viewer's seat; the answer's view replaces
  // what is shown (an illegal move puts the piece back, with the server's
  // reason).
  async act(type, payload) {
    if (this.busy || !this.token) return;
    this.busy = true;
    this.board.setLegal(null);
    this.renderControls();
    let answer;
    try {
      answer = await api.act(this.gameId, this.token, type, payload);
    } catch (e) {
      this.localMove = null;
      if (e.code === 'version_conflict' && e.body?.game) this.applyView(e.body.game);
      toast(e.message, 'error');
    }
    this.busy = false;
    if (answer) this.applyView(answer.game, answer.events);
    // Also when the stream brought this version first: the board must
    // become interactive again, or show the position again after a refusal.
    this.render();
  }

  async resign() {
    const v = this.view;
    const bothMoved = v.clock.started.white && v.clock.started.black;
    const yes = await confirmDialog({
      id: 'resign-confirm',
      title: t('game.resign.title'),
      body: bothMoved ? t('game.resign.body') : t('game.resign.abortBody'),
      yes: t('controls.resign'),
      danger: true,
    });
    if (yes) await this.act('resign');
  }

  async join() {
    try {
      await ensurePlayer();
      const body = {};
      const name = storage.getPrefs().name;
      if (name && !playerToken()) body.player = { name };
      if (this.invite) body.inviteCode = this.invite;
      const answer = await api.joinGame(this.gameId, body, playerToken());
      storage.rememberSeat({ ...answer, gameId: this.gameId });
      this.seat = storage.getSeat(this.gameId);
      this.view = null; // the seat's view replaces the spectator's
      this.applyView(answer.game);
      this.startStream();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  // rematchCredentials: who asks for (or joins) the rematch. The server
  // admits one of the old game's two players by a token of that game: the
  // player token when the seat was bound to this browser's player (the new
  // seat is then bound too), else the old seat's token, with the name.
  rematchCredentials() {
    const v = this.view;
    const me = v.players[v.you];
    const player = storage.getPlayer();
    if (player && me?.playerId === player.playerId) return { token: player.token, body: {} };
    return { token: this.token, body: me?.name ? { player: { name: me.name } } : {} };
  }

  // rematch starts the next game: the server copies the options and the
  // opponent and swaps the colours (SPEC §16.2; the free seat is kept for
  // the opponent); when the other player asked first, it joins theirs.
  async rematch() {
    const v = this.view;
    if (v.rematch?.next) {
      if (storage.getSeat(v.rematch.next)) location.hash = '#/g/' + v.rematch.next;
      else await this.joinRematch(v.rematch.next);
      return;
    }
    const { token, body } = this.rematchCredentials();
    body.rematchOf = v.gameId;
    try {
      const answer = await api.createGame(body, token);
      location.hash = '#/g/' + storage.rememberSeat(answer);
    } catch (e) {
      if (e.code === 'rematch_exists') {
        await this.refetch();
        if (this.view.rematch?.next) return this.joinRematch(this.view.rematch.next);
      }
      toast(e.message, 'error');
    }
  }

  async joinRematch(id) {
    const { token, body } = this.rematchCredentials();
    try {
      const answer = await api.joinGame(id, body, token);
      location.hash = '#/g/' + storage.rememberSeat({ ...answer, gameId: id });
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  // ---- the result ---------------------------------------------------------

  showResult() {
    const v = this.view;
    const r = v.result;
    if (!r) return;
    this.closeResult?.();
    let title;
    if (r.reason === 'aborted' || r.reason === 'expired') title = t('result.title.aborted');
    else if (!r.winner) title = t('result.title.draw');
    else if (!v.you) title = t('result.title.won', { color: colorName(r.winner) });
    else title = r.winner === v.you ? t('result.title.youWon') : t('result.title.youLost');
    const loser = r.winner ? other(r.winner) : null;
    const body = h('div.result',
      h('p.summary', r.summary),
      h('p.why', t('result.why.' + r.reason, { loser: loser && colorName(loser), winner: r.winner && colorName(r.winner), side: colorName(v.turn) })),
      r.ratingChange && v.you ? h('p.rating', t('result.rating', {
        before: r.ratingChange[v.you].before,
        after: r.ratingChange[v.you].after,
        delta: signed(r.ratingChange[v.you].after - r.ratingChange[v.you].before),
      })) : null);
    const offered = v.you && v.rematch?.next && !storage.getSeat(v.rematch.next);
    if (offered) body.append(h('p.rematch-offer', t('game.rematch.offered')));
    const actions = [{ label: t('common.close'), id: 'result-close' }];
    if (v.you) actions.push({ label: offered ? t('game.rematch.join') : t('controls.rematch'), primary: true, id: 'result-rematch', onClick: () => this.rematch() });
    actions.push({ label: t('result.newGame'), id: 'result-new', onClick: () => { location.hash = '#/'; } });
    this.closeResult = modal({ id: 'result-modal', title, body, actions, className: 'result-modal' });
  }

  // ---- sound --------------------------------------------------------------

  toggleSound() {
    storage.setPrefs({ sound: !soundOn() });
    this.renderSound();
  }

  renderSound() {
    fill(this.els.sound, speakerIcon(soundOn()));
    this.els.sound.title = soundOn() ? t('sound.off') : t('sound.on');
    this.els.sound.setAttribute('aria-label', this.els.sound.title);
    this.els.sound.setAttribute('aria-pressed', String(soundOn()));
  }

  // beep ticks once a second while the viewer's own clock is under 10 s
  // (seeds/000 §9; the speaker button turns it off).
  beep(second) {
    if (!soundOn() || second === this.lastBeep) return;
    this.lastBeep = second;
    try {
      this.audio ??= new AudioContext();
      const osc = this.audio.createOscillator();
      const gain = this.audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.08, this.audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.0001, this.audio.currentTime + 0.08);
      osc.connect(gain).connect(this.audio.destination);
      osc.start();
      osc.stop(this.audio.currentTime + 0.09);
    } catch {
      // No audio here: the red clock says it anyway.
    }
  }
}

const soundOn = () => storage.getPrefs().sound !== false;

// speakerIcon draws a speaker, with sound waves or crossed out (drawn, so
// no emoji font is needed).
function speakerIcon(on) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '20');
  svg.setAttribute('height', '20');
  const path = (d, fill) => {
    const p = document.createElementNS(ns, 'path');
    p.setAttribute('d', d);
    p.setAttribute('fill', fill ? 'currentColor' : 'none');
    p.setAttribute('stroke', 'currentColor');
    p.setAttribute('stroke-width', '2');
    p.setAttribute('stroke-linecap', 'round');
    p.setAttribute('stroke-linejoin', 'round');
    svg.append(p);
  };
  path('M4 9h4l5-4v14l-5-4H4z', true);
  if (on) path('M16.5 8.5a5 5 0 0 1 0 7M19 6a8.5 8.5 0 0 1 0 12', false);
  else path('M17 9l5 6M22 9l-5 6', false);
  return svg;
}
const signed = (n) => (n > 0 ? '+' + n : String(n));

// isOffline: a seat shown as gone — its last stream connection closed
// (presence since then), not a seat that never opened one.
function isOffline(p) {
  return p.presence ? !p.presence.connected && p.presence.since != null : !p.connected;
}
