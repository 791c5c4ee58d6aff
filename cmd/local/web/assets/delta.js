// Deltas (SPEC §16.1): a change carries what its version changed in the
// viewer's view — each changed top-level field with its new value, the new
// move ("move", appended) or, after a take-back, the move list's new length
// ("movesLength") — never the move list itself. Applying it to the view of
// the version before gives the view of the version, exactly as
// GET /v1/games/{id} answers it. Fields that did not change keep their
// objects, so the screen can tell (the clock's reading, for one).

export function applyDelta(view, delta) {
  const next = { ...view };
  let moves = view.moves;
  for (const [key, value] of Object.entries(delta)) {
    if (key === 'movesLength') moves = moves.slice(0, value);
    else if (key !== 'move') next[key] = value;
  }
  if (delta.move) moves = [...moves, delta.move];
  next.moves = moves;
  return next;
}
