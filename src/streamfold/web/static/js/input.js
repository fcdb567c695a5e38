import { backend } from './backend.js';
import { showStore } from './captures.js';
import { diffSides, setDiffSide } from './diff.js';
import { $, h } from './dom.js';
import { failLoad, foldCapture, showAlert } from './load.js';
import { eventsView } from './panes.js';
import { select } from './selection.js';
import { state } from './state.js';

// Input: paste, drop, open, the command line's FILE.

function openInput() {
  document.body.classList.add('input-open');
  $('capture-text').focus();
}

export function closeInput() { document.body.classList.remove('input-open'); }

export function textCapture(text, name) {
  const body = new TextEncoder().encode(text);
  return { body, name, size: body.length };
}

export async function fileCapture(file) {
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
export async function foldOpened(capture) {
  await foldCapture(capture);
  if (state.capture === capture && state.view && document.body.dataset.mode === 'inspect') {
    $('event-list').focus({ preventScroll: true });
  }
}

// A file over the server's --max-size (backend.meta) is refused here, at once, in the server's words,
// rather than after its upload (on the static page, before it is read: its backend's words). The server
// still checks every capture, a pasted one too. A capture store dropped on a backend that opens one
// (the static page's) is listed, as `streamfold web --db` lists its store.
async function foldFile(file) {
  const meta = state.meta || await backend.meta().catch(() => null);
  const limit = meta && meta.max_size;
  if (limit && file.size > limit) {
    failLoad(backend.tooLargeMessage ? backend.tooLargeMessage(file.size, limit) : tooLargeMessage(file.size, limit));
    return;
  }
  const capture = await fileCapture(file);
  if (backend.openStore && isCaptureStore(capture.body)) {
    try {
      showStore(await backend.openStore(capture.body, capture.name));
    } catch (error) {
      failLoad(error.message);
    }
    return;
  }
  foldOpened(capture);
}

const SQLITE_HEADER = new TextEncoder().encode('SQLite format 3\0');
const isCaptureStore = (body) => body.length >= SQLITE_HEADER.length && SQLITE_HEADER.every((byte, i) => body[i] === byte);

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

export function setupInput() {
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
  // Drop a file anywhere (in diff mode, onto either side; in fleet mode, nowhere).
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
    } else if (document.body.dataset.mode === 'inspect') { // the fleet's view takes no file, as it shows no overlay
      foldFile(file);
    }
  });
}

const hasFiles = (event) => event.dataTransfer && Array.from(event.dataTransfer.types || []).includes('Files');
const isTyping = (target) => target && (target.closest('input, textarea, select, [contenteditable]') !== null);

export function setupKeyboard() {
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
