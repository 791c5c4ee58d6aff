// parseRoute reads the location's hash, the client's only router state
// ("#/", "#/g/{gameId}[?invite=code]", "#/lobby[/room]"): the path's parts
// (decoded) and the query's parameters.
export function parseRoute(hash) {
  const [path, query] = (hash.replace(/^#/, '') || '/').split('?');
  return {
    parts: path.split('/').filter(Boolean).map(safeDecode),
    params: new URLSearchParams(query || ''),
  };
}

// A malformed %-escape in a hand-typed link is kept as typed rather than
// throwing (the screen then says the game was not found).
function safeDecode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
