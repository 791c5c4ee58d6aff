// Board draws a position and offers the legal moves of the server's view
// (seeds/000 §9). It knows no chess rules: targets, captures and castling
// come from the view's legalMoves (seeds/000 §8.0: "the client highlights
// from the server view's legalMoves only").
//
// Layers, bottom to top: squares (colours, last move, check, selection,
// coordinates), pieces (absolutely placed, moved with a CSS transform so a
// move is a ~150 ms transition), marks (dots, capture rings, castling
// borders, the check bubble; they never take pointer events). Input is read
// on the board element from pointer coordinates, so a tap, a click and a
// drag all end in the same square lookup whatever element is on top.
import { pieceClass, pieceIcon } from './pieces.js';
import { t } from './i18n.js';

export const FILES = 'abcdefgh';
const DRAG_THRESHOLD_PX = 4;
const ANIMATION_MS = 150;

// parsePlacement reads the placement field of a FEN into a Map square →
// piece code ("wk", "bp", ...).
export function parsePlacement(fen) {
  const out = new Map();
  const rows = fen.split(' ')[0].split('/');
  rows.forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (ch >= '1' && ch <= '8') {
        file += Number(ch);
        continue;
      }
      const color = ch === ch.toUpperCase() ? 'w' : 'b';
      out.set(FILES[file] + (8 - i), color + ch.toLowerCase());
      file++;
    }
  });
  return out;
}

export class Board {
  // onMove({from, to, moves}) is called when the user picks a legal target
  // (moves: the legal moves from→to, several for a promotion).
  // onSelect(square, targets) is called when the selection changes.
  constructor({ onMove, onSelect }) {
    this.onMove = onMove;
    this.onSelect = onSelect || (() => {});
    this.orientation = 'white';
    this.position = new Map();
    this.pieceEls = new Map();
    this.legal = new Map(); // from → [legal moves]
    this.mover = null; // colour whose pieces may be picked up
    this.hints = true;
    this.selected = null;
    this.drag = null;

    this.el = document.createElement('div');
    this.el.className = 'board';
    this.squaresLayer = document.createElement('div');
    this.squaresLayer.className = 'squares';
    this.piecesLayer = document.createElement('div');
    this.piecesLayer.className = 'pieces';
    this.marksLayer = document.createElement('div');
    this.marksLayer.className = 'marks';
    this.el.append(this.squaresLayer, this.piecesLayer, this.marksLayer);
    this.squareEls = new Map();
    for (let r = 8; r >= 1; r--) {
      for (const f of FILES) {
        const sq = f + r;
        const el = document.createElement('div');
        el.className = 'sq ' + ((FILES.indexOf(f) + r) % 2 ? 'light' : 'dark');
        el.dataset.sq = sq;
        this.squareEls.set(sq, el);
      }
    }
    this.layoutSquares();

    this.el.addEventListener('pointerdown', (e) => this.pointerDown(e));
    this.el.addEventListener('pointermove', (e) => this.pointerMove(e));
    this.el.addEventListener('pointerup', (e) => this.pointerUp(e));
    this.el.addEventListener('pointercancel', () => this.cancelDrag());
    this.el.addEventListener('contextmenu', (e) => e.preventDefault());
  }

  // xy gives a square's display column and row (0..7 from the top left).
  xy(sq) {
    const f = FILES.indexOf(sq[0]);
    const r = Number(sq[1]) - 1;
    return this.orientation === 'white' ? [f, 7 - r] : [7 - f, r];
  }

  transformOf(sq) {
    const [x, y] = this.xy(sq);
    return `translate(${x * 100}%, ${y * 100}%)`;
  }

  squareAt(clientX, clientY) {
    const rect = this.el.getBoundingClientRect();
    const x = Math.floor(((clientX - rect.left) / rect.width) * 8);
    const y = Math.floor(((clientY - rect.top) / rect.height) * 8);
    if (x < 0 || x > 7 || y < 0 || y > 7) return null;
    return this.orientation === 'white' ? FILES[x] + (8 - y) : FILES[7 - x] + (y + 1);
  }

  layoutSquares() {
    const order = [...this.squareEls.keys()];
    if (this.orientation === 'black') order.reverse();
    this.squaresLayer.replaceChildren();
    order.forEach((sq, i) => {
      const el = this.squareEls.get(sq);
      el.replaceChildren();
      // Coordinates on the edge (seeds/003: a-h and 1-8 around the board).
      if (i % 8 === 0) el.append(Object.assign(document.createElement('span'), { className: 'coord rank', textContent: sq[1] }));
      if (i >= 56) el.append(Object.assign(document.createElement('span'), { className: 'coord file', textContent: sq[0] }));
      this.squaresLayer.append(el);
    });
  }

  setOrientation(color) {
    if (color === this.orientation) return;
    this.orientation = color;
    this.el.dataset.orientation = color;
    this.layoutSquares();
    for (const [sq, el] of this.pieceEls) el.style.transform = this.transformOf(sq);
    this.drawMarks();
  }

  // update shows a position.
  //   fen: the position; lastMove: {from, to} to highlight; check: the
  //   square of a king in check; legalMoves: the moves the viewer may make
  //   now (null: none); mover: their colour; hints: show targets;
  //   animate: [{from, to}] pieces to slide (the king and the rook of a
  //   castling move).
  update({ fen, lastMove = null, check = null, legalMoves = null, mover = null, hints = true, animate = [] }) {
    const next = parsePlacement(fen);
    this.placePieces(next, animate);
    this.position = next;
    for (const el of this.squareEls.values()) el.classList.remove('last', 'check');
    if (lastMove) {
      this.squareEls.get(lastMove.from)?.classList.add('last');
      this.squareEls.get(lastMove.to)?.classList.add('last');
    }
    if (check) this.squareEls.get(check)?.classList.add('check');
    this.checkSquare = check;
    this.setLegal(legalMoves, mover, hints);
  }

  // setLegal changes what the viewer may do without redrawing the pieces.
  setLegal(legalMoves, mover, hints = this.hints) {
    this.legal = new Map();
    for (const m of legalMoves || []) {
      if (!this.legal.has(m.from)) this.legal.set(m.from, []);
      this.legal.get(m.from).push(m);
    }
    this.mover = legalMoves ? mover : null;
    this.hints = hints;
    this.el.classList.toggle('interactive', !!legalMoves);
    // A selection survives only while its piece can still move.
    if (this.selected && !this.canPick(this.selected)) this.select(null);
    else this.drawMarks();
  }

  placePieces(next, animate) {
    const old = new Map(this.pieceEls);
    const placed = new Map();
    for (const { from, to } of animate) {
      const el = old.get(from);
      const code = next.get(to);
      if (!el || !code || el.dataset.piece[0] !== code[0] || placed.has(to)) continue;
      old.delete(from);
      this.setPiece(el, code);
      placed.set(to, el);
      this.slide(el, to);
    }
    for (const [sq, code] of next) {
      if (placed.has(sq)) continue;
      const el = old.get(sq);
      if (el && el.dataset.piece === code) {
        old.delete(sq);
        placed.set(sq, el);
        el.style.transform = this.transformOf(sq);
      }
    }
    for (const [sq, code] of next) {
      if (placed.has(sq)) continue;
      let el = old.get(sq);
      if (el) old.delete(sq);
      else {
        el = document.createElement('div');
        this.piecesLayer.append(el);
      }
      this.setPiece(el, code);
      el.style.transform = this.transformOf(sq);
      placed.set(sq, el);
    }
    for (const el of old.values()) el.remove();
    for (const [sq, el] of placed) el.dataset.sq = sq;
    this.pieceEls = placed;
  }

  setPiece(el, code) {
    if (el.dataset.piece !== code) el.replaceChildren(pieceIcon(code));
    el.className = 'pc ' + pieceClass(code);
    el.dataset.piece = code;
  }

  // slide moves a piece element to sq with the move animation; its current
  // transform is where it starts.
  slide(el, sq) {
    el.classList.add('anim');
    el.style.transform = this.transformOf(sq);
    clearTimeout(el.animTimer);
    el.animTimer = setTimeout(() => el.classList.remove('anim'), ANIMATION_MS + 60);
  }

  // showMove moves a piece at once, before the server has answered (the
  // answer's position then replaces it): a tap slides it, a drop just
  // leaves it where it was dropped.
  showMove(from, to, animate) {
    const el = this.pieceEls.get(from);
    if (!el) return;
    this.pieceEls.get(to)?.remove();
    this.pieceEls.delete(from);
    this.pieceEls.set(to, el);
    el.dataset.sq = to;
    if (animate) this.slide(el, to);
    else el.style.transform = this.transformOf(to);
  }

  canPick(sq) {
    return !!this.mover && this.position.get(sq)?.[0] === this.mover[0];
  }

  // targets maps each target square of the piece on sq to its kind:
  // 'castle', 'capture' or 'move'.
  targets(sq) {
    const out = new Map();
    for (const m of this.legal.get(sq) || []) {
      let kind = 'move';
      if (m.castle) kind = 'castle';
      else if (this.position.has(m.to) || m.san.includes('x')) kind = 'capture';
      if (out.get(m.to) !== 'castle') out.set(m.to, kind);
    }
    return out;
  }

  select(sq) {
    const prev = this.selected;
    if (prev) this.squareEls.get(prev)?.classList.remove('sel');
    this.selected = sq;
    if (sq) this.squareEls.get(sq)?.classList.add('sel');
    this.drawMarks();
    if (prev !== sq) this.onSelect(sq, sq ? this.targets(sq) : new Map());
  }

  drawMarks() {
    this.marksLayer.replaceChildren();
    if (this.selected && this.hints) {
      for (const [sq, kind] of this.targets(this.selected)) {
        const mk = this.mark(sq, 'mk ' + kind);
        if (kind === 'castle') mk.append(Object.assign(document.createElement('span'), { textContent: t('board.castle') }));
      }
    }
    if (this.checkSquare) {
      const bubble = this.mark(this.checkSquare, 'mk bubble');
      bubble.append(Object.assign(document.createElement('span'), { textContent: t('board.check') }));
    }
    if (this.drag?.over) this.mark(this.drag.over, 'mk hover');
  }

  mark(sq, className) {
    const el = document.createElement('div');
    el.className = className;
    el.dataset.sq = sq;
    el.style.transform = this.transformOf(sq);
    this.marksLayer.append(el);
    return el;
  }

  play(from, to, animate) {
    const moves = (this.legal.get(from) || []).filter((m) => m.to === to);
    this.select(null);
    this.onMove({ from, to, moves, animate });
  }

  pointerDown(e) {
    if (e.pointerType === 'mouse' && e.button !== 0) return;
    const sq = this.squareAt(e.clientX, e.clientY);
    if (!sq || !this.mover) return;
    e.preventDefault();
    if (this.selected && sq !== this.selected && this.targets(this.selected).has(sq)) {
      this.play(this.selected, sq, true);
      return;
    }
    if (this.canPick(sq)) {
      const wasSelected = this.selected === sq;
      this.select(sq);
      this.drag = { from: sq, id: e.pointerId, x: e.clientX, y: e.clientY, started: false, wasSelected, over: null };
      try {
        this.el.setPointerCapture(e.pointerId);
      } catch {
        // Synthetic pointers cannot be captured; the drag still works.
      }
      return;
    }
    this.select(null);
  }

  pointerMove(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    if (!d.started) {
      if (Math.hypot(e.clientX - d.x, e.clientY - d.y) < DRAG_THRESHOLD_PX) return;
      d.started = true;
      this.pieceEls.get(d.from)?.classList.add('dragging');
    }
    const el = this.pieceEls.get(d.from);
    if (!el) return;
    const rect = this.el.getBoundingClientRect();
    const size = rect.width / 8;
    el.style.transform = `translate(${e.clientX - rect.left - size / 2}px, ${e.clientY - rect.top - size / 2}px)`;
    const over = this.squareAt(e.clientX, e.clientY);
    if (over !== d.over) {
      d.over = over;
      this.drawMarks();
    }
  }

  pointerUp(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.id) return;
    this.drag = null;
    const el = this.pieceEls.get(d.from);
    el?.classList.remove('dragging');
    if (!d.started) {
      // A tap on the selected piece puts it down again.
      if (d.wasSelected) this.select(null);
      return;
    }
    const to = this.squareAt(e.clientX, e.clientY);
    if (to && to !== d.from && this.targets(d.from).has(to)) {
      this.play(d.from, to, false);
      return;
    }
    // Not a legal target: the piece goes back and nothing is sent.
    if (el) this.slide(el, d.from);
    this.drawMarks();
  }

  cancelDrag() {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    const el = this.pieceEls.get(d.from);
    if (el) {
      el.classList.remove('dragging');
      this.slide(el, d.from);
    }
    this.drawMarks();
  }
}
