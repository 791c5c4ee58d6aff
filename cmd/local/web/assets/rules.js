// "Rules" (seeds/000 §9): a card per piece whose moves light up one after
// another on a small board, and the special rules and draws in plain words.
import { t } from './i18n.js';
import { h, modal } from './ui.js';
import { pieceIcon } from './pieces.js';

const SIZE = 7;
const CENTER = 3;

// Where each piece can go from the centre of a 7×7 board, as [dx, dy]
// with y growing towards the top. The pawn stands lower, on its start rank.
const reach = {
  k: () => around([[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]], 1),
  q: () => around([[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]], 3),
  r: () => around([[1, 0], [0, 1], [-1, 0], [0, -1]], 3),
  b: () => around([[1, 1], [-1, 1], [-1, -1], [1, -1]], 3),
  n: () => [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]],
};

function around(dirs, max) {
  const out = [];
  for (let step = 1; step <= max; step++) for (const [dx, dy] of dirs) out.push([dx * step, dy * step]);
  return out;
}

function pieceCard(letter) {
  const cells = [];
  const targets = new Map();
  let origin = [CENTER, CENTER];
  const captures = new Set();
  if (letter === 'p') {
    origin = [CENTER, 1];
    [[0, 1], [0, 2]].forEach(([dx, dy], i) => targets.set(`${CENTER + dx},${1 + dy}`, i));
    for (const dx of [-1, 1]) {
      targets.set(`${CENTER + dx},2`, 2);
      captures.add(`${CENTER + dx},2`);
    }
  } else {
    reach[letter]().forEach(([dx, dy], i) => targets.set(`${CENTER + dx},${CENTER + dy}`, i));
  }
  for (let y = SIZE - 1; y >= 0; y--) {
    for (let x = 0; x < SIZE; x++) {
      const key = `${x},${y}`;
      const cell = h('div.mini-sq.' + ((x + y) % 2 ? 'light' : 'dark'));
      if (x === origin[0] && y === origin[1]) cell.append(h('span.pc.pc-w' + letter, pieceIcon('w' + letter)));
      else if (captures.has(key)) cell.append(h('span.pc.pc-bp', pieceIcon('bp')), h('span.mini-ring', { style: { animationDelay: targets.get(key) * 90 + 'ms' } }));
      else if (targets.has(key)) cell.append(h('span.mini-dot', { style: { animationDelay: targets.get(key) * 90 + 'ms' } }));
      cells.push(cell);
    }
  }
  return h('div.rule-card', h('div.mini-board', cells), h('h3', t('piece.' + letter)), h('p', t('rules.piece.' + letter)));
}

export function openRules() {
  const body = h('div.rules',
    h('div.rule-cards', ['k', 'q', 'r', 'b', 'n', 'p'].map(pieceCard)),
    ['castling', 'enPassant', 'promotion', 'check', 'draws', 'chess960'].map((k) =>
      h('section.rule-text', h('h3', t('rules.' + k + '.title')), h('p', t('rules.' + k)))));
  modal({ id: 'rules-modal', title: t('rules.title'), body, actions: [{ label: t('common.close') }], className: 'rules-modal' });
}
