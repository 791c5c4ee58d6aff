// Small DOM helpers shared by the screens: element building, modals and
// toasts. No framework: the screens are small and re-render their parts by
// hand.
import { t } from './i18n.js';

// h builds an element: h('button.primary#go', {onclick}, 'text', child...).
// attrs keys starting with "on" are listeners; "dataset" and "style" take
// objects; null/false children are skipped.
export function h(spec, attrs, ...children) {
  const [, tag = 'div', rest = ''] = spec.match(/^([a-z0-9-]*)(.*)$/i);
  const el = document.createElement(tag || 'div');
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style') Object.assign(el.style, v);
    else if (k === 'class') el.className += ' ' + v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// clear empties an element and fills it with children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// refill fills an element with children unless they would show exactly
// what it shows now (the same markup), in which case the element keeps its
// nodes. The game screen renders on every change the stream brings (a
// presence, the other side's clock): rebuilding a button that did not
// change would replace it under a press, and a press and a release on
// different nodes make no click, so the tap would be lost.
export function refill(el, ...children) {
  const next = document.createElement(el.tagName);
  append(next, children);
  if (next.innerHTML !== el.innerHTML) el.replaceChildren(...next.childNodes);
  return el;
}

// onActivate runs fn on a click that began on el: a press on el, or the
// keyboard (a click with detail 0). A dialog opened by a tap on the board
// must not take that tap's own trailing click for a choice or a dismissal.
export function onActivate(el, fn) {
  let pressed = false;
  el.addEventListener('pointerdown', () => {
    pressed = true;
  });
  el.addEventListener('click', (e) => {
    if (!pressed && e.detail !== 0) return;
    pressed = false;
    fn(e);
  });
  return el;
}

let modalLayer;
const openModals = new Set(); // their close functions

// modal shows a dialog. actions: [{label, primary, danger, id, onClick}];
// an action's onClick may return false to keep the dialog open. Returns
// close(). dismissible: a tap outside or Escape closes it (onDismiss runs).
export function modal({ id, title, body, actions = [], dismissible = true, onDismiss, className }) {
  if (!modalLayer) {
    modalLayer = h('div.modal-layer');
    document.body.append(modalLayer);
  }
  const backdrop = h('div.backdrop');
  const box = h('div.modal', { id, role: 'dialog', 'aria-modal': 'true', class: className });
  if (title) box.append(h('h2.modal-title', title));
  if (body) box.append(body instanceof Node ? body : h('p', body));
  const row = h('div.modal-actions');
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    openModals.delete(close);
    backdrop.remove();
    box.remove();
    document.removeEventListener('keydown', onKey);
  };
  openModals.add(close);
  const onKey = (e) => {
    if (e.key === 'Escape' && dismissible) {
      close();
      onDismiss?.();
    }
  };
  for (const a of actions) {
    const button = h('button', {
      id: a.id,
      class: [a.primary && 'primary', a.danger && 'danger'].filter(Boolean).join(' ') || null,
    }, a.label);
    onActivate(button, async () => {
      if ((await a.onClick?.()) !== false) close();
    });
    row.append(button);
  }
  if (actions.length) box.append(row);
  if (dismissible) {
    onActivate(backdrop, () => {
      close();
      onDismiss?.();
    });
  }
  document.addEventListener('keydown', onKey);
  modalLayer.append(backdrop, box);
  box.querySelector('button.primary, button')?.focus({ preventScroll: true });
  return close;
}

// confirmDialog asks a yes/no question; resolves true for yes.
export function confirmDialog({ id, title, body, yes, no = t('common.cancel'), danger }) {
  return new Promise((resolve) => {
    modal({
      id, title, body,
      onDismiss: () => resolve(false),
      actions: [
        { label: no, onClick: () => resolve(false) },
        { label: yes, primary: !danger, danger, id: id && id + '-yes', onClick: () => resolve(true) },
      ],
    });
  });
}

let toastEl;
let toastTimer;

// toast shows a short message at the bottom for a few seconds.
export function toast(message, kind = 'info') {
  if (!toastEl) {
    toastEl = h('div#toast', { role: 'status', 'aria-live': 'polite' });
    document.body.append(toastEl);
  }
  toastEl.textContent = message;
  toastEl.dataset.kind = kind;
  toastEl.classList.add('shown');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => toastEl.classList.remove('shown'), kind === 'error' ? 4500 : 2800);
}

// copyText copies to the clipboard, falling back to a selected input where
// the Clipboard API is unavailable (plain http on a LAN address).
export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (input) {
      input.select();
      return document.execCommand?.('copy') ?? false;
    }
    return false;
  }
}

// randomId returns a random URL-safe id (request ids); crypto.randomUUID
// needs a secure context, getRandomValues does not.
export function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_');
}

// openRules shows the rules; their module (mini boards, texts) loads on
// the first use, off the first load's path.
export async function openRules() {
  (await import('./rules.js')).openRules();
}

// markAfterPaint records a performance mark (and a body data attribute)
// once the frame showing the current DOM has been painted: the moment a
// screen can really take a tap. docs/web-client.md reports these marks.
export function markAfterPaint(name, attribute) {
  requestAnimationFrame(() => setTimeout(() => {
    performance.mark(name);
    document.body.dataset[attribute] = 'ready';
  }));
}

// closeAllModals closes every open dialog (a change of screen).
export function closeAllModals() {
  for (const close of [...openModals]) close();
}
