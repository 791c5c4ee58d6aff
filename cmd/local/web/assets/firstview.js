// The first view of a game, asked for while the rest of the client is still
// being evaluated. app.js imports this module before any other, so when the
// page opens on a game's link its GET /v1/games/{id} is on the wire tens of
// milliseconds sooner than if the game screen sent it after every module
// had run (docs/web-client.md, "Measurements"). The game screen takes the
// answer, once, when it asks for the same game with the same token;
// anything else gets a fresh request.
import { getGame } from './api.js';
import { parseRoute } from './route.js';
import { gameTokens } from './storage.js';

let pending = null; // { gameId, token, answer }

const { parts } = parseRoute(location.hash);
if (parts[0] === 'g' && parts[1]) {
  const gameId = parts[1];
  const token = gameTokens(gameId)[0]; // the one the game screen tries first
  const answer = getGame(gameId, token);
  answer.catch(() => {}); // a failure is the taker's to handle, not unhandled
  pending = { gameId, token, answer };
}

// takeFirstView returns the early answer for gameId and token, or null when
// there is none for them; either way it is gone after the first call.
export function takeFirstView(gameId, token) {
  const p = pending;
  pending = null;
  return p && p.gameId === gameId && p.token === token ? p.answer : null;
}
