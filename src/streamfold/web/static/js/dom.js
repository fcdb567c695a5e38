
export const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------
// DOM building. Text is always a text node; attributes come from a fixed list
// (none of them can carry a URL), so stream data cannot become markup or a link.

const ALLOWED_ATTRIBUTES = new Set([
  'type', 'role', 'tabindex', 'aria-label', 'aria-hidden', 'aria-expanded', 'aria-pressed', 'aria-selected',
  'disabled', 'hidden', 'for', 'colspan', 'open',
]);

export function h(tag, props, ...children) {
  const node = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'title') node.title = String(value);
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (ALLOWED_ATTRIBUTES.has(key)) node.setAttribute(key, value === true ? '' : String(value));
      else throw new Error(`h(): attribute ${key} is not allowed`);
    }
  }
  appendChildren(node, children);
  return node;
}

function appendChildren(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node) { node.replaceChildren(); }

// Long text as many text nodes: Chrome lays out one huge text node in super-linear
// time (seconds for a 500k-character reply), many short ones in linear time.
const TEXT_CHUNK = 2048;
export function appendText(node, text) {
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + TEXT_CHUNK);
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end--; // keep surrogate pairs whole
    const chunk = text.slice(start, end);
    if (MARKED.test(chunk)) node.append(...streamNodes(chunk));
    else node.append(document.createTextNode(chunk));
    start = end;
  }
  return node;
}

// Characters a stream could hide or reorder text with (bidi controls, zero-width and other format
// characters) and C0 controls: each becomes a visible badge naming it, its code point in the title.
// The character itself stays in the text (copying keeps it; character positions do not move), inside
// an isolating span, so an override cannot reorder what follows it.
const MARKED_CHARACTERS = {
  0x061c: 'ALM ARABIC LETTER MARK', 0x200b: 'ZWSP ZERO WIDTH SPACE', 0x200c: 'ZWNJ ZERO WIDTH NON-JOINER',
  0x200d: 'ZWJ ZERO WIDTH JOINER', 0x200e: 'LRM LEFT-TO-RIGHT MARK', 0x200f: 'RLM RIGHT-TO-LEFT MARK',
  0x202a: 'LRE LEFT-TO-RIGHT EMBEDDING', 0x202b: 'RLE RIGHT-TO-LEFT EMBEDDING', 0x202c: 'PDF POP DIRECTIONAL FORMATTING',
  0x202d: 'LRO LEFT-TO-RIGHT OVERRIDE', 0x202e: 'RLO RIGHT-TO-LEFT OVERRIDE', 0x2060: 'WJ WORD JOINER',
  0x2066: 'LRI LEFT-TO-RIGHT ISOLATE', 0x2067: 'RLI RIGHT-TO-LEFT ISOLATE', 0x2068: 'FSI FIRST STRONG ISOLATE',
  0x2069: 'PDI POP DIRECTIONAL ISOLATE', 0xfeff: 'BOM ZERO WIDTH NO-BREAK SPACE (byte order mark)',
};
const C0_NAMES = ['NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'BEL', 'BS', 'HT', 'LF', 'VT', 'FF', 'CR', 'SO', 'SI',
  'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US'];
// A ZWJ inside an emoji sequence (next to an astral character) joins it: left alone. The controls and lone
// surrogates in it are the point: what it finds is what the page marks.
// eslint-disable-next-line no-control-regex, no-misleading-character-class
export const MARKED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]|(?<![\udc00-\udfff\ufe0f])\u200d|\u200d(?![\ud800-\udbff])/;
// eslint-disable-next-line no-misleading-character-class
export const MARKED_ALL = new RegExp(`(${MARKED.source})`, 'g');

function markedName(code) {
  return MARKED_CHARACTERS[code] || (code === 0x7f ? 'DEL DELETE' : `${C0_NAMES[code]} control character`);
}

function markedCharacter(character) {
  const code = character.charCodeAt(0);
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  const name = markedName(code);
  // A C0 control or DEL would be drawn as a missing-glyph box: only its badge shows (class c0).
  const cls = code < 0x20 || code === 0x7f ? 'cc c0' : 'cc';
  return h('span', { class: cls, title: `U+${hex} ${name}`, dataset: { label: name.split(' ')[0] } }, character);
}

// Stream text as nodes: plain text, with the characters above as badges.
export function streamNodes(text) {
  if (!MARKED.test(text)) return [text];
  return text.split(MARKED_ALL).map((part, i) => (i % 2 ? markedCharacter(part) : part)).filter((part) => part !== '');
}

// Stream text for a tooltip, which shows no badge: each marked character named in brackets, [RLO].
export function tooltipText(text) {
  return text.replace(MARKED_ALL, (character) => `[${markedName(character.charCodeAt(0)).split(' ')[0]}]`);
}

// replaceChildren, skipping null/false children (the DOM's own would print them as "null").
export function setChildren(node, ...children) {
  node.replaceChildren();
  appendChildren(node, children);
}
