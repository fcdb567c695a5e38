/*
 * streamfold web page: the pipeline a person debugs, left to right.
 *
 *   raw bytes → events (frames) → JSON per frame → merged result
 *
 * All computation happens in the Python core, behind the local server
 * (POST /api/fold, POST /api/diff, and for a capture store GET /api/captures);
 * this file only shows what it returns.
 *
 * Safety: every string that came from a stream reaches the DOM as text
 * (text nodes, textContent), never as markup: this file never parses HTML
 * from a string (tests/fronts/test_web.py checks), and no link or URL is ever built
 * from stream data. The server's Content-Security-Policy (no inline script,
 * no other origin) stands behind that.
 *
 * Speed: a 100k-frame capture must stay usable, so the raw bytes and the
 * event list are virtualised (only visible rows exist in the DOM), frame
 * payloads arrive as JSON text parsed only when a frame is shown, and the
 * result text is one text node per field, highlighted with CSS Custom
 * Highlights instead of one element per run.
 */
'use strict';

(function () {

// Browsers cap an element's height (16-33 million px); taller lists scale their scrolling.
const MAX_SCROLL_HEIGHT = 8000000;
const RAW_ROW_HEIGHT = 18;
const EVENT_ROW_HEIGHT = 26;
const SEVERITY_LEVEL = { error: 3, warning: 2, info: 1 };
// ↵ is in the default fonts; the Control Pictures (␍, ␡, ␀…) are not, so a CR is a small "CR" badge.
const LINE_END_GLYPH = { '\n': '↵', '\r': 'CR', '\r\n': 'CR↵', '': '' };
// A JSON tree opens this deep by default; larger containers start folded.
const TREE_OPEN_DEPTH = 7;
const TREE_OPEN_MAX_CHILDREN = 60;
const TREE_CHILD_PAGE = 200;
const TREE_STRING_PREVIEW = 2000;

const timings = {};
window.streamfold = Object.freeze({ timings });

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------
// DOM building. Text is always a text node; attributes come from a fixed list
// (none of them can carry a URL), so stream data cannot become markup or a link.

const ALLOWED_ATTRIBUTES = new Set([
  'type', 'role', 'tabindex', 'aria-label', 'aria-hidden', 'aria-expanded', 'aria-pressed', 'aria-selected',
  'disabled', 'hidden', 'for', 'colspan', 'open',
]);

function h(tag, props, ...children) {
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

function clear(node) { node.replaceChildren(); }

// Long text as many text nodes: Chrome lays out one huge text node in super-linear
// time (seconds for a 500k-character reply), many short ones in linear time.
const TEXT_CHUNK = 2048;
function appendText(node, text) {
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
// A ZWJ inside an emoji sequence (next to an astral character) joins it: left alone.
const MARKED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]|(?<![\udc00-\udfff\ufe0f])\u200d|\u200d(?![\ud800-\udbff])/;
const MARKED_ALL = new RegExp(`(${MARKED.source})`, 'g');

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
function streamNodes(text) {
  if (!MARKED.test(text)) return [text];
  return text.split(MARKED_ALL).map((part, i) => (i % 2 ? markedCharacter(part) : part)).filter((part) => part !== '');
}

// Stream text for a tooltip, which shows no badge: each marked character named in brackets, [RLO].
function tooltipText(text) {
  return text.replace(MARKED_ALL, (character) => `[${markedName(character.charCodeAt(0)).split(' ')[0]}]`);
}

// replaceChildren, skipping null/false children (the DOM's own would print them as "null").
function setChildren(node, ...children) {
  node.replaceChildren();
  appendChildren(node, children);
}

// ---------------------------------------------------------------------------
// Formatting

function formatBytes(size) {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = size / 1024, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

const numberFormat = new Intl.NumberFormat('en');
const formatCount = (n) => numberFormat.format(n);
const plural = (n, word) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

// A binary transport (AWS event-stream) has no lines: its frames are messages placed by byte.
const BINARY_TRANSPORTS = new Set(['aws-eventstream']);
const isBinary = (transport) => BINARY_TRANSPORTS.has(transport);

// Where a finding or a frame is, as the CLI says it: "frame 3 · line 12", or "message 3 · byte 668".
function place(frame, offset, line, transport) {
  if (isBinary(transport)) {
    return offset === null || offset === undefined ? `message ${frame}` : `message ${frame} · byte ${formatCount(offset)}`;
  }
  return line ? `frame ${frame} · line ${line}` : `frame ${frame}`;
}

function debounce(fn, ms) {
  let timer = 0;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

function fieldLabel(field) {
  if (field.startsWith('tool:')) return `tool call ${field.slice(5)} arguments`;
  return { content: 'reply', reasoning: 'reasoning', refusal: 'refusal' }[field] || field;
}

// ---------------------------------------------------------------------------
// State

const state = {
  meta: null,
  capture: null,      // {body: Uint8Array, name, size}
  view: null,         // the /api/fold response
  frames: [],
  result: null,
  problems: new Int8Array(0),   // per frame: 0 fine, 1 info, 2 warning, 3 error
  findingsByFrame: new Map(),
  provenance: [],     // {choice, field, text, runs: Int32Array of start,end,frame triples, monotonic, element}
  selected: -1,
  hovered: -1,
  foldToken: 0,
  entry: null,        // the HAR entry picked (its index, as text), or null: the one the server picks
};

// ---------------------------------------------------------------------------
// Virtual list: a scroller holding a spacer as tall as every row; only the
// rows in view exist, recycled from a small pool as the list scrolls.

class VirtualList {
  constructor(scroller, rowHeight, renderRow, rendered = null) {
    this.scroller = scroller;
    this.rowHeight = rowHeight;
    this.renderRow = renderRow;
    this.rendered = rendered;
    this.count = 0;
    this.first = 0;
    this.pool = [];
    this.spacer = h('div', { class: 'vl-spacer' });
    this.layer = h('div', { class: 'vl-layer' });
    this.spacer.append(this.layer);
    scroller.replaceChildren(this.spacer);
    this.pending = false;
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(scroller);
  }

  setCount(count) {
    this.count = count;
    this.totalHeight = count * this.rowHeight;
    this.spacerHeight = Math.min(this.totalHeight, MAX_SCROLL_HEIGHT);
    this.spacer.style.height = `${this.spacerHeight}px`;
    this.render();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }

  // Where the view's top is in the list's full height (differs from scrollTop only when scaled).
  virtualTop() {
    const view = this.scroller.clientHeight;
    const scrollTop = this.scroller.scrollTop;
    if (this.totalHeight <= this.spacerHeight) return scrollTop;
    const scrollRange = this.spacerHeight - view;
    return scrollRange > 0 ? scrollTop / scrollRange * (this.totalHeight - view) : 0;
  }

  render() {
    const view = this.scroller.clientHeight;
    const virtualTop = this.virtualTop();
    const first = Math.max(0, Math.min(Math.floor(virtualTop / this.rowHeight), this.count - 1));
    const visible = Math.ceil(view / this.rowHeight) + 2;
    const last = Math.min(this.count, first + visible);
    const layerTop = Math.max(0, Math.min(this.scroller.scrollTop - (virtualTop - first * this.rowHeight),
      this.spacerHeight - (last - first) * this.rowHeight));
    this.layer.style.transform = `translateY(${layerTop}px)`;
    while (this.pool.length < last - first) {
      const row = h('div', { class: 'vl-row' });
      this.pool.push(row);
      this.layer.append(row);
    }
    for (let i = 0; i < this.pool.length; i++) {
      const row = this.pool[i];
      if (first + i < last) {
        row.hidden = false;
        this.renderRow(first + i, row);
      } else {
        row.hidden = true;
        row.removeAttribute('id'); // a row drawn again may take its id
      }
    }
    this.first = first;
    if (this.rendered) this.rendered();
  }

  // Bring a row into view; `where`: 'nearest' (only if hidden) or 'upper' (a quarter down the view).
  scrollToRow(index, where = 'nearest') {
    const view = this.scroller.clientHeight;
    const top = index * this.rowHeight;
    const current = this.virtualTop();
    if (where === 'nearest' && top >= current && top + this.rowHeight <= current + view) { this.render(); return; }
    let target = where === 'nearest' && top > current ? top + this.rowHeight - view : top;
    if (where === 'upper') target = top - Math.floor(view / 4);
    target = Math.max(0, Math.min(target, this.totalHeight - view));
    if (this.totalHeight <= this.spacerHeight) this.scroller.scrollTop = target;
    else this.scroller.scrollTop = target / (this.totalHeight - view) * (this.spacerHeight - view);
    this.render();
  }

  isRowVisible(index) {
    const top = index * this.rowHeight;
    const current = this.virtualTop();
    return top >= current && top + this.rowHeight <= current + this.scroller.clientHeight;
  }
}

// ---------------------------------------------------------------------------
// Stage 1: raw bytes. Each frame is a block of display rows: the bytes before
// it that belong to no frame (extra blank lines, a JSON array's commas), then
// its own lines, each wrapped at the column width. Line ends are shown as
// glyphs (↵ LF, ␍ CR, ␍↵ CRLF), so a lost blank line or a stray CR is visible.

function splitLines(text) {
  const lines = [];
  let start = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || code === 13) {
      let end = '\n';
      const contentEnd = i;
      if (code === 13) {
        end = '\r';
        if (text.charCodeAt(i + 1) === 10) { end = '\r\n'; i++; }
      }
      lines.push({ content: text.slice(start, contentEnd), end });
      start = i + 1;
    }
  }
  if (start < length) lines.push({ content: text.slice(start), end: '' });
  return lines;
}

// The rows `splitLines(text)` would wrap into, without building the lines (runs once per frame on load).
function countRows(text, cols) {
  let rows = 0, start = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || code === 13) {
      const contentEnd = i;
      let glyph = 1;
      if (code === 13) glyph++; // the "CR" badge is two columns
      if (code === 13 && text.charCodeAt(i + 1) === 10) { i++; glyph++; }
      rows += wrapLine(text, start, contentEnd, glyph, cols, null);
      start = i + 1;
    }
  }
  if (start < length) rows += wrapLine(text, start, length, 0, cols, null);
  return rows;
}

// A row of the raw pane may end after a space, a tab or punctuation that separates JSON or URL tokens,
// so a number or a word is never cut in two unless it is longer than a whole row.
const BREAK_AFTER = new Set([' ', '\t', '⇥', ',', ':', ';', '{', '}', '[', ']', '(', ')', '/', '=', '&', '?', '|']
  .map((character) => character.charCodeAt(0)));

// The rows of one line, `text` from `from` to `to` then a line-end glyph of `glyph` columns, at `cols`
// columns a row: their count, and each row's start (from `from`) pushed onto `starts` when given.
// countRows and RawView.lines both wrap with it, so the rows counted are the rows drawn.
function wrapLine(text, from, to, glyph, cols, starts) {
  const end = to + glyph;
  let at = from, rows = 0;
  for (;;) {
    if (starts) starts.push(at - from);
    rows++;
    if (end - at <= cols) return rows;
    let limit = at + cols;
    if (limit > to) { at = to; continue; } // the glyph is never cut: it starts the next row
    const code = text.charCodeAt(limit);
    if (code >= 0xdc00 && code <= 0xdfff) limit--; // nor a surrogate pair (it would draw as two broken halves)
    let next = limit;
    while (next > at && !BREAK_AFTER.has(text.charCodeAt(next - 1))) next--;
    at = next > at ? next : limit;
  }
}

// A tab would break the fixed-width grid: shown as ⇥ (other controls become badges in styledText;
// the Unicode Control Pictures are not in the default fonts).
function visibleControls(text) {
  return text.includes('\t') ? text.replace(/\t/g, '⇥') : text;
}

// What the raw pane shows: the file itself, or the stream body read out of it (a HAR's entry, the
// response part of curl's output, a log's data lines), which is not the file's own bytes.
const SOURCE_LABEL = { har: 'the HAR entry', cassette: 'the cassette interaction', 'trace-log': 'the trace log record',
  'curl-verbose': "curl's output", 'curl-trace': "curl's trace",
  log: 'the log', raw: null };
// The size of what was opened (a 4.8 KB log whose lines held no stream data is not "0 B"), and
// the stream body read out of it when that differs.
function inputSize(capture) {
  const size = capture.input_size ?? capture.size;
  const title = size === capture.size ? null : `${formatBytes(capture.size)} of stream body read out of it`;
  return h('span', { class: 'muted', text: formatBytes(size), title });
}

function rawSubtitle(capture, binary, pasted) {
  const source = capture.source || 'raw';
  if (source === 'store') return { text: binary ? 'as recorded, binary, shown as UTF-8 text' : 'as recorded, read by read' };
  const from = source in SOURCE_LABEL ? SOURCE_LABEL[source] : `the ${source} input`;
  if (from === null) return { text: binary ? 'binary, shown as UTF-8 text' : pasted ? 'as pasted' : 'the file as it is' };
  const whole = pasted ? 'the pasted text' : 'the file';
  return { text: `the stream body extracted from ${from}, not ${whole}'s own bytes`,
    title: `${formatBytes(capture.size)} of stream body, read out of ${formatBytes(capture.input_size)} of ${whole}` };
}

class RawView {
  constructor(scroller) {
    this.scroller = scroller;
    this.list = new VirtualList(scroller, RAW_ROW_HEIGHT, (row, el) => this.renderRow(row, el));
    this.cols = 0;
    this.blockCount = 0;
    this.rowStart = new Int32Array(1);
    this.cache = new Map();
    this.sse = true;
    this.measure = h('span', { class: 'raw-measure', 'aria-hidden': true }, 'M'.repeat(100));
    scroller.append(this.measure);
    this.source = 'file';   // a log's or curl output's own lines, or the stream body read out of them
    for (const button of document.querySelectorAll('#raw-source button')) {
      button.addEventListener('click', () => this.setSource(button.dataset.source));
    }
    new ResizeObserver(debounce(() => this.reflow(false), 80)).observe(scroller);
    scroller.addEventListener('click', (event) => {
      const row = event.target.closest('.vl-row');
      if (row && row.dataset.frame !== undefined && Number(row.dataset.frame) < state.frames.length) {
        select(Number(row.dataset.frame), 'raw');
      }
    });
  }

  setData() {
    this.loading = false;
    this.cache.clear();
    if (this.shown !== state.view) { this.shown = state.view; this.source = 'file'; }
    this.file = fileBlocks(this.file);
    this.fileMode = Boolean(this.file) && this.source === 'file';
    for (const button of document.querySelectorAll('#raw-source button')) {
      button.setAttribute('aria-pressed', String((button.dataset.source === 'file') === this.fileMode));
    }
    this.sse = state.result.transport === 'sse' && !this.fileMode;
    // A binary framing has no lines: its bytes are shown as text, without line numbers.
    this.binary = isBinary(state.result.transport);
    this.scroller.classList.toggle('sse', this.sse);
    const pastedText = state.capture && state.capture.name === 'pasted text';
    const subtitle = this.fileMode ? fileSubtitle(state.view, pastedText)
      : rawSubtitle(state.view.capture, this.binary, pastedText);
    $('raw-sub').textContent = subtitle.text;
    $('raw-sub').title = subtitle.title || '';
    $('raw-sub').classList.toggle('extracted', Boolean(subtitle.title) && !this.fileMode);
    const frames = state.frames;
    this.blockCount = frames.length + ((this.fileMode ? this.file.trailing : state.view.trailing) ? 1 : 0);
    const lastLine = this.fileMode ? this.file.lineCount : frames.length ? frames[frames.length - 1].line + 2 : 1;
    this.scroller.style.setProperty('--frame-digits', String(Math.max(2, String(frames.length).length)));
    this.scroller.style.setProperty('--line-digits', String(Math.max(2, String(lastLine).length + 1)));
    this.cols = 0;
    this.reflow(true);
  }

  // Until every frame's row has come (frames by range): no rows, a line that says so.
  setLoading() {
    this.loading = true;
    this.cache.clear();
    this.blockCount = 0;
    this.rowStart = new Int32Array(1);
    this.list.setCount(0);
    $('raw-sub').textContent = 'loading frames…';
  }

  columns() {
    const charWidth = this.measure.getBoundingClientRect().width / 100 || 7.2;
    const gutter = this.scroller.querySelector('.vl-row .gutter');
    const styles = getComputedStyle(this.scroller);
    const frameDigits = Number(styles.getPropertyValue('--frame-digits')) || 2;
    const lineDigits = Number(styles.getPropertyValue('--line-digits')) || 3;
    // Without a row yet, the gutter's CSS width: its two columns, gap, padding and border.
    const gutterWidth = gutter ? gutter.getBoundingClientRect().width : (frameDigits + lineDigits + 1) * charWidth + 21;
    const available = this.scroller.clientWidth - gutterWidth - 8 - 12; // its margin, and slack
    // One column of slack: a surrogate pair is never split, so a row may hold one more code unit.
    return Math.max(16, Math.floor(available / charWidth) - 1);
  }

  reflow(force) {
    if (!state.view) return;
    const cols = this.columns();
    if (!force && cols === this.cols) return;
    const anchor = state.selected >= 0 && !force ? state.selected : -1;
    this.cols = cols;
    this.cache.clear();
    const starts = new Int32Array(this.blockCount + 1);
    let rows = 0;
    for (let block = 0; block < this.blockCount; block++) {
      starts[block] = rows;
      const { gap, raw } = this.blockText(block);
      rows += (gap ? countRows(gap, cols) : 0) + countRows(raw, cols);
    }
    starts[this.blockCount] = rows;
    this.rowStart = starts;
    this.list.setCount(rows);
    // The first layout had no row to measure the gutter on: measure again now that one exists.
    if (this.columns() !== cols && !this.remeasured) {
      this.remeasured = true;
      this.reflow(true);
      this.remeasured = false;
      return;
    }
    if (anchor >= 0) this.scrollToFrame(anchor);
  }

  blockText(block) {
    if (this.fileMode) return this.file.blocks[block] || { gap: this.file.trailing, raw: '' };
    const frame = state.frames[block];
    if (frame) return { gap: frame.gap || '', raw: frame.raw };
    return { gap: state.view.trailing, raw: '' };
  }

  blockAt(row) {
    let low = 0, high = this.blockCount - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.rowStart[middle] <= row) low = middle; else high = middle - 1;
    }
    return low;
  }

  // The display lines of a block, with their line numbers and first rows (cached: only blocks in view).
  lines(block) {
    let lines = this.cache.get(block);
    if (lines) return lines;
    const { gap, raw } = this.blockText(block);
    const frame = state.frames[block];
    const gapLines = gap ? splitLines(gap) : [];
    const ownLines = splitLines(raw);
    // A frame's first line number is known; the gap's lines are counted back from it.
    let firstLine;
    if (this.fileMode) {
      firstLine = this.file.lines[block];
    } else if (frame) {
      const gapBreaks = gapLines.filter((line) => line.end).length;
      firstLine = frame.line - gapBreaks;
    } else {
      const previous = state.frames[block - 1];
      firstLine = previous ? previous.line + splitLines(previous.raw).filter((line) => line.end).length : 1;
    }
    const previousText = block > 0 ? this.blockText(block - 1).raw : '';
    // A line number is shown only where a line starts (a JSON array's frames can share a line).
    let startsLine = block === 0 || /[\r\n]$/.test(previousText);
    let lineNumber = firstLine;
    let row = 0;
    lines = [];
    for (const [piece, gapPiece] of [...gapLines.map((l) => [l, true]), ...ownLines.map((l) => [l, false])]) {
      const text = visibleControls(piece.content);
      const glyph = LINE_END_GLYPH[piece.end];
      const starts = [];
      const rows = wrapLine(text, 0, text.length, glyph.length, this.cols, starts);
      lines.push({ text, glyph, gap: gapPiece, number: startsLine && !this.binary ? lineNumber : null, firstRow: row, rows,
        starts, ranges: this.styleRanges(text, glyph, gapPiece) });
      row += rows;
      if (piece.end) { lineNumber++; startsLine = true; } else { startsLine = false; }
    }
    if (this.cache.size > 400) this.cache.clear();
    this.cache.set(block, lines);
    return lines;
  }

  // [start, end, class] spans of a line: SSE field names, values, comments, [DONE], the line end.
  styleRanges(text, glyph, gap) {
    const length = text.length;
    const ranges = [];
    if (gap) ranges.push([0, length, 'gap']);
    else if (!this.sse) ranges.push([0, length, 'value']);
    else if (length === 0) { /* a blank line: only its line end */ }
    else if (text[0] === ':') ranges.push([0, length, 'comment']);
    else {
      const colon = text.indexOf(':');
      if (colon < 0) ranges.push([0, length, 'field']);
      else {
        let valueStart = colon + 1;
        if (text[valueStart] === ' ') valueStart++;
        const name = text.slice(0, colon);
        const value = text.slice(valueStart);
        ranges.push([0, colon, name === 'data' ? 'field data' : name === 'event' ? 'field event' : 'field']);
        ranges.push([colon, valueStart, 'colon']);
        ranges.push([valueStart, length, value === '[DONE]' ? 'done' : 'value']);
      }
    }
    if (glyph) ranges.push([length, length + glyph.length, 'eol']);
    return ranges;
  }

  renderRow(row, el) {
    const block = this.blockAt(row);
    const lines = this.lines(block);
    const local = row - this.rowStart[block];
    let low = 0, high = lines.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lines[middle].firstRow <= local) low = middle; else high = middle - 1;
    }
    const line = lines[low];
    const segment = local - line.firstRow;
    const full = line.text + line.glyph;
    const start = line.starts[segment];
    const end = segment + 1 < line.rows ? line.starts[segment + 1] : full.length;
    const isFrame = block < state.frames.length;
    const firstOwnRow = isFrame && !line.gap && segment === 0 && (low === 0 || lines[low - 1].gap);
    const classes = ['vl-row', 'raw-row'];
    if (line.gap) classes.push('gap');
    if (segment > 0) classes.push('cont');
    if (firstOwnRow) classes.push('first');
    if (line.text.length === 0 && segment === 0 && line.number !== null) classes.push('blank');
    if (isFrame) {
      const frame = state.frames[block];
      classes.push(`k-${frame.kind}`);
      const level = state.problems[block];
      if (level >= 2 && !line.gap) classes.push(level === 3 ? 'p-error' : 'p-warning');
      if (block === state.selected && !line.gap) classes.push('selected');
      if (block === state.hovered && !line.gap) classes.push('hovered');
    }
    el.className = classes.join(' ');
    if (isFrame) el.dataset.frame = String(block); else delete el.dataset.frame;
    const content = h('span', { class: 'content' });
    for (const [from, to, cls] of line.ranges) {
      const a = Math.max(from, start), b = Math.min(to, end);
      if (a < b) content.append(styledText(full.slice(a, b), cls));
    }
    setChildren(el,
      h('span', { class: 'gutter' },
        h('span', { class: 'g-frame', text: firstOwnRow ? String(block) : '' }),
        h('span', { class: 'g-line', text: segment === 0 && line.number !== null ? String(line.number) : '' })),
      content);
  }

  firstRowOf(frameIndex) {
    const lines = this.lines(frameIndex);
    const own = lines.find((line) => !line.gap);
    return this.rowStart[frameIndex] + (own ? own.firstRow : 0);
  }

  scrollToFrame(frameIndex, force) {
    if (this.loading || frameIndex < 0 || frameIndex >= state.frames.length) return;
    const row = this.firstRowOf(frameIndex);
    const lastRow = this.rowStart[frameIndex + 1] - 1;
    if (!force && this.list.isRowVisible(row) && this.list.isRowVisible(Math.min(lastRow, row + 3))) {
      this.list.render();
      return;
    }
    this.list.scrollToRow(row, 'upper');
  }

  refresh() { this.list.render(); }

  // "stream body" or "file": what the pane shows of a log or curl output.
  setSource(source) {
    this.source = source;
    if (this.loading || !state.view) return;
    this.setData();
    if (state.selected >= 0) this.scrollToFrame(state.selected, true);
  }
}

// The raw pane's "file" mode: the input's own bytes cut into blocks at the frames' file spans (the
// lines before a frame that made no frame, a skipped log line or curl's headers, are its gap), with
// the file's line number where each block starts. null when the view has no file (or it was too big:
// the switch then says why). `last`: the blocks made before, kept while the view is the same.
function fileBlocks(last) {
  const file = state.view.file, frames = state.frames;
  const toggle = $('raw-source'), fileButton = toggle.querySelector('[data-source="file"]');
  toggle.hidden = !file;
  if (!file) return null;
  const usable = Boolean(file.base64) && frames.every((frame) => Array.isArray(frame.file_span));
  fileButton.disabled = !usable;
  fileButton.title = usable ? "The file's own lines, the selected frame's marked"
    : file.omitted || 'where each frame is in the file is not known';
  if (!usable) return null;
  if (last && last.view === state.view) return last;
  const binary = atob(file.base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  // Cut only at line breaks, so each slice decodes as it would whole; a BOM stays (its badge shows).
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const text = (from, to) => (from < to ? decoder.decode(bytes.subarray(from, to)) : '');
  const blocks = new Array(frames.length), lines = new Int32Array(frames.length + 1);
  let at = 0, line = 1;
  for (let i = 0; i < frames.length; i++) {
    const start = Math.max(at, Math.min(frames[i].file_span[0], bytes.length));
    let end = Math.max(start, Math.min(frames[i].file_span[1], bytes.length));
    // A log frame's span ends before its line break: the break is the frame's, not the next gap's.
    if (end > start && bytes[end - 1] !== 10 && bytes[end - 1] !== 13) {
      if (bytes[end] === 13) end += bytes[end + 1] === 10 ? 2 : 1;
      else if (bytes[end] === 10) end += 1;
    }
    blocks[i] = { gap: text(at, start), raw: text(start, end) };
    lines[i] = line;
    line += countBreaks(blocks[i].gap) + countBreaks(blocks[i].raw);
    at = end;
  }
  lines[frames.length] = line;
  const trailing = text(at, bytes.length);
  return { view: state.view, blocks, lines, trailing, lineCount: line + countBreaks(trailing) + 1 };
}

// Line ends as splitLines counts them (CRLF is one).
function countBreaks(text) {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || (code === 13 && text.charCodeAt(i + 1) !== 10)) count++;
  }
  return count;
}

function fileSubtitle(view, pasted) {
  const what = view.capture.source === 'log' ? "the log's own lines" : "curl's output as it is";
  const converted = view.file.converted ? `, decoded from ${view.file.converted}` : '';
  return { text: `${what}${converted}`,
    title: `${formatBytes(view.file.size)} of ${pasted ? 'pasted text' : 'file'}, the selected frame's lines marked; ` +
      `“stream body” shows the ${formatBytes(view.capture.size)} of stream body read out of it` };
}

// Text with U+FFFD (bytes that were not UTF-8), controls and invisible characters marked, in a span
// of the given class; a line end's "CR" is a badge.
function styledText(text, cls) {
  const span = h('span', { class: cls });
  if (cls === 'eol') {
    for (const part of text.split(/(CR)/)) {
      if (part === 'CR') span.append(h('span', { class: 'cr-mark', title: 'CR: a carriage return (U+000D)', text: 'CR' }));
      else if (part) span.append(part);
    }
    return span;
  }
  if (!text.includes('\ufffd') && !MARKED.test(text)) { span.textContent = text; return span; }
  for (const part of text.split(/(\ufffd)/)) {
    if (part === '\ufffd') span.append(h('span', { class: 'bad', title: 'bytes that are not UTF-8', text: part }));
    else if (part) span.append(...streamNodes(part));
  }
  return span;
}

// ---------------------------------------------------------------------------
// Stage 2: events, one row per frame, searchable and filterable.

const KEEP_ALIVE = /^\s*(keep-?alive|ping|heartbeat|processing)?\s*$/i;

function kindLabel(frame) {
  if (frame.kind === 'comment' && (frame.comments || []).every((c) => KEEP_ALIVE.test(c))) {
    return frame.comments && frame.comments.length ? 'keep-alive' : 'no data';
  }
  return frame.kind;
}

class EventsView {
  constructor(scroller, search, filterGroup, countLabel) {
    this.scroller = scroller;
    this.search = search;
    this.filterGroup = filterGroup;
    this.countLabel = countLabel;
    this.filter = 'all';
    this.order = new Int32Array(0);
    this.haystack = null;
    this.appliedQuery = '';
    this.list = new VirtualList(scroller, EVENT_ROW_HEIGHT, (row, el) => this.renderRow(row, el), () => this.markActive());
    search.addEventListener('input', debounce(() => this.apply(true), 120));
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        if (search.value.trim() !== this.appliedQuery) this.apply(false); // typed faster than the debounce
        if (this.order.length) { select(this.order[0], 'search'); scroller.focus(); }
      }
      if (event.key === 'Escape') { search.value = ''; this.apply(true); scroller.focus(); }
    });
    filterGroup.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-filter]');
      if (!button) return;
      this.filter = button.dataset.filter;
      for (const other of filterGroup.querySelectorAll('button')) {
        other.setAttribute('aria-pressed', String(other === button));
      }
      this.apply(true);
    });
    scroller.addEventListener('click', (event) => {
      const row = event.target.closest('.vl-row');
      if (row && row.dataset.frame !== undefined) select(Number(row.dataset.frame), 'events');
    });
  }

  setData() {
    this.haystack = null;
    this.longestName = 0;
    this.fitNames(state.frames);
    this.apply(false);
  }

  // The name column is as wide as the longest event name come so far (Anthropic's content_block_delta
  // whole), within the CSS's limit; names arrive with each range of frames.
  fitNames(frames) {
    let longest = this.longestName;
    for (const frame of frames) if (frame.event && frame.event.length > longest) longest = frame.event.length;
    if (longest === this.longestName) return;
    this.longestName = longest;
    this.scroller.style.setProperty('--event-name-width', `${longest}ch`);
  }

  matches(index, query) {
    const frame = state.frames[index];
    switch (this.filter) {
      case 'problems':
        if (state.problems[index] < 2) return false;
        break;
      case 'data':
        if (frame.kind === 'comment') return false;
        break;
      case 'comments':
        if (frame.kind !== 'comment') return false;
        break;
      default:
    }
    if (!query) return true;
    if (query.number !== null && query.number === index) return true;
    return this.haystackOf(index).includes(query.text);
  }

  // Lower-cased search text per frame, built on the first search only (it doubles the memory of the raw text).
  haystackOf(index) {
    if (!this.haystack) this.haystack = new Array(state.frames.length);
    let text = this.haystack[index];
    if (text === undefined) {
      const frame = state.frames[index];
      text = `${frame.summary}\n${frame.event || ''}\n${frame.raw}\n${(frame.issues || []).join(' ')}`.toLowerCase();
      this.haystack[index] = text;
    }
    return text;
  }

  apply(keepSelectionInView) {
    const total = state.frames.length;
    const raw = this.search.value.trim();
    this.appliedQuery = raw;
    const query = raw ? { text: raw.toLowerCase(), number: /^#?\d+$/.test(raw) ? Number(raw.replace('#', '')) : null } : null;
    let order;
    if (!query && this.filter === 'all') {
      order = new Int32Array(total);
      for (let i = 0; i < total; i++) order[i] = i;
    } else {
      const kept = [];
      for (let i = 0; i < total; i++) if (this.matches(i, query)) kept.push(i);
      order = Int32Array.from(kept);
    }
    this.order = order;
    this.countLabel.textContent = order.length === total
      ? plural(total, 'frame') : `${formatCount(order.length)} of ${plural(total, 'frame')}`;
    this.list.setCount(order.length);
    if (keepSelectionInView && state.selected >= 0) this.scrollToFrame(state.selected);
    else this.list.render();
  }

  positionOf(frameIndex) {
    let low = 0, high = this.order.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = this.order[middle];
      if (value === frameIndex) return middle;
      if (value < frameIndex) low = middle + 1; else high = middle - 1;
    }
    return -1;
  }

  // The listed frame next to the selection (j/k, arrows), even when the selection is filtered out.
  neighbour(step) {
    if (!this.order.length) return -1;
    if (state.selected < 0) return this.order[0];
    let low = 0, high = this.order.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.order[middle] < state.selected) low = middle + 1; else high = middle;
    }
    const exact = this.order[low] === state.selected;
    const position = step > 0 ? (exact ? low + 1 : low) : low - 1;
    return position >= 0 && position < this.order.length ? this.order[position] : -1;
  }

  scrollToFrame(frameIndex) {
    const position = this.positionOf(frameIndex);
    if (position >= 0) this.list.scrollToRow(position, 'nearest');
    else this.list.render();
  }

  renderRow(row, el) {
    const index = this.order[row];
    const frame = state.frames[index];
    if (frame.stub) frameLoader.need(index);
    const level = state.problems[index];
    const classes = ['vl-row', 'event-row', `k-${frame.kind}`];
    if (level === 3) classes.push('p-error');
    else if (level === 2) classes.push('p-warning');
    if (index === state.selected) classes.push('selected');
    if (index === state.hovered) classes.push('hovered');
    el.className = classes.join(' ');
    el.dataset.frame = String(index);
    el.id = `event-row-${index}`;
    el.setAttribute('role', 'option');
    el.setAttribute('aria-selected', String(index === state.selected));
    const where = isBinary(state.result.transport) ? place(index, frame.offset, null, state.result.transport)
      : `frame ${index} · line ${frame.line} · byte ${formatCount(frame.offset)}`;
    // The name and summary may be cut to fit the row: the tooltip has them whole.
    el.title = frame.stub ? `frame ${index} (loading)`
      : [where, frame.event, frame.summary].filter(Boolean).map(tooltipText).join('\n');
    const label = kindLabel(frame);
    setChildren(el,
      h('span', { class: 'ev-index', text: index }),
      frame.time === undefined ? null : h('span', { class: 'ev-time', text: formatSeconds(frame.time), title: 'when the frame arrived, from the start' }),
      h('span', { class: `badge kind-${frame.kind}${label === 'keep-alive' ? ' keep-alive' : ''}`, text: label }),
      frame.event ? h('span', { class: 'ev-name' }, streamNodes(frame.event)) : null,
      frame.terminated ? null : h('span', { class: 'badge cut', text: 'cut', title: 'the stream ended inside this frame' }),
      frame.issues.length ? h('span', { class: 'badge issue', text: frame.issues.join(' '), title: 'framing issues' }) : null,
      h('span', { class: 'ev-summary' }, streamNodes(frame.summary)),
    );
  }

  refresh() { this.list.render(); }

  // A screen reader follows the selected frame (j, k, the arrows) as the listbox's active option,
  // while it is one of the rows drawn.
  markActive() {
    const row = document.getElementById(`event-row-${state.selected}`);
    if (row && this.scroller.contains(row)) this.scroller.setAttribute('aria-activedescendant', row.id);
    else this.scroller.removeAttribute('aria-activedescendant');
  }
}

// ---------------------------------------------------------------------------
// Stage 3: the selected frame's payload, a collapsible JSON tree (or the
// parser's message, with the failing character marked).

function jsonTree(value, depth = 0) {
  if (value === null) return h('span', { class: 'j-null', text: 'null' });
  switch (typeof value) {
    case 'string': return jsonString(value);
    case 'number': return h('span', { class: 'j-number', text: String(value) });
    case 'boolean': return h('span', { class: 'j-bool', text: String(value) });
    default:
  }
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((item, i) => [i, item]) : Object.entries(value);
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (!entries.length) return h('span', { class: 'j-punct', text: open + close });
  const node = h('span', { class: 'j-node' });
  const toggle = h('button', { type: 'button', class: 'j-toggle', 'aria-label': 'fold or unfold' });
  const summary = h('span', { class: 'j-summary', text: isArray ? ` ${plural(entries.length, 'item')} ` : ` ${plural(entries.length, 'key')} ` });
  const body = h('div', { class: 'j-body' });
  let rendered = 0;
  const renderMore = () => {
    const upTo = Math.min(entries.length, rendered + TREE_CHILD_PAGE);
    const more = body.querySelector(':scope > .j-more');
    if (more) more.remove();
    for (; rendered < upTo; rendered++) {
      const [key, item] = entries[rendered];
      const child = jsonTree(item, depth + 1);
      // A nested container's fold button hangs left of its key, where the eye looks for it.
      const childToggle = child.classList.contains('j-node') ? child.querySelector(':scope > .j-toggle') : null;
      body.append(h('div', { class: 'j-entry' },
        childToggle,
        isArray ? null : h('span', { class: 'j-key', text: JSON.stringify(key) }),
        isArray ? null : h('span', { class: 'j-punct', text: ': ' }),
        child,
        rendered < entries.length - 1 ? h('span', { class: 'j-punct', text: ',' }) : null));
    }
    if (rendered < entries.length) {
      body.append(h('button', { type: 'button', class: 'j-more link', onclick: renderMore,
        text: `show ${formatCount(Math.min(TREE_CHILD_PAGE, entries.length - rendered))} more of ${formatCount(entries.length - rendered)}` }));
    }
  };
  const setOpen = (open_) => {
    node.classList.toggle('collapsed', !open_);
    toggle.setAttribute('aria-expanded', String(open_));
    if (open_ && rendered === 0) renderMore();
  };
  toggle.addEventListener('click', () => setOpen(node.classList.contains('collapsed')));
  summary.addEventListener('click', () => setOpen(true));
  node.append(toggle, h('span', { class: 'j-punct', text: open }), summary, body, h('span', { class: 'j-punct j-close', text: close }));
  setOpen(depth < TREE_OPEN_DEPTH && entries.length <= TREE_OPEN_MAX_CHILDREN);
  return node;
}

function jsonString(value) {
  const quoted = JSON.stringify(value);
  if (quoted.length <= TREE_STRING_PREVIEW) return h('span', { class: 'j-string' }, streamNodes(quoted));
  const span = h('span', { class: 'j-string' }, streamNodes(quoted.slice(0, TREE_STRING_PREVIEW)));
  const more = h('button', { type: 'button', class: 'link', text: `… show all ${formatCount(value.length)} characters` });
  more.addEventListener('click', () => { setChildren(span, streamNodes(quoted)); more.remove(); });
  return h('span', null, span, more);
}

function parsePayload(text) {
  try { return { value: JSON.parse(text) }; } catch (error) { return { error: String(error.message || error) }; }
}

// Text with one character marked (a parse error's position); past the end, a marker after the text.
function markedText(text, position, cls) {
  const pre = h('pre', { class: 'code marked' });
  if (position === null || position === undefined) return appendText(pre, text);
  appendText(pre, text.slice(0, position));
  if (position < text.length) {
    const width = (text.codePointAt(position) > 0xffff) ? 2 : 1;
    pre.append(h('mark', { class: cls, title: 'the parser stopped here', text: text.slice(position, position + width) }));
    appendText(pre, text.slice(position + width));
  } else {
    pre.append(h('mark', { class: `${cls} at-end`, title: 'the text ended here' }));
  }
  return pre;
}

function renderJsonView() {
  const container = $('json-view');
  const index = state.selected;
  const frame = state.frames[index];
  if (!frame) {
    $('json-sub').textContent = 'per frame';
    container.replaceChildren(h('p', { class: 'empty-note', text: state.frames.length ? 'Select a frame to see its payload.' : 'No frames.' }));
    return;
  }
  $('json-sub').textContent = `frame ${index} of ${formatCount(state.frames.length)}`;
  if (frame.stub) {
    frameLoader.need(index);
    container.replaceChildren(h('p', { class: 'empty-note', text: `Loading frame ${index}…` }));
    return;
  }
  const facts = [
    ['line', formatCount(frame.line)], ['byte', formatCount(frame.offset)],
    ['size', formatBytes(frame.size)],
  ].filter(([name]) => name !== 'line' || !isBinary(state.result.transport));
  if (frame.time !== undefined) facts.push(['arrived', `${formatSeconds(frame.time)} from the start`]);
  if (frame.event !== null) facts.push(['event', frame.event]);
  // Whole here, where the events list may cut it to fit its row.
  if (frame.summary) facts.push(['summary', frame.summary]);
  if (frame.id !== undefined) facts.push(['id', frame.id]);
  if (frame.retry !== undefined) facts.push(['retry', String(frame.retry)]);
  const parts = [
    h('div', { class: 'frame-head' },
      h('span', { class: 'frame-title', text: `Frame ${index}` }),
      h('span', { class: `badge kind-${frame.kind}`, text: kindLabel(frame) }),
      frame.terminated ? null : h('span', { class: 'badge cut', text: 'cut off' })),
    h('dl', { class: 'facts' }, facts.map(([name, value]) => [h('dt', { text: name }), h('dd', null, streamNodes(value))])),
  ];
  // A framing issue is both a diagnostic and one of the frame's issue_details: listed once, with its line.
  const issueKeys = new Set((frame.issue_details || []).map((issue) => `${issue.code}@${issue.offset}`));
  for (const finding of state.findingsByFrame.get(index) || []) {
    if (frame.kind === 'invalid' && finding.code === 'invalid-json') continue; // the payload section says it
    if (issueKeys.has(`${finding.code}@${finding.offset}`)) continue;
    parts.push(h('div', { class: `finding sev-${finding.severity}` },
      h('span', { class: 'finding-code', text: finding.code }), ' ', streamNodes(finding.message)));
  }
  for (const issue of frame.issue_details || []) {
    parts.push(h('div', { class: 'finding sev-warning' },
      h('span', { class: 'finding-code', text: issue.code }),
      isBinary(state.result.transport) ? ` byte ${formatCount(issue.offset)}: ` : ` line ${issue.line}: `, streamNodes(issue.message)));
  }
  parts.push(payloadSection(frame));
  const produced = producedBy(index);
  if (produced.length) {
    parts.push(h('h3', { class: 'section-title', text: 'Added to the result' }));
    for (const { field, choice, text } of produced) {
      parts.push(h('div', { class: 'produced' },
        h('span', { class: 'produced-field', text: state.result.choices.length > 1 ? `choice ${choice} ${fieldLabel(field)}` : fieldLabel(field) }),
        h('span', { class: 'produced-text' }, streamNodes(text))));
    }
  }
  if (frame.headers) {
    parts.push(h('h3', { class: 'section-title', text: 'Headers' }));
    parts.push(h('dl', { class: 'facts headers' }, frame.headers.map(([name, value]) => [h('dt', { text: name }), h('dd', { text: String(value) })])));
  }
  setChildren(container, parts);
  container.scrollTop = 0;
}

function payloadSection(frame) {
  switch (frame.kind) {
    case 'json': {
      const text = frame.data_span ? frame.raw.slice(frame.data_span[0], frame.data_span[1]) : frame.payload_json;
      const parsed = parsePayload(text);
      return h('div', { class: 'json-tree' }, 'value' in parsed ? jsonTree(parsed.value) : parsed.error);
    }
    case 'glued': {
      const documents = JSON.parse(frame.payload_json);
      return h('div', null,
        h('p', { class: 'note warn', text: `${plural(documents.length, 'JSON document')} in one frame: the blank line between frames was lost. Each was folded.` }),
        documents.map(({ offset, document }, i) => h('div', { class: 'glued-document' },
          h('div', { class: 'muted', text: `document ${i + 1}, at character ${formatCount(offset)} of the data` }),
          h('div', { class: 'json-tree' }, jsonTree(document)))));
    }
    case 'invalid':
      return h('div', { class: 'invalid-payload' },
        h('p', { class: 'note error' },
          h('strong', { text: 'Not JSON: ' }), frame.error ? frame.error.message : frame.summary,
          frame.error && frame.error.position !== null ? ` (character ${formatCount(frame.error.position)})` : ''),
        h('p', { class: 'muted', text: 'Kept aside with its position; the rest of the stream still folds.' }),
        markedText(frame.data || '', frame.error ? frame.error.position : null, 'error-mark'));
    case 'done':
      return h('p', { class: 'note ok', text: '[DONE]: the stream says it is over. Clients stop reading here.' });
    case 'empty':
      return h('div', null,
        h('p', { class: 'note warn', text: 'An empty data field: clients that JSON-parse every data field fail on it.' }),
        markedText(frame.data || '', null));
    case 'comment':
      return h('div', null,
        h('p', { class: 'note', text: frame.comments ? 'A comment frame (often a keep-alive): no data, clients skip it.' : 'No data field: clients skip this frame.' }),
        frame.comments ? h('pre', { class: 'code' }, streamNodes(frame.comments.map((c) => `: ${c}`).join('\n'))) : null);
    default:
      return appendText(h('pre', { class: 'code' }), frame.raw);
  }
}

// ---------------------------------------------------------------------------
// Provenance: for every result text, runs of [start, end, frame] (UTF-16 units).

function runIndexAt(runs, offset) {
  let low = 0, high = runs.length / 3 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (runs[middle * 3 + 1] <= offset) low = middle + 1;
    else if (runs[middle * 3] > offset) high = middle - 1;
    else return middle;
  }
  return -1;
}

// The runs a frame produced; frames only grow along a text, so they are found by bisection.
function runsOfFrame(entry, frameIndex) {
  const runs = entry.runs;
  const count = runs.length / 3;
  const found = [];
  if (!entry.monotonic) {
    for (let i = 0; i < count; i++) if (runs[i * 3 + 2] === frameIndex) found.push(i);
    return found;
  }
  let low = 0, high = count;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (runs[middle * 3 + 2] < frameIndex) low = middle + 1; else high = middle;
  }
  for (let i = low; i < count && runs[i * 3 + 2] === frameIndex; i++) found.push(i);
  return found;
}

function producedBy(frameIndex) {
  const produced = [];
  for (const entry of state.provenance) {
    for (const i of runsOfFrame(entry, frameIndex)) {
      produced.push({ field: entry.field, choice: entry.choice, text: entry.text.slice(entry.runs[i * 3], entry.runs[i * 3 + 1]) });
    }
  }
  return produced;
}

// A DOM range over characters [start, end) of an element's text (its text nodes in order).
function textRange(element, start, end) {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let seen = 0, started = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = node.data.length;
    if (!started && start <= seen + length) { range.setStart(node, start - seen); started = true; }
    if (started && end <= seen + length) { range.setEnd(node, end - seen); return range; }
    seen += length;
  }
  return started ? range : null;
}

function textOffset(element, node, offset) {
  if (node.nodeType !== Node.TEXT_NODE || !element.contains(node)) return -1;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let seen = 0;
  for (let current = walker.nextNode(); current; current = walker.nextNode()) {
    if (current === node) return seen + offset;
    seen += current.data.length;
  }
  return -1;
}

function caretAt(x, y) {
  if (document.caretPositionFromPoint) {
    const position = document.caretPositionFromPoint(x, y);
    return position ? { node: position.offsetNode, offset: position.offset } : null;
  }
  if (document.caretRangeFromPoint) {
    const range = document.caretRangeFromPoint(x, y);
    return range ? { node: range.startContainer, offset: range.startOffset } : null;
  }
  return null;
}

// The character under the pointer in a provenance element, or -1 (the caret alone may be beside it).
function characterAt(element, x, y) {
  const caret = caretAt(x, y);
  if (!caret) return -1;
  const offset = textOffset(element, caret.node, caret.offset);
  if (offset < 0) return -1;
  for (const candidate of [offset, offset - 1]) {
    if (candidate < 0) continue;
    const range = textRange(element, candidate, candidate + 1);
    if (!range) continue;
    for (const rect of range.getClientRects()) {
      if (x >= rect.left - 1 && x <= rect.right + 1 && y >= rect.top - 1 && y <= rect.bottom + 1) return candidate;
    }
  }
  return -1;
}

const highlights = window.CSS && CSS.highlights && typeof Highlight === 'function' ? CSS.highlights : null;

function setHighlight(name, ranges) {
  if (!highlights) return;
  if (ranges.length) highlights.set(name, new Highlight(...ranges));
  else highlights.delete(name);
}

function rangesOfFrame(frameIndex) {
  const ranges = [];
  for (const entry of state.provenance) {
    if (!entry.element) continue;
    for (const i of runsOfFrame(entry, frameIndex)) {
      const range = textRange(entry.element, entry.runs[i * 3], entry.runs[i * 3 + 1]);
      if (range) ranges.push({ range, entry });
    }
  }
  return ranges;
}

// ---------------------------------------------------------------------------
// Stage 4: the merged result.

function renderResult() {
  const container = $('result-view');
  const result = state.result;
  const parts = [];
  const provenanceOf = new Map(state.provenance.map((entry) => [`${entry.choice}|${entry.field}`, entry]));
  const provenanceText = (choice, field, text, cls) => {
    const entry = provenanceOf.get(`${choice}|${field}`);
    const element = appendText(h('div', { class: `prov-text ${cls}`, dataset: { choice: String(choice), field } }), text);
    if (entry) entry.element = element;
    return element;
  };
  const severalChoices = result.choices.length > 1;
  if (!result.choices.length) parts.push(h('p', { class: 'empty-note', text: 'No reply was folded from this capture.' }));
  for (const choice of result.choices) {
    const section = h('section', { class: 'choice' });
    if (severalChoices) section.append(h('h3', { class: 'choice-title', text: `Choice ${choice.index}` }));
    if (choice.reasoning) {
      const details = h('details', { class: 'reasoning' },
        h('summary', null, h('span', { class: 'section-title inline', text: 'Reasoning' }),
          h('span', { class: 'muted', text: ` ${plural(choice.reasoning.length, 'character')}, kept apart from the reply` })),
        provenanceText(choice.index, 'reasoning', choice.reasoning, 'reasoning-text'));
      section.append(details);
    }
    section.append(h('h3', { class: 'section-title', text: 'Reply' }));
    if (choice.content) section.append(markLostText(provenanceText(choice.index, 'content', choice.content, 'reply-text'), choice.index));
    else section.append(h('p', { class: 'empty-note', text: choice.tool_calls.length ? 'No text: the reply is tool calls.' : 'No text.' }));
    if (choice.refusal) {
      section.append(h('h3', { class: 'section-title error-text', text: 'Refusal' }));
      section.append(provenanceText(choice.index, 'refusal', choice.refusal, 'refusal-text'));
    }
    choice.tool_calls.forEach((call, position) => section.append(renderToolCall(choice, call, position, provenanceText)));
    const finish = h('div', { class: 'finish' }, h('span', { class: 'muted', text: 'finish reason ' }),
      h('span', { class: `badge finish-${choice.finish_reason || 'none'}`, text: choice.finish_reason || 'none' }));
    if (choice.finish_reason_raw && choice.finish_reason_raw !== choice.finish_reason) {
      finish.append(h('span', { class: 'muted', text: ` (sent as ${JSON.stringify(choice.finish_reason_raw)})` }));
    }
    section.append(finish);
    parts.push(section);
  }
  if (result.usage) parts.push(renderUsage(result.usage));
  parts.push(renderFindings(result));
  setChildren(container, parts);
}

// A marker in the reply where a frame that did not decode came (the fold view's lost_text), as the
// CLI shows it: "⟦frame 17 lost: invalid JSON; partial text " wor"⟧". Its words are CSS content
// (data-label), not text nodes, so the reply's character offsets (provenance, hover) stay the text's.
function markLostText(element, choice) {
  const lost = (state.view.lost_text || []).filter((entry) => entry.choice === choice);
  const unit = isBinary(state.result.transport) ? 'message' : 'frame';
  for (const entry of lost.reverse()) {
    const partial = entry.partial ? `; partial text ${JSON.stringify(entry.partial)}` : '';
    const label = `⟦${unit} ${entry.frame} lost: ${entry.reason}${partial}⟧`;
    const marker = h('span', { class: 'lost-text', role: 'note', 'aria-label': label, dataset: { label, frame: String(entry.frame) } });
    const range = textRange(element, entry.offset, entry.offset);
    if (range) range.insertNode(marker); else element.append(marker);
  }
  return element;
}

function renderToolCall(choice, call, position, provenanceText) {
  const field = `tool:${position}`;
  const errorAt = state.view.tool_argument_errors.find((e) => e.choice === choice.index && e.tool === position);
  const argumentsElement = provenanceText(choice.index, field, '', 'args-text code');
  if (errorAt && errorAt.position !== null) {
    const marked = markedText(call.arguments, errorAt.position, 'error-mark');
    argumentsElement.replaceChildren(...marked.childNodes);
  } else {
    appendText(argumentsElement, call.arguments);
  }
  const parsed = call.error !== null
    ? h('div', { class: 'note error' }, h('strong', { text: 'Does not parse: ' }), call.error)
    : h('div', { class: 'json-tree' }, jsonTree(call.parsed));
  return h('section', { class: `tool-call${call.error !== null ? ' has-error' : ''}` },
    h('div', { class: 'tool-head' },
      h('span', { class: 'muted', text: `tool call ${position}` }),
      h('span', { class: 'tool-name' }, call.name === null ? '(no name)' : streamNodes(call.name)),
      call.id !== null ? h('span', { class: 'tool-id muted', text: call.id }) : null),
    h('div', { class: 'tool-panes' },
      h('div', { class: 'tool-pane' }, h('div', { class: 'pane-title', text: 'arguments, joined as streamed' }), argumentsElement),
      h('div', { class: 'tool-pane' }, h('div', { class: 'pane-title', text: 'parsed' }), parsed)));
}

function renderUsage(usage) {
  const names = [['input_tokens', 'input'], ['output_tokens', 'output'], ['reasoning_tokens', 'reasoning'],
    ['cache_read_tokens', 'cache read'], ['total_tokens', 'total']];
  return h('section', { class: 'usage' },
    h('h3', { class: 'section-title', text: 'Usage' }),
    h('dl', { class: 'facts usage-facts' }, names.filter(([key]) => usage[key] !== null && usage[key] !== undefined)
      .map(([key, label]) => [h('dt', { text: label }), h('dd', { text: formatCount(usage[key]) })])));
}

function renderFindings(result) {
  const findings = [
    ...result.errors.map((e) => ({ severity: 'error', code: e.code, frame: e.frame, offset: e.offset, line: e.line, message: e.message })),
    ...result.diagnostics.map((d) => ({ severity: d.severity, code: d.code, frame: d.frame, offset: d.offset, line: d.line, message: d.message })),
  ];
  const section = h('section', { class: 'findings' },
    h('h3', { class: 'section-title', text: findings.length ? `Findings (${findings.length})` : 'Findings' }));
  if (!findings.length) {
    section.append(h('p', { class: 'muted', text: 'Nothing suspicious: every frame decoded and folded cleanly.' }));
    return section;
  }
  const list = h('ul', { class: 'finding-list' });
  for (const finding of findings) {
    const where = finding.frame !== null && finding.frame !== undefined
      ? h('button', { type: 'button', class: 'frame-link', dataset: { frame: String(finding.frame) },
        text: place(finding.frame, finding.offset, finding.line, result.transport),
        onclick: () => select(finding.frame, 'finding') })
      : null;
    list.append(h('li', { class: `finding sev-${finding.severity}` },
      h('div', { class: 'finding-head' },
        h('span', { class: `badge sev-${finding.severity}`, text: finding.severity }),
        h('span', { class: 'finding-code', text: finding.code }), where),
      h('div', { class: 'finding-message' }, streamNodes(finding.message))));
  }
  section.append(list);
  return section;
}

function setupResultPointer() {
  const container = $('result-view');
  const label = $('hover-label');
  let pending = null;
  const entryOf = (element) => state.provenance.find((entry) => entry.element === element);
  const locate = (event) => {
    const element = event.target.closest && event.target.closest('.prov-text');
    if (!element) return null;
    const entry = entryOf(element);
    if (!entry) return null;
    const offset = characterAt(element, event.clientX, event.clientY);
    if (offset < 0) return null;
    const run = runIndexAt(entry.runs, offset);
    return run < 0 ? null : { entry, run, frame: entry.runs[run * 3 + 2] };
  };
  const hover = (event) => {
    const found = locate(event);
    if (!found) { setHovered(-1); label.hidden = true; setHighlight('sf-hover', []); return; }
    const { entry, run, frame } = found;
    const range = textRange(entry.element, entry.runs[run * 3], entry.runs[run * 3 + 1]);
    setHighlight('sf-hover', range ? [range] : []);
    setHovered(frame);
    const info = state.frames[frame];
    label.textContent = info ? place(frame, info.offset, info.line, state.result.transport) : `frame ${frame}`;
    label.hidden = false;
    label.style.left = `${Math.min(event.clientX + 14, window.innerWidth - label.offsetWidth - 8)}px`;
    label.style.top = `${event.clientY + 16}px`;
  };
  container.addEventListener('mousemove', (event) => {
    if (pending) return;
    pending = requestAnimationFrame(() => { pending = null; hover(event); });
  });
  container.addEventListener('mouseleave', () => { setHovered(-1); label.hidden = true; setHighlight('sf-hover', []); });
  container.addEventListener('click', (event) => {
    if (window.getSelection && String(window.getSelection()).length) return; // the person is selecting text
    const found = locate(event);
    if (found) select(found.frame, 'result');
  });
}

function setHovered(frameIndex) {
  if (state.hovered === frameIndex) return;
  state.hovered = frameIndex;
  rawView.refresh();
  eventsView.refresh();
}

// ---------------------------------------------------------------------------
// Timeline: frames and characters over arrival time when the capture has it (a curl
// --trace-time dump, a timestamped log), else over byte offset; drawn on a canvas (no library).

const TIMELINE_FIELDS = [
  { key: 'content', label: 'reply', color: '--series-content' },
  { key: 'reasoning', label: 'reasoning', color: '--series-reasoning' },
  { key: 'tool', label: 'tool arguments', color: '--series-tool' },
];
const KIND_RANK = { json: 1, done: 2, comment: 0, empty: 3, glued: 4, invalid: 5 };

class Timeline {
  constructor(canvas, tip, legend) {
    this.canvas = canvas;
    this.tip = tip;
    this.legend = legend;
    this.width = 0;
    // Said instead of an axis when there is nothing to draw (no frames).
    this.empty = h('p', { class: 'timeline-empty', hidden: true });
    canvas.parentElement.append(this.empty);
    new ResizeObserver(debounce(() => this.draw(), 60)).observe(canvas.parentElement);
    canvas.addEventListener('mousemove', (event) => this.hover(event));
    canvas.addEventListener('mouseleave', () => { this.hideTip(); this.draw(); });
    canvas.addEventListener('click', (event) => {
      const frame = this.frameAt(event);
      if (frame >= 0) select(frame, 'timeline');
    });
  }

  hideTip() { this.tip.hidden = true; this.hoverX = null; }

  setData() {
    const frames = state.frames;
    const arrivals = state.view.arrivals;
    this.columns = null;
    this.hideTip(); // the pointer's place over the last capture says nothing about this one
    // x: seconds since the start when the capture carried arrival times (and they spread), else the byte offset.
    const timed = Array.isArray(arrivals) && arrivals.length === frames.length && frames.length > 0;
    this.byTime = timed && arrivals[frames.length - 1] > 0;
    this.offsets = new Float64Array(frames.length);
    for (let i = 0; i < frames.length; i++) this.offsets[i] = this.byTime ? arrivals[i] : frames[i].offset;
    this.total = this.byTime ? Math.max(1e-3, this.offsets[frames.length - 1]) : Math.max(1, state.view.capture.size);
    const note = document.querySelector('.timeline-note');
    if (note) note.textContent = frames.length ? axisNote(this.byTime, timed, state.view.capture.source, state.capture) : '';
    this.empty.hidden = frames.length > 0;
    const read = state.view.capture.size || state.view.capture.input_size;  // a log may hold no stream data
    this.empty.textContent = frames.length ? '' : read
      ? `No frames were found in these ${formatBytes(read)}: there is nothing to draw over time or bytes.`
      : 'The capture is empty: there is nothing to draw over time or bytes.';
    this.canvas.dataset.axis = !frames.length ? 'none' : this.byTime ? 'time' : 'bytes';
    // Characters each frame produced, per series.
    this.series = TIMELINE_FIELDS.map((field) => ({ ...field, perFrame: new Float64Array(frames.length), total: 0 }));
    for (const entry of state.provenance) {
      const series = this.series.find((s) => (entry.field.startsWith('tool:') ? 'tool' : entry.field) === s.key);
      if (!series) continue;
      const runs = entry.runs;
      for (let i = 0; i < runs.length; i += 3) {
        series.perFrame[runs[i + 2]] += runs[i + 1] - runs[i];
        series.total += runs[i + 1] - runs[i];
      }
    }
    const styles = getComputedStyle(document.body);
    clear(this.legend);
    this.legend.append(h('span', { class: 'legend-item' }, h('span', { class: 'swatch frames' }), 'frames'));
    for (const series of this.series) {
      if (!series.total) continue;
      series.stroke = styles.getPropertyValue(series.color).trim() || '#555';
      this.legend.append(h('span', { class: 'legend-item' }, h('span', { class: `swatch ${series.key}` }), `${series.label} characters`));
    }
    this.draw();
  }

  frameAt(event) {
    if (!state.frames.length) return -1;
    const rect = this.canvas.getBoundingClientRect();
    const offset = (event.clientX - rect.left - this.padLeft) / this.plotWidth * this.total;
    // The last frame starting at or before that byte.
    let low = 0, high = this.offsets.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.offsets[middle] <= offset) low = middle; else high = middle - 1;
    }
    return low;
  }

  hover(event) {
    if (!state.view) return;
    const frame = this.frameAt(event);
    if (frame < 0) { this.hideTip(); return; }
    const rect = this.canvas.getBoundingClientRect();
    this.hoverX = event.clientX - rect.left;
    const info = state.frames[frame];
    const where = this.byTime ? `at ${formatSeconds(this.offsets[frame])}` : `byte ${formatCount(info.offset)}`;
    this.tip.textContent = `frame ${frame} · ${where} · ${kindLabel(info)}`;
    this.tip.hidden = false;
    this.tip.style.left = `${Math.min(Math.max(0, this.hoverX - 60), rect.width - 220)}px`;
    this.draw();
  }

  // Per pixel column: the most alarming kind of frame starting there, and the characters
  // each series gained there. Kept until the width or the data change (hover redraws often).
  columnsFor(width) {
    if (this.columns && this.columns.width === width && this.columns.view === state.view) return this.columns;
    const frames = state.frames;
    const rank = new Int8Array(width).fill(-1);
    const perColumn = this.series.map(() => new Float64Array(width));
    for (let i = 0; i < frames.length; i++) {
      const column = Math.min(width - 1, Math.floor(this.offsets[i] / this.total * width));
      let r = KIND_RANK[frames[i].kind] ?? 1;
      if (state.problems[i] === 3) r = Math.max(r, 5);
      else if (state.problems[i] === 2) r = Math.max(r, 3);
      if (r > rank[column]) rank[column] = r;
      this.series.forEach((series, s) => { perColumn[s][column] += series.perFrame[i]; });
    }
    this.columns = { width, view: state.view, rank, perColumn };
    return this.columns;
  }

  draw() {
    const canvas = this.canvas;
    const cssWidth = canvas.parentElement.clientWidth;
    const cssHeight = canvas.parentElement.clientHeight;
    const ratio = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(cssWidth * ratio) || canvas.height !== Math.round(cssHeight * ratio)) {
      canvas.width = Math.round(cssWidth * ratio);
      canvas.height = Math.round(cssHeight * ratio);
      canvas.style.width = `${cssWidth}px`;
      canvas.style.height = `${cssHeight}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    if (!state.view || cssWidth < 50 || !state.frames.length) return;
    const styles = getComputedStyle(document.body);
    const color = (name) => styles.getPropertyValue(name).trim();
    this.padLeft = 8;
    const padRight = 8;
    this.plotWidth = Math.max(1, cssWidth - this.padLeft - padRight);
    const width = Math.max(1, Math.floor(this.plotWidth));
    const bandTop = 2, bandHeight = 12;
    const plotTop = bandTop + bandHeight + 6, axisHeight = 14;
    const plotHeight = Math.max(8, cssHeight - plotTop - axisHeight);
    const x = (offset) => this.padLeft + offset / this.total * this.plotWidth;
    const frames = state.frames;
    if (!this.offsets || this.offsets.length !== frames.length) return; // setData() draws again

    const { rank, perColumn } = this.columnsFor(width);
    const rankColor = [color('--kind-comment'), color('--kind-json'), color('--kind-done'), color('--warn'), color('--warn'), color('--err')];
    for (let column = 0; column < width; column++) {
      if (rank[column] < 0) continue;
      ctx.fillStyle = rankColor[rank[column]];
      const tall = rank[column] >= 3;
      ctx.fillRect(this.padLeft + column, bandTop + (tall ? 0 : 3), 1, tall ? bandHeight : bandHeight - 6);
    }

    // Characters: cumulative per series, over the byte offset of the frame that produced them.
    const grand = Math.max(1, ...this.series.map((s) => s.total));
    ctx.strokeStyle = color('--border');
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(this.padLeft, plotTop + plotHeight + 0.5);
    ctx.lineTo(this.padLeft + this.plotWidth, plotTop + plotHeight + 0.5);
    ctx.stroke();
    this.series.forEach((series, s) => {
      if (!series.total) return;
      const counts = perColumn[s];
      ctx.strokeStyle = series.stroke;
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      let sum = 0;
      ctx.moveTo(this.padLeft, plotTop + plotHeight);
      for (let column = 0; column < width; column++) {
        sum += counts[column];
        ctx.lineTo(this.padLeft + column + 1, plotTop + plotHeight - sum / grand * plotHeight);
      }
      ctx.stroke();
    });

    // Axis labels.
    ctx.fillStyle = color('--muted');
    ctx.font = `11px ${color('--sans') || 'sans-serif'}`;
    ctx.textBaseline = 'bottom';
    const ticks = 5;
    for (let t = 0; t <= ticks; t++) {
      const value = this.total * t / ticks;
      const label = this.byTime ? formatSeconds(value) : formatBytes(Math.round(value));
      ctx.textAlign = t === 0 ? 'left' : t === ticks ? 'right' : 'center';
      ctx.fillText(label, x(value), cssHeight);
    }
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(`${formatCount(grand)} chars`, this.padLeft + 2, plotTop);

    // The selected frame, and the pointer.
    if (state.selected >= 0 && state.selected < frames.length) {
      ctx.fillStyle = color('--accent');
      ctx.fillRect(Math.round(x(this.offsets[state.selected])) - 1, 0, 2, plotTop + plotHeight);
    }
    if (this.hoverX !== null && this.hoverX !== undefined) {
      ctx.fillStyle = color('--muted');
      ctx.fillRect(Math.round(this.hoverX), 0, 1, plotTop + plotHeight);
    }
  }
}

// What the timeline's x axis is, in words that fit where the capture came from.
function axisNote(byTime, timed, source, capture) {
  if (byTime && source === 'store') return 'x: time since the request was sent (each read as the recorder received it)';
  if (byTime) {
    const from = { 'curl-trace': "curl's --trace-time stamps", log: "the log's timestamps", har: 'the HAR' }[source] || 'the capture';
    return `x: time since the start (arrival times from ${from})`;
  }
  if (timed) return 'x: byte offset (every frame arrived in the same read: no spread in time to draw)';
  const pasted = capture && capture.name === 'pasted text';
  const why = {
    har: 'a HAR times the response as a whole, not each frame',
    cassette: 'a cassette keeps no arrival times',
    'trace-log': 'a trace log times the response as a whole, not each frame',
    'curl-verbose': 'curl -v output has no arrival times; curl --trace-time output has',
    'curl-trace': 'this trace has no timestamps; record it with --trace-time',
    log: 'the log lines carry no timestamps',
  }[source] || (pasted ? 'pasted text has no arrival times' : 'a stream body saved to a file has no arrival times');
  return `x: byte offset (${why})`;
}

function formatSeconds(seconds) {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
}

// ---------------------------------------------------------------------------
// Selection: one frame, shown in every stage.

function select(frameIndex, source) {
  if (!state.view || frameIndex < 0 || frameIndex >= state.frames.length) return;
  state.selected = frameIndex;
  if (source !== 'raw') rawView.scrollToFrame(frameIndex);
  else rawView.refresh();
  if (source !== 'events') eventsView.scrollToFrame(frameIndex);
  else eventsView.refresh();
  renderJsonView();
  const found = rangesOfFrame(frameIndex);
  setHighlight('sf-selected', found.map((f) => f.range));
  if (source !== 'result' && found.length) revealRange(found[0]);
  for (const link of document.querySelectorAll('.frame-link')) {
    link.classList.toggle('selected', Number(link.dataset.frame) === frameIndex);
  }
  timeline.draw();
  document.body.dataset.selectedFrame = String(frameIndex);
}

// Scroll the result so the selected frame's text is in view (opening folded reasoning if needed).
function revealRange({ range, entry }) {
  const details = entry.element.closest('details');
  if (details && !details.open) details.open = true;
  const container = $('result-view');
  const rect = range.getBoundingClientRect();
  const box = container.getBoundingClientRect();
  if (rect.top < box.top || rect.bottom > box.bottom) {
    container.scrollTop += rect.top - box.top - box.height / 3;
  }
}

// ---------------------------------------------------------------------------
// Frames by range. The fold answers with its progress, then the result without
// the frames' rows (POST /api/fold?frames=range); the rows come from
// GET /api/frames by range: the ones in view first, then the rest in order, so
// the raw view, the search and the timeline get every frame in the end.

const FRAME_RANGE = 2000;
const KIND_NAMES = { j: 'json', c: 'comment', d: 'done', e: 'empty', g: 'glued', i: 'invalid' };

// Stand-ins for the rows not here yet: the kind is known, the place estimated (timeline).
function stubFrames(view) {
  const count = view.frame_count, kinds = view.frame_kinds || '', size = view.capture.size;
  const frames = new Array(count);
  for (let i = 0; i < count; i++) {
    frames[i] = { stub: true, index: i, kind: KIND_NAMES[kinds[i]] || 'json', offset: Math.floor(i * size / Math.max(1, count)),
      line: null, event: null, terminated: true, issues: [], summary: '…', raw: '', size: 0 };
  }
  return frames;
}

// POST the capture; `onProgress(stage, done, total)`: 'upload' bytes sent, then 'fold' bytes folded.
function postFold(capture, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const query = inspectQuery();
    const stored = capture.stored !== undefined;
    // A stored capture is folded where it is (its arrival times are the store's): nothing to send.
    if (stored) xhr.open('GET', `/api/captures/${capture.stored}/fold?${query ? `${query}&` : ''}frames=range`);
    else xhr.open('POST', `/api/fold?${query ? `${query}&` : ''}frames=range`);
    if (!stored) xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    let seen = 0, last = null;
    const readLines = () => {
      const text = xhr.responseText;
      for (let end = text.indexOf('\n', seen); end >= 0; end = text.indexOf('\n', seen)) {
        const line = text.slice(seen, end);
        seen = end + 1;
        if (!line) continue;
        const message = JSON.parse(line);
        if (typeof message.progress === 'number') onProgress('fold', message.progress, message.total);
        else last = message;
      }
    };
    xhr.upload.onprogress = (event) => onProgress('upload', event.loaded, event.lengthComputable ? event.total : capture.size);
    xhr.onprogress = () => { if (xhr.status === 200) readLines(); };
    xhr.onload = () => {
      if (xhr.status !== 200) {
        let message = `The server answered ${xhr.status} ${xhr.statusText}`;
        try {
          const body = JSON.parse(xhr.responseText);
          if (body && typeof body.error === 'string') message = body.error;
        } catch (_) { /* not JSON: the status says it */ }
        reject(new Error(message));
        return;
      }
      try { readLines(); } catch (error) { reject(new Error(`The server's answer did not parse (${error.message})`)); return; }
      if (last && last.view) resolve(last.view);
      else reject(new Error(last && last.error ? last.error : 'The server\'s answer ended before the result'));
    };
    xhr.onerror = () => reject(new Error('The local streamfold server did not answer. Is it still running?'));
    xhr.send(stored ? null : capture.body);
  });
}

function showFoldProgress(capture, stage, done, total) {
  const doing = { upload: 'Sending', read: 'Reading' }[stage] || 'Folding';
  $('summary-bar').replaceChildren(h('span', { class: 'spinner', 'aria-hidden': true }),
    h('span', { text: `${doing} ${capture.name}: ${formatBytes(done)} of ${formatBytes(total)}` }),
    Object.assign(h('progress', { class: 'fold-progress', 'aria-label': `${doing} progress` }),
      { max: Math.max(1, total), value: Math.min(done, total) }));
}

class FrameLoader {
  constructor() { this.token = 0; this.complete = true; }

  start(view) {
    this.token++;
    this.view = view;
    this.foldId = view.fold_id;
    const count = view.frames ? 0 : view.frame_count;
    this.ranges = Math.ceil(count / FRAME_RANGE);
    this.loaded = new Uint8Array(this.ranges);
    this.loadedCount = 0;
    this.inFlight = new Map();
    this.started = performance.now();
    this.complete = this.ranges === 0;
    document.body.dataset.framesLoaded = this.complete ? 'all' : '0';
    // The first range comes first (the page is ready with it: every frame of a small capture).
    this.first = this.complete ? Promise.resolve() : this.fetchRange(0);
    if (!this.complete) this.background(this.token);
  }

  // The row of frame `index` is wanted now (it is in view, or selected).
  need(index) {
    const range = Math.floor(index / FRAME_RANGE);
    if (range < this.ranges && !this.loaded[range]) this.fetchRange(range);
  }

  async background(token) {
    for (let range = 0; range < this.ranges && token === this.token; range++) {
      if (!this.loaded[range]) await this.fetchRange(range);
    }
  }

  fetchRange(range) {
    if (this.inFlight.has(range)) return this.inFlight.get(range);
    const token = this.token;
    const promise = (async () => {
      let answer;
      try {
        const response = await fetch(`/api/frames?fold=${encodeURIComponent(this.foldId)}&start=${range * FRAME_RANGE}&count=${FRAME_RANGE}`);
        if (!response.ok) throw new Error(await errorMessage(response));
        answer = await response.json();
      } catch (error) {
        if (token === this.token) showAlert(`Frames ${formatCount(range * FRAME_RANGE)} on did not load: ${error.message}`);
        this.token++; // stop loading this fold
        return;
      } finally {
        this.inFlight.delete(range);
      }
      if (token !== this.token || this.loaded[range]) return;
      this.take(range, answer.frames);
    })();
    this.inFlight.set(range, promise);
    return promise;
  }

  take(range, rows) {
    for (const row of rows) {
      state.frames[row.index] = row;
      if ((row.issues.length || !row.terminated) && state.problems[row.index] < 2) state.problems[row.index] = 2;
    }
    eventsView.fitNames(rows);
    this.loaded[range] = 1;
    this.loadedCount++;
    if (range === 0) timings.firstRangeMs = performance.now() - this.started;
    document.body.dataset.framesLoaded = String(Math.min(state.frames.length, this.loadedCount * FRAME_RANGE));
    eventsView.refresh();
    const selected = state.selected;
    if (selected >= range * FRAME_RANGE && selected < (range + 1) * FRAME_RANGE) renderJsonView();
    if (this.loadedCount === this.ranges) this.finish();
    else $('raw-sub').textContent = `loading frames… ${formatCount(this.loadedCount * FRAME_RANGE)} of ${formatCount(state.frames.length)}`;
  }

  // Every row is here: lay out the raw view, place the frames on the timeline, search them all.
  finish() {
    this.complete = true;
    timings.allFramesMs = performance.now() - this.started;
    rawView.setData();
    timeline.setData();
    eventsView.haystack = null;
    if (eventsView.search.value.trim() || eventsView.filter !== 'all') eventsView.apply(true);
    if (state.selected >= 0) rawView.scrollToFrame(state.selected, true);
    document.body.dataset.framesLoaded = 'all';
  }
}

const frameLoader = new FrameLoader();

// ---------------------------------------------------------------------------
// Loading a capture.

function setState(name) { document.body.dataset.state = name; }

function showAlert(message) {
  const alert = $('alert');
  if (!message) { alert.hidden = true; clear(alert); return; }
  alert.replaceChildren(h('span', { text: message }),
    h('button', { type: 'button', class: 'icon', 'aria-label': 'Dismiss', text: '×', onclick: () => showAlert(null) }));
  alert.hidden = false;
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    if (body && typeof body.error === 'string') return body.error;
  } catch (_) { /* not JSON: fall through */ }
  return `The server answered ${response.status} ${response.statusText}`;
}

// The inspect view's fold: the options, and the HAR entry picked.
function inspectQuery() {
  const query = new URLSearchParams(foldQuery());
  if (state.entry !== null) query.set('entry', state.entry);
  return query.toString();
}

// A HAR (a cassette, a trace log) of several entries: the entry folded, and the others to pick (streamed ones
// first). A URL is the file's, so untrusted: text only, and a bidi or invisible character in it is spelled out.
function renderEntryPicker(view) {
  const har = view && view.har;
  $('entry-bar').hidden = !har;
  if (!har) return;
  $('entry-label').textContent = har.noun || 'HAR entry';
  const option = (entry) => Object.assign(h('option', { text: entryLabel(entry) }), { value: String(entry.index) });
  const group = (label, entries) => (entries.length
    ? Object.assign(h('optgroup', null, entries.map(option)), { label }) : null);
  const streamed = har.entries.filter((entry) => entry.streamed);
  setChildren($('entry-select'), group('streamed responses', streamed),
    group('other requests', har.entries.filter((entry) => !entry.streamed)));
  $('entry-select').value = String(har.entry);
  const count = har.entries.length;
  const noun = (har.noun || 'entry').split(' ').pop();
  const nouns = noun === 'entry' ? 'entries' : `${noun}s`;
  $('entry-note').textContent = `${formatCount(streamed.length)} of ${formatCount(count)} ${count === 1 ? noun : nouns} streamed`;
}

function entryLabel(entry) {
  const spelled = (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;
  const url = (entry.url || '(no URL)').replace(MARKED_ALL, spelled);
  const status = entry.status === null ? 'no status' : String(entry.status);
  return `${entry.streamed ? '▶ ' : entry.failed ? '✕ ' : ''}#${entry.index} ${entry.method || '?'} ${url} · ${status}`
    + `${entry.mime ? ` · ${entry.mime.replace(MARKED_ALL, spelled)}` : ''}`
    + `${entry.streamed ? ' · streamed' : entry.failed ? ' · failed' : ''}`;
}

function setupEntryPicker() {
  $('entry-select').addEventListener('change', async () => {
    if (!state.capture) return;
    state.entry = $('entry-select').value;
    await foldCapture(state.capture);
    // A fold that failed (an entry with no body) leaves the last one shown: its entry is the one picked.
    renderEntryPicker(state.view);
    if (state.view && state.view.har) state.entry = String(state.view.har.entry);
  });
}

function foldQuery() {
  const query = new URLSearchParams();
  if ($('dialect-select').value) query.set('dialect', $('dialect-select').value);
  if ($('transport-select').value) query.set('transport', $('transport-select').value);
  return query.toString();
}

async function foldCapture(capture) {
  const token = ++state.foldToken;
  if (capture !== state.capture) state.entry = null; // another capture: the server picks its entry
  state.capture = capture;
  noteOpenCapture(capture);
  showAlert(null);
  setState('loading');
  showFoldProgress(capture, capture.stored !== undefined ? 'read' : 'upload', 0, capture.size);
  const started = performance.now();
  timings.progress = { upload: 0, fold: 0, total: capture.size, reports: 0 };
  let view;
  try {
    view = await postFold(capture, (stage, done, total) => {
      if (token !== state.foldToken) return;
      timings.progress[stage] = done;
      timings.progress.reports++;
      showFoldProgress(capture, stage, done, total);
    });
  } catch (error) {
    if (token === state.foldToken) failLoad(error.message);
    return;
  }
  if (token !== state.foldToken) return;
  if (view.stored) capture.name = storedName(view.stored);
  timings.responseMs = performance.now() - started;
  const arrived = performance.now();
  timings.parsedMs = 0;
  load(view);
  await frameLoader.first;
  if (token !== state.foldToken) return;
  timings.renderedMs = performance.now() - arrived;
  // Interactive once the first frame with the new content has been painted.
  requestAnimationFrame(() => setTimeout(() => {
    if (token !== state.foldToken) return;
    timings.interactiveMs = performance.now() - arrived;
    timings.totalMs = performance.now() - started;
    timings.frames = state.frames.length;
    // Counts the captures shown so far, so a test (or a person's script) can wait for a new one.
    document.body.dataset.foldCount = String(Number(document.body.dataset.foldCount || 0) + 1);
    setState('ready');
  }, 0));
}

function failLoad(message) {
  showAlert(message);
  setState(state.view ? 'ready' : 'empty');
  renderSummary();
}

function load(view) {
  const steps = {};
  let mark = performance.now();
  const step = (name) => { const now = performance.now(); steps[name] = Math.round(now - mark); mark = now; };
  state.view = view;
  state.result = view.result;
  state.frames = view.frames || stubFrames(view);
  state.selected = -1;
  state.hovered = -1;
  $('hover-label').hidden = true; // it named a frame of the last capture
  const frames = state.frames;
  const problems = new Int8Array(frames.length);
  const findingsByFrame = new Map();
  const note = (frame, severity, code, message, offset) => {
    if (frame === null || frame === undefined || frame < 0 || frame >= frames.length) return;
    problems[frame] = Math.max(problems[frame], SEVERITY_LEVEL[severity] || 1);
    if (!findingsByFrame.has(frame)) findingsByFrame.set(frame, []);
    findingsByFrame.get(frame).push({ severity, code, message, offset });
  };
  for (const error of view.result.errors) note(error.frame, 'error', error.code, error.message, error.offset);
  for (const diagnostic of view.result.diagnostics) note(diagnostic.frame, diagnostic.severity, diagnostic.code, diagnostic.message, diagnostic.offset);
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i];
    if (frame.kind === 'invalid') problems[i] = 3;
    else if ((frame.kind === 'glued' || frame.kind === 'empty' || frame.issues.length || !frame.terminated) && problems[i] < 2) problems[i] = 2;
  }
  state.problems = problems;
  state.findingsByFrame = findingsByFrame;
  const texts = new Map();
  for (const choice of view.result.choices) {
    texts.set(`${choice.index}|content`, choice.content);
    texts.set(`${choice.index}|reasoning`, choice.reasoning);
    texts.set(`${choice.index}|refusal`, choice.refusal);
    choice.tool_calls.forEach((call, position) => texts.set(`${choice.index}|tool:${position}`, call.arguments));
  }
  state.provenance = view.provenance.map(({ choice, field, runs }) => {
    const flat = new Int32Array(runs.length * 3);
    let monotonic = true;
    for (let i = 0; i < runs.length; i++) {
      flat[i * 3] = runs[i][0]; flat[i * 3 + 1] = runs[i][1]; flat[i * 3 + 2] = runs[i][2];
      if (i && runs[i][2] < runs[i - 1][2]) monotonic = false;
    }
    return { choice, field, text: texts.get(`${choice}|${field}`) || '', runs: flat, monotonic, element: null };
  });
  setHighlight('sf-selected', []);
  setHighlight('sf-hover', []);
  step('index');
  renderSummary();
  renderEntryPicker(view);
  renderResult();
  step('result');
  frameLoader.start(view);
  eventsView.setData();
  step('events');
  if (frameLoader.complete) rawView.setData(); else rawView.setLoading();
  step('raw');
  timeline.setData();
  step('timeline');
  timings.steps = steps;
  $('download-result').disabled = false;
  $('download-export').disabled = view.export === null;
  $('download-export').title = view.export === null ? (view.export_error || 'no export for this dialect') : 'Download the non-streaming object the same request would have returned';
  closeInput();
  // Start where a person would: the first frame with an error, else the first that produced text.
  let start = -1;
  for (let i = 0; i < frames.length && start < 0; i++) if (problems[i] === 3) start = i;
  if (start < 0 && state.provenance.length) start = state.provenance[0].runs[2];
  if (start < 0 && frames.length) start = 0;
  if (start >= 0) select(start, 'load');
  else renderJsonView();
  step('select');
}

// "complete" says the stream ended as it should; a reply cut at the token limit, or tool arguments
// that do not parse at the end, ended cleanly but are not whole: an amber "cut" badge says why.
function cutReasons(result) {
  const reasons = [];
  const several = result.choices.length > 1;
  for (const choice of result.choices) {
    const who = several ? `choice ${choice.index}: ` : '';
    if (choice.finish_reason === 'length') {
      reasons.push(`${who}the reply stopped at the token limit (finish reason ${JSON.stringify(choice.finish_reason_raw || choice.finish_reason)})`);
    }
    choice.tool_calls.forEach((call, position) => {
      if (call.error !== null) reasons.push(`${who}tool call ${position}'s arguments do not parse: ${call.error}`);
    });
  }
  return reasons;
}

function completeBadge(result) {
  if (!result.complete) {
    return h('span', { class: 'badge warn', text: 'incomplete',
      title: 'no terminal frame, or the server sent an error: the reply may be cut' });
  }
  const reasons = cutReasons(result);
  if (reasons.length) {
    return h('span', { class: 'badge warn cut-reply', text: 'cut',
      title: `the stream ended properly, but the reply is not whole: ${reasons.join('; ')}` });
  }
  return h('span', { class: 'badge ok', text: 'complete', title: 'the terminal frame arrived and the server sent no error' });
}

// Arrival times, when the capture has them: TTFB and TTFT (when the request's start is known; else
// the first text after the first byte), longest gap, stalls over the threshold the core used.
function timingSummary(view) {
  const timing = view.stream_timing;
  if (!timing && view.entry_timing) return entryTiming(view.entry_timing);
  if (!timing) return null;
  const stalls = view.result.diagnostics.filter((d) => d.code === 'stall').length;
  const parts = [];
  if (timing.ttfb !== null && timing.ttfb !== undefined) parts.push(`TTFB ${formatSeconds(timing.ttfb)}`);
  if (timing.ttft !== null && timing.ttft !== undefined) parts.push(`TTFT ${formatSeconds(timing.ttft)}`);
  else parts.push(timing.first_text === null || timing.first_text === undefined ? 'no text' : `first text ${formatSeconds(timing.first_text)} after the first byte`);
  parts.push(timing.gap_max === null ? 'one frame, no gaps' : `longest gap ${formatSeconds(timing.gap_max)}`);
  parts.push(stalls ? `${plural(stalls, 'stall')} over ${timing.stall_threshold} s` : `no stall over ${timing.stall_threshold} s`);
  parts.push(`${formatSeconds(timing.duration)} in all`);
  const origin = timing.origin !== 'request'
    ? 'times count from the first byte received (the capture does not say when the request was sent, so it has no TTFB or TTFT)'
    : 'times count from when the request was sent: TTFB (time to first byte) to the first byte of the body, TTFT (time to first text) to the first frame that added reply text';
  return h('span', { class: `timing-summary${stalls ? ' has-stalls' : ''}`, title: origin, text: parts.join(' · ') });
}

// A HAR's times are the entry's, not the frames': said as such.
function entryTiming(known) {
  const parts = [];
  if (known.first_byte !== undefined) parts.push(`first byte after ${formatSeconds(known.first_byte)}`);
  if (known.receive !== undefined) parts.push(`body received over ${formatSeconds(known.receive)}`);
  if (known.total !== undefined) parts.push(`${formatSeconds(known.total)} in all`);
  return h('span', { class: 'timing-summary entry-timing', text: `HAR entry: ${parts.join(', ')} (no per-frame times)`,
    title: "the HAR's own timing of the whole response; it does not say when each frame arrived" });
}

function renderSummary() {
  const bar = $('summary-bar');
  if (!state.view) {
    const hint = state.meta && state.meta.store ? 'No capture open yet: open one from the list below, or paste one.' : 'No capture yet.';
    bar.replaceChildren(h('span', { class: 'muted', text: hint }));
    return;
  }
  const result = state.result;
  const counts = result.frames;
  // What is no stream (an HTML page, an error response, a PDF) claims no dialect or transport: its finding says what it is.
  const notAStream = (state.meta ? state.meta.not_a_stream || [] : []);
  const unread = result.diagnostics.find((finding) => notAStream.includes(finding.code));
  const items = [
    h('span', { class: 'source-name' }, streamNodes(state.capture ? state.capture.name : 'capture')),
    state.view.stored ? storedSummary(state.view.stored) : null,
    inputSize(state.view.capture),
    unread ? h('span', { class: 'error-text', text: `not a stream (${unread.code})` }) : completeBadge(result),
    unread ? null : h('span', { text: result.dialect }),
    unread ? null : h('span', { text: result.transport }),
    result.model ? h('span', { class: 'mono' }, streamNodes(result.model)) : null,
    h('span', { class: 'muted' }, `${plural(counts.total, 'frame')}: ${formatCount(counts.data)} data, ${formatCount(counts.comments)} comments, `,
      h('span', { class: counts.invalid ? 'error-text' : '', text: `${formatCount(counts.invalid)} invalid` })),
    timingSummary(state.view),
    h('span', { class: 'muted', text: `folded in ${formatCount(state.view.timing.fold_ms)} ms` }),
  ];
  setChildren(bar, ...items.filter(Boolean).flatMap((item, i) => (i ? [h('span', { class: 'sep', text: '·' }), item] : [item])));
}

// ---------------------------------------------------------------------------
// Input: paste, drop, open, the command line's FILE.

function openInput() {
  document.body.classList.add('input-open');
  $('capture-text').focus();
}

function closeInput() { document.body.classList.remove('input-open'); }

function textCapture(text, name) {
  const body = new TextEncoder().encode(text);
  return { body, name, size: body.length };
}

async function fileCapture(file) {
  const body = new Uint8Array(await file.arrayBuffer());
  return { body, name: file.name, size: body.length };
}

function foldText() {
  const text = $('capture-text').value;
  if (!text.trim()) { showAlert('Paste a capture first.'); return; }
  foldOpened(textCapture(text, 'pasted text'));
}

// A capture a person just opened, dropped or pasted: once shown, the frames list has the focus, where
// the keys work (j, k, /); they are a text field's own keys while the file input or the textarea has it.
async function foldOpened(capture) {
  await foldCapture(capture);
  if (state.capture === capture && state.view && document.body.dataset.mode === 'inspect') {
    $('event-list').focus({ preventScroll: true });
  }
}

// A file over the server's --max-size (from /api/meta) is refused here, at once, in the server's words,
// rather than after its upload. The server still checks every capture, a pasted one too.
function foldFile(file) {
  const limit = state.meta && state.meta.max_size;
  if (limit && file.size > limit) { failLoad(tooLargeMessage(file.size, limit)); return; }
  fileCapture(file).then(foldOpened);
}

// streamfold.web.limits.too_large_response's sentence, with streamfold._sizes.format_size's sizes
// (tests/fronts/test_web_page_reading.py holds the two to the same words).
function tooLargeMessage(size, limit) {
  let suggested = 1024 * 1024;
  while (suggested < Math.max(size + 1, 2 * limit)) suggested *= 2;
  return `The capture is ${formatSize(size)}; this server accepts at most ${formatSize(limit)} per request. ` +
    `Start it with a larger limit, for example: streamfold web --max-size ${formatSize(suggested, true)}`;
}

function formatSize(size, compact = false) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = size, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  if (compact) return `${Math.ceil(value)}${units[unit]}`;
  if (Number.isInteger(value)) return `${value} ${units[unit]}`;
  // Python rounds a tie (x.25 or x.75, the only ones a power of 1024 makes) to the even tenth; toFixed, up.
  const tie = Number.isInteger(value * 4) && !Number.isInteger(value * 2);
  return `${tie ? (2 * Math.round(value * 5) / 10).toFixed(1) : value.toFixed(1)} ${units[unit]}`;
}

function download(name, value) {
  const blob = new Blob([JSON.stringify(value, null, 2) + '\n'], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = h('a', { class: 'visually-hidden' });
  link.href = url;       // a blob: URL this page made, never stream data
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function baseName() {
  if (state.capture && state.capture.stored !== undefined) return `capture-${state.capture.stored}`;
  const name = state.capture ? state.capture.name : 'capture';
  return name === 'pasted text' ? 'capture' : name.replace(/\.[^.]*$/, '') || 'capture';
}

function setupInput() {
  $('paste-button').addEventListener('click', () => {
    if (document.body.classList.contains('input-open') && state.view) closeInput(); else openInput();
  });
  $('close-input').addEventListener('click', closeInput);
  $('fold-button').addEventListener('click', foldText);
  const textarea = $('capture-text');
  textarea.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); foldText(); }
  });
  textarea.addEventListener('paste', () => setTimeout(() => { if (textarea.value.trim()) foldText(); }, 0));
  $('file-input').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (file) foldFile(file);
  });
  for (const id of ['dialect-select', 'transport-select']) {
    $(id).addEventListener('change', () => { if (state.capture) foldCapture(state.capture); });
  }
  $('download-result').addEventListener('click', () => state.view && download(`${baseName()}.result.json`, state.view.result));
  $('download-export').addEventListener('click', () => state.view && state.view.export !== null && download(`${baseName()}.export.json`, state.view.export));
  // Pasting anywhere outside a text field folds the clipboard at once.
  document.addEventListener('paste', (event) => {
    if (isTyping(event.target) || document.body.dataset.mode !== 'inspect') return;
    const text = event.clipboardData && event.clipboardData.getData('text');
    if (text && text.trim()) { event.preventDefault(); $('capture-text').value = text; foldOpened(textCapture(text, 'pasted text')); }
  });
  // Drop a file anywhere (in diff mode, onto either side).
  const overlay = $('drop-overlay');
  let depth = 0;
  window.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    depth++;
    overlay.hidden = document.body.dataset.mode !== 'inspect';
  });
  window.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
  window.addEventListener('dragover', (event) => { if (hasFiles(event)) event.preventDefault(); });
  window.addEventListener('drop', async (event) => {
    depth = 0;
    overlay.hidden = true;
    if (!hasFiles(event)) return;
    event.preventDefault();
    const file = event.dataTransfer.files[0];
    if (!file) return;
    if (document.body.dataset.mode === 'diff') {
      const sideElement = event.target.closest && event.target.closest('.diff-side');
      const side = sideElement ? sideElement.dataset.side : (diffSides.left.capture ? 'right' : 'left');
      setDiffSide(side, await fileCapture(file));
    } else {
      foldFile(file);
    }
  });
}

const hasFiles = (event) => event.dataTransfer && Array.from(event.dataTransfer.types || []).includes('Files');
const isTyping = (target) => target && (target.closest('input, textarea, select, [contenteditable]') !== null);

function setupKeyboard() {
  document.addEventListener('keydown', (event) => {
    if (document.body.dataset.mode !== 'inspect' || !state.view) return;
    if (isTyping(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === '/') { event.preventDefault(); $('frame-search').focus(); return; }
    if ((event.key === 'Home' || event.key === 'End') && eventsView.order.length) {
      event.preventDefault();
      select(eventsView.order[event.key === 'Home' ? 0 : eventsView.order.length - 1], 'keyboard');
      return;
    }
    const step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[event.key];
    if (!step) return;
    const next = eventsView.neighbour(step);
    if (next >= 0) { event.preventDefault(); select(next, 'keyboard'); }
  });
  $('prev-frame').addEventListener('click', () => { const f = eventsView.neighbour(-1); if (f >= 0) select(f, 'keyboard'); });
  $('next-frame').addEventListener('click', () => { const f = eventsView.neighbour(1); if (f >= 0) select(f, 'keyboard'); });
}

// ---------------------------------------------------------------------------
// Diff: two captures, folded by the server, compared side by side.

const diffSides = { left: { capture: null }, right: { capture: null } };

function diffSideElement(side) { return document.querySelector(`.diff-side[data-side="${side}"]`); }

function setDiffSide(side, capture) {
  diffSides[side].capture = capture;
  const element = diffSideElement(side);
  element.querySelector('[data-role="source"]').textContent = `${capture.name} · ${formatBytes(capture.size)}`;
  const textarea = element.querySelector('[data-role="text"]');
  textarea.value = '';
  textarea.placeholder = `${capture.name} (${formatBytes(capture.size)}) is loaded; type or paste here to replace it`;
}

function setupDiff() {
  for (const side of ['left', 'right']) {
    const element = diffSideElement(side);
    const textarea = element.querySelector('[data-role="text"]');
    textarea.addEventListener('input', () => {
      diffSides[side].capture = textarea.value ? textCapture(textarea.value, 'pasted text') : null;
      element.querySelector('[data-role="source"]').textContent = textarea.value ? `pasted text · ${formatBytes(diffSides[side].capture.size)}` : 'nothing yet';
    });
    element.querySelector('[data-role="file"]').addEventListener('change', async (event) => {
      const file = event.target.files[0];
      event.target.value = '';
      if (file) setDiffSide(side, await fileCapture(file));
    });
  }
  diffSideElement('left').querySelector('[data-role="use-current"]').addEventListener('click', () => {
    if (state.capture) setDiffSide('left', state.capture);
    else showAlert('No capture is open in Inspect yet.');
  });
  $('compare-button').addEventListener('click', compare);
  const modes = { inspect: $('mode-inspect'), diff: $('mode-diff') };
  for (const [mode, button] of Object.entries(modes)) {
    button.addEventListener('click', () => {
      document.body.dataset.mode = mode;
      for (const [other, otherButton] of Object.entries(modes)) otherButton.setAttribute('aria-selected', String(other === mode));
      if (mode === 'diff' && !diffSides.left.capture && state.capture) setDiffSide('left', state.capture);
      if (mode === 'inspect') { rawView.reflow(true); eventsView.refresh(); timeline.draw(); }
    });
  }
}

async function compare() {
  const left = diffSides.left.capture, right = diffSides.right.capture;
  if (!left || !right) { showAlert('Give both captures: paste, drop or open one on each side.'); return; }
  showAlert(null);
  try {
    await Promise.all([withBody(left), withBody(right)]);
  } catch (error) {
    showAlert(error.message);
    return;
  }
  const output = $('diff-output');
  output.replaceChildren(h('p', { class: 'muted' }, h('span', { class: 'spinner', 'aria-hidden': true }), 'Folding and comparing…'));
  const body = new Uint8Array(left.size + right.size);
  body.set(left.body, 0);
  body.set(right.body, left.size);
  const query = new URLSearchParams(foldQuery());
  query.set('left_size', String(left.size));
  let response;
  try {
    response = await fetch(`/api/diff?${query}`, { method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' } });
  } catch (error) {
    output.replaceChildren();
    showAlert(`The local streamfold server did not answer (${error.message}).`);
    return;
  }
  if (!response.ok) { output.replaceChildren(); showAlert(await errorMessage(response)); return; }
  renderDiff(await response.json(), left, right);
}

// A changed text: the shared start and end shortened to some context, the differing tokens of the
// middle marked (`marks`: [start, end] spans of whole words, from the server; zero-width: the other
// side has something here).
const DIFF_CONTEXT = 240;
function diffText(text, prefix, suffix, marks) {
  const mark = marks !== null;
  const cell = h('div', { class: 'diff-text' });
  if (text === null) { cell.append(h('span', { class: 'muted', text: '(none)' })); return cell; }
  if (!mark && text.length > 4 * DIFF_CONTEXT) {
    cell.append(...streamNodes(text.slice(0, 2 * DIFF_CONTEXT)),
      h('span', { class: 'elided', text: ` … ${formatCount(text.length - 2 * DIFF_CONTEXT)} more characters` }));
    return cell;
  }
  const middleEnd = Math.max(prefix, text.length - suffix);
  const head = text.slice(0, prefix);
  if (head.length > DIFF_CONTEXT) {
    cell.append(h('span', { class: 'elided', text: `… ${formatCount(head.length - DIFF_CONTEXT)} identical characters … ` }));
    cell.append(...streamNodes(head.slice(head.length - DIFF_CONTEXT)));
  } else cell.append(...streamNodes(head));
  if (mark) cell.append(...markedMiddle(text, prefix, middleEnd, marks));
  else cell.append(...streamNodes(text.slice(prefix, middleEnd)));
  const tail = text.slice(middleEnd);
  if (tail.length > DIFF_CONTEXT) {
    cell.append(...streamNodes(tail.slice(0, DIFF_CONTEXT)));
    cell.append(h('span', { class: 'elided', text: ` … ${formatCount(tail.length - DIFF_CONTEXT)} identical characters …` }));
  } else cell.append(...streamNodes(tail));
  return cell;
}

function markedMiddle(text, from, to, marks) {
  const parts = [];
  let at = from;
  for (const [start, end] of marks.length ? marks : [[from, to]]) {
    if (start > at) parts.push(...streamNodes(text.slice(at, start)));
    parts.push(end > start ? h('mark', { class: 'diff-mark' }, streamNodes(text.slice(start, end)))
      : h('mark', { class: 'diff-mark empty', title: 'nothing here on this side' }));
    at = Math.max(at, end);
  }
  if (to > at) parts.push(...streamNodes(text.slice(at, to)));
  return parts;
}

function renderDiff(diff, left, right) {
  const output = $('diff-output');
  const changed = diff.fields.filter((field) => !field.same).length;
  const table = h('table', { class: 'diff-table' },
    h('thead', null, h('tr', null, h('th', { text: 'field' }), h('th', { text: 'left' }), h('th', { text: 'right' }))));
  const tbody = h('tbody');
  let section = null;
  for (const field of diff.fields) {
    if (field.section !== section) {
      section = field.section;
      tbody.append(h('tr', { class: 'diff-section' }, h('th', { colspan: 3, text: section })));
    }
    tbody.append(h('tr', { class: field.same ? 'same' : 'changed' },
      h('th', { class: 'diff-label' }, field.label, field.same ? null : h('span', { class: 'badge warn small', text: 'differs' }),
        field.note ? h('div', { class: 'muted', text: field.note }) : null),
      h('td', null, diffText(field.left, field.prefix, field.suffix, field.same ? null : (field.marks || {}).left || [])),
      h('td', null, diffText(field.right, field.prefix, field.suffix, field.same ? null : (field.marks || {}).right || []))));
  }
  table.append(tbody);
  const onlyChanges = h('input', { type: 'checkbox' });
  onlyChanges.addEventListener('change', () => table.classList.toggle('only-changes', onlyChanges.checked));
  const parts = [
    h('div', { class: 'diff-summary' },
      h('span', { class: `badge ${changed ? 'warn' : 'ok'}`,
        text: changed ? `${plural(changed, 'field')} differ${changed === 1 ? 's' : ''}` : 'same result' }),
      h('span', { text: `${left.name} (${formatBytes(diff.left.input_size)})` }),
      h('span', { class: 'muted', text: 'vs' }),
      h('span', { text: `${right.name} (${formatBytes(diff.right.input_size)})` }),
      changed ? h('label', { class: 'toggle' }, onlyChanges, 'hide identical fields') : null),
    table,
  ];
  const frames = diff.frames;
  parts.push(h('h3', { class: 'section-title', text: 'Frames' }));
  const response = diff.left.response ? 'left' : diff.right.response ? 'right' : null;
  parts.push(h('p', { class: 'muted', text: frames.compared === false
    ? `Frames are not compared: the ${response} side is a non-streaming response (no frames); only the fields a response tells are compared above.`
    : frames.hunks_total
    ? `${plural(frames.left_total, 'frame')} on the left, ${formatCount(frames.right_total)} on the right; ${plural(frames.hunks_total, 'run')} of frames differ (compared by event, data, id and comments).`
    : `The ${plural(frames.left_total, 'frame')} carry the same events, data, ids and comments on both sides.` }));
  const opLabel = { replace: 'changed', delete: 'only on the left', insert: 'only on the right' };
  for (const hunk of frames.hunks) {
    const range = ([a, b]) => (b - a === 0 ? 'none' : b - a === 1 ? `frame ${a}` : `frames ${a}–${b - 1}`);
    const column = (list, [a, b], transport) => h('div', { class: 'hunk-side' },
      list.map((frame) => h('div', { class: 'hunk-frame' },
        h('div', { class: 'hunk-frame-head' }, h('span', { class: 'ev-index', text: frame.index }),
          h('span', { class: `badge kind-${frame.kind}`, text: frame.kind }),
          h('span', { class: 'muted', text: isBinary(transport) ? `byte ${formatCount(frame.offset)}` : `line ${frame.line}` })),
        h('pre', { class: 'code' }, streamNodes(frame.raw + (frame.raw_truncated ? '…' : ''))))),
      b - a > list.length ? h('p', { class: 'muted', text: `and ${plural(b - a - list.length, 'more frame')}` }) : null);
    parts.push(h('div', { class: `hunk op-${hunk.op}` },
      h('div', { class: 'hunk-head' }, h('span', { class: 'badge warn', text: opLabel[hunk.op] || hunk.op }),
        h('span', { text: `left: ${range(hunk.left)}` }), h('span', { class: 'muted', text: '↔' }), h('span', { text: `right: ${range(hunk.right)}` })),
      h('div', { class: 'hunk-sides' }, column(hunk.left_frames, hunk.left, diff.left.result.transport),
        column(hunk.right_frames, hunk.right, diff.right.result.transport))));
  }
  if (frames.hunks_total > frames.hunks.length) {
    parts.push(h('p', { class: 'muted', text: `… and ${plural(frames.hunks_total - frames.hunks.length, 'more run')} not listed.` }));
  }
  setChildren(output, parts);
}

// ---------------------------------------------------------------------------
// A capture store (streamfold web --db PATH): its captures, newest first, polled every second
// (GET /api/captures answers "unchanged" when its version is the one the page has), so the list
// fills in while a recorder writes. Opening one folds it on the server with the store's arrival
// times (GET /api/captures/ID/fold); the URL keeps it (#capture=ID), so a reload reopens it.
// Everything in a row came from a recorded request or its reply: text nodes only.

const CAPTURES_POLL_MS = 1000;
const CAPTURES_HIDDEN_POLL_MS = 5000;

const storeList = {
  rows: [],
  version: '',
  active: null,       // the id the keyboard is on
  openLatest: false,  // FILE was PATH.sqlite: open the newest once the list is here
  refolded: null,     // the capture folded again when it ended (once: a failing fold is not retried)
  timer: 0,
  busy: false,
  polls: 0,
};

function hashCapture() {
  const match = /^#capture=(\d{1,15})$/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

function storedName(stored) {
  return `#${stored.id} ${stored.method} ${urlPath(stored.url)}`;
}

// The path and query of a recorded URL as it was recorded (the host is the recorder's one upstream;
// the URL parser would re-encode the rest). Only ever shown as text.
function urlPath(url) {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return path || url;
}

function clockTime(seconds) {
  const at = new Date(seconds * 1000);
  const two = (n) => String(n).padStart(2, '0');
  const time = `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
  if (at.toDateString() === new Date().toDateString()) return time;
  return `${two(at.getMonth() + 1)}-${two(at.getDate())} ${time}`;
}

// How the exchange ended, as a badge: in flight, complete, incomplete (and why).
const CUT_OUTCOMES = {
  'client-cut': 'the client closed the connection before the reply ended',
  'upstream-cut': 'the upstream closed the connection before the reply ended',
};
function outcomeBadge(row) {
  if (row.in_flight) return h('span', { class: 'badge live', text: 'in flight', title: 'the reply is still arriving' });
  if (row.outcome === 'failed') {
    return h('span', { class: 'badge sev-error', text: 'failed', title: `the exchange failed: ${row.error || 'no reason recorded'}` });
  }
  if (CUT_OUTCOMES[row.outcome]) return h('span', { class: 'badge warn', text: 'incomplete', title: CUT_OUTCOMES[row.outcome] });
  if (row.complete === false) {
    return h('span', { class: 'badge warn', text: 'incomplete', title: 'no terminal frame, or the server sent an error' });
  }
  return h('span', { class: 'badge ok', text: 'complete', title: 'the terminal frame arrived and the server sent no error' });
}

function captureRow(row) {
  const path = urlPath(row.url);
  const findings = row.findings.length;
  const ended = row.in_flight ? 'in flight' : row.outcome === 'complete' ? (row.complete ? 'complete' : 'incomplete') : row.outcome;
  const label = [`capture ${row.id}`, clockTime(row.started_at), `${row.method} ${path}`,
    row.status === null ? 'no status yet' : `status ${row.status}`, row.dialect || 'dialect not known yet', ended,
    row.ttft === null ? 'no TTFT' : `TTFT ${formatSeconds(row.ttft)}`,
    row.frames === null ? '' : plural(row.frames, 'frame'), plural(findings, 'finding')].filter(Boolean).join(', ');
  const option = h('div', { class: 'capture-row', role: 'option', 'aria-selected': 'false', 'aria-label': label,
    dataset: { id: String(row.id) } },
  h('span', { class: 'c-id', text: `#${row.id}` }),
  h('span', { class: 'c-time', text: clockTime(row.started_at), title: `${row.started} (UTC)` }),
  h('span', { class: 'c-method', text: row.method }),
  h('span', { class: 'c-path', title: row.url }, streamNodes(path)),
  h('span', { class: `c-num${row.status >= 400 ? ' error-text' : ''}`, text: row.status === null ? '—' : String(row.status) }),
  h('span', { class: 'c-dialect', text: row.dialect || '—' }),
  h('span', { class: 'c-state' }, outcomeBadge(row)),
  h('span', { class: 'c-num', text: row.ttft === null ? '—' : formatSeconds(row.ttft), title: 'TTFT, time to first text: from the request to the first frame that added reply text' }),
  h('span', { class: 'c-num', text: row.frames === null ? '—' : formatCount(row.frames),
    title: row.in_flight ? `${formatBytes(row.bytes)} in ${plural(row.reads, 'read')} so far` : `${formatBytes(row.bytes)} in ${plural(row.reads, 'read')}` }),
  h('span', { class: `c-num${findings ? ' warn-text' : ''}`, text: String(findings), title: row.findings.join(', ') || 'no findings' }));
  option.id = `capture-option-${Number(row.id)}`;
  return option;
}

function openCaptureId() {
  return state.capture && state.capture.stored !== undefined ? state.capture.stored : null;
}

function renderCaptures(answer) {
  const list = $('captures-list');
  const note = $('captures-note');
  $('captures-store').textContent = answer.store;
  if (answer.error) {
    storeList.rows = [];
    list.replaceChildren();
    note.textContent = answer.missing
      ? `${answer.error} yet. The list fills in once a recorder writes it (streamfold record --db ${answer.store} …).`
      : answer.error;
    note.classList.toggle('error', !answer.missing);
    note.hidden = false;
    $('captures-status').textContent = '';
    return;
  }
  storeList.rows = answer.captures;
  const rows = answer.captures;
  note.hidden = rows.length > 0;
  note.classList.remove('error');
  note.textContent = rows.length ? '' : 'No captures in this store yet: they appear here as a recorder writes them.';
  const live = rows.filter((row) => row.in_flight).length;
  $('captures-status').textContent = `${answer.more ? `newest ${formatCount(rows.length)}` : plural(rows.length, 'capture')}`
    + `${live ? ` · ${formatCount(live)} in flight` : ''}`;
  list.replaceChildren(...rows.map(captureRow));
  if (storeList.active === null || !rows.some((row) => row.id === storeList.active)) {
    storeList.active = openCaptureId() ?? (rows.length ? rows[0].id : null);
  }
  markCaptures();
}

// The open capture is aria-selected; the keyboard's is the list's active descendant.
function markCaptures() {
  const list = $('captures-list');
  const open = openCaptureId();
  for (const option of list.children) {
    const id = Number(option.dataset.id);
    option.setAttribute('aria-selected', String(id === open));
    option.classList.toggle('active', id === storeList.active);
  }
  const active = storeList.active === null ? null : document.getElementById(`capture-option-${storeList.active}`);
  if (active) list.setAttribute('aria-activedescendant', active.id);
  else list.removeAttribute('aria-activedescendant');
}

async function pollCaptures() {
  // One poll at a time: a wake-up (the tab shown again) during one must not start a second timer chain.
  if (storeList.busy) return;
  storeList.busy = true;
  clearTimeout(storeList.timer);
  let answer = null;
  try {
    const response = await fetch(`/api/captures?since=${encodeURIComponent(storeList.version)}`);
    answer = await response.json();
  } catch (error) {
    $('captures-note').textContent = `The local streamfold server did not answer (${error.message}). Is it still running?`;
    $('captures-note').classList.add('error');
    $('captures-note').hidden = false;
    storeList.version = '';
  } finally {
    storeList.busy = false;
  }
  if (answer && typeof answer.version === 'string' && !answer.unchanged) {
    storeList.version = answer.version;
    renderCaptures(answer);
  } else if (answer && !answer.unchanged && typeof answer.error === 'string') {
    showAlert(answer.error);
  }
  afterCaptures(); // each time: a fold that was under way when the list changed has ended since
  storeList.polls++;
  document.body.dataset.capturesPolls = String(storeList.polls);
  document.body.dataset.capturesCount = String(storeList.rows.length);
  storeList.timer = setTimeout(pollCaptures, document.hidden ? CAPTURES_HIDDEN_POLL_MS : CAPTURES_POLL_MS);
}

// What the list may set off: the newest opened (FILE was the store), the open capture folded again
// once it has ended (it was in flight: what had arrived was shown), once per capture.
function afterCaptures() {
  if (storeList.openLatest && storeList.rows.length) {
    storeList.openLatest = false;
    if (openCaptureId() === null && !state.capture) chooseStored(storeList.rows[0].id, true);
  }
  const open = openCaptureId();
  const shown = state.view && state.view.stored;
  if (open !== null && shown && shown.id === open && shown.in_flight && document.body.dataset.state !== 'loading') {
    const row = storeList.rows.find((candidate) => candidate.id === open);
    if (row && !row.in_flight && storeList.refolded !== open) {
      storeList.refolded = open;
      foldCapture(state.capture);
    }
  }
}

// Open a stored capture through the URL (#capture=ID): the hash change opens it, and a reload or Back
// reopens what the URL says. `replace`: without a new history entry.
function chooseStored(id, replace = false) {
  storeList.active = id;
  if (hashCapture() === id) { openStored(id); return; }
  if (replace) { history.replaceState(null, '', `#capture=${id}`); openStored(id); return; }
  location.hash = `capture=${id}`;
}

function openStored(id) {
  const row = storeList.rows.find((candidate) => candidate.id === id);
  const name = row ? storedName({ id, method: row.method, url: row.url }) : `capture #${id}`;
  foldCapture({ stored: id, name, size: row ? row.bytes : 0 });
}

// A capture that is not a stored one was opened (pasted, dropped): the URL no longer names one.
function noteOpenCapture(capture) {
  if (!state.meta || !state.meta.store) return;
  if (capture.stored === undefined && hashCapture() !== null) history.replaceState(null, '', location.pathname + location.search);
  if (capture.stored !== undefined) storeList.active = capture.stored;
  markCaptures();
}

// The diff posts bytes: a stored capture's body is asked for once, when it is compared.
async function withBody(capture) {
  if (capture.body || capture.stored === undefined) return;
  const response = await fetch(`/api/captures/${capture.stored}/body`);
  if (!response.ok) throw new Error(await errorMessage(response));
  capture.body = new Uint8Array(await response.arrayBuffer());
  capture.size = capture.body.length;
}

// The summary bar's word on a stored exchange: its HTTP status, and when it is still in flight, that
// only what had arrived is shown (folded again by itself once it ends, or now with Reload).
function storedSummary(stored) {
  const status = h('span', { class: stored.status >= 400 ? 'error-text' : 'muted',
    text: stored.status === null ? 'no HTTP status yet' : `HTTP ${stored.status}` });
  if (!stored.in_flight) return status;
  return h('span', { class: 'stored-live' }, status, ' ',
    h('span', { class: 'badge live', text: 'in flight', title: `showing the ${formatBytes(stored.bytes)} read so far` }), ' ',
    h('button', { type: 'button', class: 'link', text: 'Reload', title: 'Fold what has arrived by now',
      onclick: () => state.capture && foldCapture(state.capture) }));
}

function moveActive(step) {
  const rows = storeList.rows;
  if (!rows.length) return;
  const at = rows.findIndex((row) => row.id === storeList.active);
  const next = step === Infinity ? rows.length - 1 : step === -Infinity ? 0 : Math.max(0, Math.min(rows.length - 1, at + step));
  storeList.active = rows[next].id;
  markCaptures();
  const option = document.getElementById(`capture-option-${storeList.active}`);
  if (option) option.scrollIntoView({ block: 'nearest' });
}

function setupCaptures(store) {
  document.body.classList.add('has-store');
  $('captures-panel').hidden = false;
  $('captures-store').textContent = store.name;
  if (!state.view) renderSummary();
  const list = $('captures-list');
  list.addEventListener('click', (event) => {
    const option = event.target.closest('.capture-row');
    if (option) chooseStored(Number(option.dataset.id));
  });
  // Arrows move, Enter or Space opens; the page's own keys (j, k, /) stay the frames'.
  list.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const step = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10, Home: -Infinity, End: Infinity }[event.key];
    if (step) { event.preventDefault(); event.stopPropagation(); moveActive(step); return; }
    if ((event.key === 'Enter' || event.key === ' ') && storeList.active !== null) {
      event.preventDefault();
      event.stopPropagation();
      chooseStored(storeList.active);
    }
  });
  $('captures-toggle').addEventListener('click', () => {
    const collapsed = document.body.classList.toggle('captures-collapsed');
    $('captures-toggle').setAttribute('aria-expanded', String(!collapsed));
    $('captures-toggle').textContent = collapsed ? 'Show' : 'Hide';
    if (document.body.dataset.mode === 'inspect' && state.view) { rawView.reflow(true); eventsView.refresh(); timeline.draw(); }
  });
  window.addEventListener('hashchange', () => {
    const id = hashCapture();
    if (id !== null && id !== openCaptureId()) openStored(id);
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) pollCaptures(); });
  pollCaptures();
}

// ---------------------------------------------------------------------------
// Start.

let rawView, eventsView, timeline;

async function start() {
  rawView = new RawView($('raw-list'));
  eventsView = new EventsView($('event-list'), $('frame-search'), document.querySelector('.filters'), $('events-count'));
  timeline = new Timeline($('timeline'), $('timeline-tip'), $('timeline-legend'));
  setupInput();
  setupKeyboard();
  setupResultPointer();
  setupDiff();
  setupEntryPicker();
  renderSummary();
  renderJsonView();
  $('result-view').replaceChildren(h('p', { class: 'empty-note', text: 'The merged reply appears here.' }));
  try {
    const response = await fetch('/api/meta');
    state.meta = await response.json();
  } catch (error) {
    showAlert(`The local streamfold server did not answer (${error.message}).`);
    return;
  }
  for (const [id, names] of [['dialect-select', state.meta.dialects], ['transport-select', state.meta.transports]]) {
    $(id).append(...names.map((name) => h('option', { text: name })));
  }
  const store = state.meta.store;
  if (store) {
    setupCaptures(store);
    // The URL's capture first (a reload), then the one the command line named.
    const named = hashCapture() ?? (typeof store.open === 'number' ? store.open : null);
    if (named !== null) { chooseStored(named, true); return; }
    storeList.openLatest = store.open === 'latest';
  }
  const initial = state.meta.capture;
  if (initial && !initial.error) {
    const response = await fetch('/api/capture');
    if (response.ok) {
      const body = new Uint8Array(await response.arrayBuffer());
      foldOpened({ body, name: initial.name, size: body.length });
      return;
    }
    showAlert(await errorMessage(response));
  } else if (initial && initial.error) {
    showAlert(`Cannot read ${initial.name}: ${initial.error}`);
  }
  if (store) $('captures-list').focus();
  else $('capture-text').focus();
}

document.addEventListener('DOMContentLoaded', start);
}());
