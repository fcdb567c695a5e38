import { $, h, MARKED, setChildren, streamNodes } from './dom.js';
import { debounce, formatBytes, isBinary } from './format.js';
import { select } from './selection.js';
import { state } from './state.js';
import { VirtualList } from './virtual-list.js';

// Stage 1: raw bytes. Each frame is a block of display rows: the bytes before
// it that belong to no frame (extra blank lines, a JSON array's commas), then
// its own lines, each wrapped at the column width. Line ends are shown as
// glyphs (↵ LF, ␍ CR, ␍↵ CRLF), so a lost blank line or a stray CR is visible.

const RAW_ROW_HEIGHT = 18;
// ↵ is in the default fonts; the Control Pictures (␍, ␡, ␀…) are not, so a CR is a small "CR" badge.
const LINE_END_GLYPH = { '\n': '↵', '\r': 'CR', '\r\n': 'CR↵', '': '' };
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
export function inputSize(capture) {
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

export class RawView {
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
