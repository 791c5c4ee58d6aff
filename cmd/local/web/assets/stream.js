// GameStream follows one game on the WebSocket stream (SPEC §16.1): it
// subscribes, hands every message to the screen, and after a drop
// reconnects by itself and subscribes again with afterVersion = the version
// the screen has, so the server sends the whole view with the events of
// exactly what was missed (or a reset when that is older than its log).
// Nothing here polls: the socket is idle until the server speaks, apart
// from a keep-alive ping every few minutes (API Gateway closes WebSockets
// idle for 10 minutes).
import { lang } from './i18n.js';

const BACKOFF_MS = [200, 500, 1000, 2000, 4000, 8000];
const PING_EVERY_MS = 4 * 60 * 1000;
const PONG_WITHIN_MS = 8000;

export class GameStream {
  // onMessage(msg) gets subscribed/change/error messages;
  // onStatus(status) gets 'connecting' | 'live' | 'offline'.
  // version() returns the version the screen has (null: none yet).
  constructor({ gameId, token, version, onMessage, onStatus }) {
    Object.assign(this, { gameId, token, version, onMessage, onStatus });
    this.ws = null;
    this.attempt = 0;
    this.stopped = false;
    this.timers = {};
    this.onOnline = () => this.reconnectNow();
    this.onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      // A laptop back from sleep may hold a socket that is dead without a
      // close event: a ping answers that within seconds.
      if (this.ws?.readyState === WebSocket.OPEN) this.ping();
      else this.reconnectNow();
    };
    window.addEventListener('online', this.onOnline);
    document.addEventListener('visibilitychange', this.onVisible);
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    clearTimeout(this.timers.retry);
    this.onStatus('connecting');
    const q = new URLSearchParams({ lang });
    if (this.token) q.set('token', this.token);
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/v1/stream?${q}`);
    this.ws = ws;
    ws.onopen = () => {
      this.subscribe();
      this.schedulePing();
    };
    ws.onmessage = (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      clearTimeout(this.timers.pong);
      if (msg.type === 'subscribed') {
        this.attempt = 0;
        this.onStatus('live');
      }
      if (msg.type === 'error' && (msg.code === 'forbidden' || msg.code === 'game_not_found')) {
        // Retrying cannot help; the screen decides what to show.
        this.stop();
      }
      if (msg.type !== 'pong') this.onMessage(msg);
    };
    ws.onclose = () => this.dropped(ws);
  }

  // subscribe (again) from the version the screen has: also how a screen
  // that finds a version missing catches up.
  subscribe() {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const sub = { action: 'subscribe', gameId: this.gameId };
    const v = this.version();
    if (v != null) sub.afterVersion = v;
    ws.send(JSON.stringify(sub));
  }

  // dropped handles the loss of ws (a close, or a ping left unanswered)
  // once, and schedules the reconnect.
  dropped(ws) {
    if (this.ws !== ws) return;
    this.ws = null;
    clearTimeout(this.timers.ping);
    clearTimeout(this.timers.pong);
    if (this.stopped) return;
    this.onStatus('offline');
    const wait = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt++;
    // Jitter, so a server restart is not met by every client at once.
    this.timers.retry = setTimeout(() => this.connect(), wait * (0.75 + Math.random() * 0.5));
  }

  // reconnectNow skips the back-off (the network came back).
  reconnectNow() {
    if (this.stopped || (this.ws && this.ws.readyState <= WebSocket.OPEN)) return;
    this.attempt = 0;
    this.connect();
  }

  schedulePing() {
    clearTimeout(this.timers.ping);
    this.timers.ping = setTimeout(() => this.ping(), PING_EVERY_MS);
  }

  ping() {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send('{"action":"ping"}');
    clearTimeout(this.timers.pong);
    // No answer: the connection is dead though no close came (its close
    // event could take minutes): give it up and reconnect now.
    this.timers.pong = setTimeout(() => {
      this.dropped(ws);
      ws.close();
    }, PONG_WITHIN_MS);
    this.schedulePing();
  }

  stop() {
    this.stopped = true;
    for (const id of Object.values(this.timers)) clearTimeout(id);
    window.removeEventListener('online', this.onOnline);
    document.removeEventListener('visibilitychange', this.onVisible);
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000);
  }
}
