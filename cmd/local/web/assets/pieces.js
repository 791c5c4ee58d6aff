// Piece images: simple SVG drawings made for this client, put once into the
// page as <symbol>s; a piece is an element with a class (cheap to move, drag
// and animate) holding a <use> of its symbol. No image request is made, and
// the drawings are painted as part of the page: as CSS data: images each of
// the twelve was an SVG document of its own for the browser to load and
// rasterise, which cost a phone-sized first paint of the board 100-200 ms
// (docs/web-client.md). A piece code is colour + letter: "wk", "bq", "wp", ...

// Each drawing takes the colours of one side: the body, the outline, and
// the details drawn on top of the body (lines that must stand out on it).
const drawings = {
  p: (c) => `
    <path d="M15.5 35.5c0-5.2 3.4-8.4 4.7-12.5h4.6c1.3 4.1 4.7 7.3 4.7 12.5z" ${c.body}/>
    <rect x="16.5" y="20.2" width="12" height="3.4" rx="1.7" ${c.body}/>
    <circle cx="22.5" cy="14.8" r="5.3" ${c.body}/>
    <rect x="11.5" y="34.2" width="22" height="4.6" rx="1.6" ${c.body}/>`,
  r: (c) => `
    <rect x="9.5" y="34.5" width="26" height="4.5" rx="1.2" ${c.body}/>
    <path d="M12.5 34.5v-3.5h20v3.5z" ${c.body}/>
    <path d="M14.5 31l1.3-14h13.4l1.3 14z" ${c.body}/>
    <path d="M12 17V8.5h4.4v3.2h4v-3.2h4.2v3.2h4v-3.2H33V17z" ${c.body}/>
    <path d="M15.8 20.5h13.4M15.3 27.5h14.4" ${c.detail}/>`,
  n: (c) => `
    <path d="M13 38.5h21c.6-9.2-1-17.6-5.4-22.6-2-2.3-4.5-3.9-7.4-4.6l-1.1-4-2.6 3.1-2.3-1.9-.3 3.6C11 14.5 8.7 18.7 7.6 23.1c-.6 2.4 1.2 4.3 3.4 3.6l3.6-1.8c1.6-.8 3.1-1.8 4.6-3.1.3 3.4-2.3 6.1-4.3 8.9-1.4 2-1.9 4.8-1.9 7.8z" ${c.body}/>
    <circle cx="16" cy="16.3" r="1.3" ${c.fill}/>
    <path d="M10.3 23.4l1.2-.6" ${c.detail}/>`,
  b: (c) => `
    <rect x="10" y="34.5" width="25" height="4.5" rx="2" ${c.body}/>
    <path d="M15.2 31.5c-2.2-6 .2-12.7 7.3-19.2 7.1 6.5 9.5 13.2 7.3 19.2z" ${c.body}/>
    <rect x="14" y="30.5" width="17" height="4.5" rx="1.6" ${c.body}/>
    <circle cx="22.5" cy="9.6" r="2.6" ${c.body}/>
    <path d="M22.5 18.5v8M18.5 22.5h8" ${c.detail}/>`,
  q: (c) => `
    <rect x="10" y="34.5" width="25" height="4.5" rx="2" ${c.body}/>
    <path d="M11 35L7.2 15.5l6.6 10.8 1.4-14.2 5.1 13.7 2.2-15.6 2.2 15.6 5.1-13.7 1.4 14.2 6.6-10.8L34 35z" ${c.body}/>
    <circle cx="7.2" cy="14.2" r="2.3" ${c.body}/>
    <circle cx="15.2" cy="10.6" r="2.3" ${c.body}/>
    <circle cx="22.5" cy="8.4" r="2.3" ${c.body}/>
    <circle cx="29.8" cy="10.6" r="2.3" ${c.body}/>
    <circle cx="37.8" cy="14.2" r="2.3" ${c.body}/>
    <path d="M12 31c6.5-2 14.5-2 21 0" ${c.detail}/>`,
  k: (c) => `
    <rect x="10" y="34.5" width="25" height="4.5" rx="2" ${c.body}/>
    <path d="M11.8 35c-2.7-4.8-5.4-10.6-1.9-14.2 3.4-3.4 8.6-1.6 12.6 3.6 4-5.2 9.2-7 12.6-3.6 3.5 3.6.8 9.4-1.9 14.2z" ${c.body}/>
    <path d="M22.5 24.4c-2.6-4.4-3.2-8.2 0-10.6 3.2 2.4 2.6 6.2 0 10.6z" ${c.body}/>
    <path d="M22.5 5v7.4M19.2 8.4h6.6" ${c.outline}/>
    <path d="M12.3 30.5c6.8-2.2 13.6-2.2 20.4 0" ${c.detail}/>`,
};

const themes = {
  w: { fill: '#fbfbf8', line: '#1f1f1f', detail: '#1f1f1f' },
  b: { fill: '#2a2a2a', line: '#111', detail: '#e9e9e4' },
};

// pieceDrawing is the SVG content of one piece, in a 45×45 view box.
function pieceDrawing(color, letter) {
  const t = themes[color];
  const attrs = {
    body: `fill="${t.fill}" stroke="${t.line}" stroke-width="1.5" stroke-linejoin="round"`,
    detail: `fill="none" stroke="${t.detail}" stroke-width="1.4" stroke-linecap="round"`,
    outline: `fill="none" stroke="${t.line}" stroke-width="2.2" stroke-linecap="round"`,
    fill: `fill="${t.detail}"`,
  };
  return drawings[letter](attrs);
}

export const PIECE_LETTERS = ['k', 'q', 'r', 'b', 'n', 'p'];

const SVG_NS = 'http://www.w3.org/2000/svg';

// installPieces puts the twelve drawings into the page as <symbol>s, once.
export function installPieces(doc = document) {
  const symbols = [];
  for (const color of ['w', 'b']) {
    for (const letter of PIECE_LETTERS) {
      symbols.push(`<symbol id="pc-${color}${letter}" viewBox="0 0 45 45">${pieceDrawing(color, letter)}</symbol>`);
    }
  }
  const holder = doc.createElement('div');
  holder.id = 'piece-symbols';
  holder.hidden = true;
  holder.innerHTML = `<svg xmlns="${SVG_NS}">${symbols.join('')}</svg>`;
  doc.body.prepend(holder);
}

// pieceIcon is the drawing of a piece code ("wk") for an element of class
// "pc pc-wk": an <svg> using its symbol.
export function pieceIcon(code) {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 45 45');
  svg.setAttribute('aria-hidden', 'true');
  const use = document.createElementNS(SVG_NS, 'use');
  use.setAttribute('href', '#pc-' + code);
  svg.append(use);
  return svg;
}

// pieceClass is the class that shows a piece code ("wk").
export const pieceClass = (code) => 'pc-' + code;
