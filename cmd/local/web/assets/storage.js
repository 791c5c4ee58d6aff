// What the browser keeps between visits (localStorage): the player token
// (SPEC §12), the seat token of every game this browser sits in (so a
// reload, or coming back tomorrow, continues the game), and preferences.
// Tokens are secrets: they never leave this storage except in the
// Authorization header or the stream's ?token=.

const KEYS = { player: 'chess.player', seats: 'chess.seats', prefs: 'chess.prefs' };
const MAX_SEATS = 100;

function read(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key));
    return v ?? fallback;
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or a full quota: the game goes on, only a reload loses it.
  }
}

// The player: {playerId, token, name} or null.
export const getPlayer = () => read(KEYS.player, null);
export const setPlayer = (p) => write(KEYS.player, p);
export const forgetPlayer = () => localStorage.removeItem(KEYS.player);

// Seats: {gameId: {token, color, playerId, at}}.
export function getSeat(gameId) {
  return read(KEYS.seats, {})[gameId] ?? null;
}

export function setSeat(gameId, seat) {
  const seats = read(KEYS.seats, {});
  seats[gameId] = { ...seat, at: Date.now() };
  // Keep the newest only: finished games need no token forever.
  const ids = Object.keys(seats).sort((a, b) => seats[b].at - seats[a].at);
  for (const id of ids.slice(MAX_SEATS)) delete seats[id];
  write(KEYS.seats, seats);
}

// gameTokens lists the tokens to open a game with, in the order to try
// them: the seat's, then the player's (a seat taken on another device of
// the same player), then none (a spectator).
export function gameTokens(gameId) {
  return [...new Set([getSeat(gameId)?.token, getPlayer()?.token].filter(Boolean)), null];
}

export function forgetSeat(gameId) {
  const seats = read(KEYS.seats, {});
  delete seats[gameId];
  write(KEYS.seats, seats);
}

// recentSeats lists the stored seats, newest first.
export function recentSeats(limit = 10) {
  const seats = read(KEYS.seats, {});
  return Object.entries(seats)
    .map(([gameId, s]) => ({ gameId, ...s }))
    .sort((a, b) => b.at - a.at)
    .slice(0, limit);
}

// rememberSeat stores the seat of a create or join answer and returns its
// game id.
export function rememberSeat(answer) {
  const gameId = answer.gameId ?? answer.game.gameId;
  setSeat(gameId, {
    token: answer.token,
    color: answer.game.you,
    playerId: answer.playerId,
    inviteCode: answer.inviteCode,
  });
  return gameId;
}

// Preferences: {name, sound, lang, lastAi, lastFriend}.
export const getPrefs = () => read(KEYS.prefs, {});
export function setPrefs(patch) {
  write(KEYS.prefs, { ...getPrefs(), ...patch });
}
