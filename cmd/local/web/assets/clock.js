// Clock display. The view's clock is as of clock.asOf on the server; the
// client counts down from the moment it received the view (on its own
// monotonic clock), so a skewed device clock does not matter. The server's
// deadline decides the game; this is only the display.

export const LOW_TIME_MS = 10_000;

// formatClock: "1:05:00", "9:59", "0:09.4" (tenths under 10 s). The clock
// element has a fixed width and tabular digits, so a change of format never
// moves anything around it.
export function formatClock(ms) {
  ms = Math.max(0, ms);
  if (ms < LOW_TIME_MS) {
    const tenths = Math.floor(ms / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

// ClockState turns a view into the remaining time of each side at any
// later moment.
export class ClockState {
  constructor(view, receivedAt = performance.now()) {
    this.view = view;
    this.receivedAt = receivedAt;
  }

  // running is the side whose time runs now (null: none).
  get running() {
    const v = this.view;
    const c = v.clock;
    if (v.phase !== 'playing' || c.type === 'none' || !c.running) return null;
    // Before a side's first move only the first-move limit runs
    // (seeds/000 §8.5), not its clock.
    return c.started[c.running] ? c.running : null;
  }

  remaining(color, now = performance.now()) {
    const c = this.view.clock;
    let ms = c.remainingMs[color];
    if (this.running === color) ms -= now - this.receivedAt;
    return Math.max(0, ms);
  }

  // deadlineIn is the time left until the view's deadline (the first-move
  // limit, the idle limit, a disconnect grace), or null.
  deadlineIn(now = performance.now()) {
    const v = this.view;
    if (v.deadline == null) return null;
    return Math.max(0, v.deadline - v.clock.asOf - (now - this.receivedAt));
  }

  // startsIn is the time left until a game in its ready step starts (its
  // startsAt, once both seats are ready), or null.
  startsIn(now = performance.now()) {
    const v = this.view;
    if (v.phase !== 'ready' || v.startsAt == null) return null;
    return Math.max(0, v.startsAt - v.clock.asOf - (now - this.receivedAt));
  }

  // nextChange is how long until some displayed figure changes.
  nextChange(now = performance.now()) {
    const r = this.running;
    const waits = [];
    const s = this.startsIn(now);
    if (s != null && s > 0) waits.push((s % 1000) + 1);
    if (r) {
      const ms = this.remaining(r, now);
      waits.push(ms < LOW_TIME_MS ? (ms % 100) + 1 : (ms % 1000) + 1);
    }
    const d = this.deadlineIn(now);
    if (d != null && d > 0) waits.push((d % 1000) + 1);
    return waits.length ? Math.max(16, Math.min(...waits)) : null;
  }
}
