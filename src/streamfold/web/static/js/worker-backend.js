/*
 * The static page's backend (`streamfold page build`): the methods of backend.js answered by a Web
 * Worker (../worker.js) that runs streamfold's Python under Pyodide and calls PageApi, so nothing
 * leaves the browser tab. page.js puts it in place with useBackend before the page starts.
 *
 * The worker starts loading when this module is evaluated, before the page has drawn; the runtime's
 * steps are shown in the top bar (#runtime-status, and body[data-runtime] for scripts). A call made
 * before the runtime is ready waits for it and runs then. A fold or a diff running may be cancelled:
 * the worker is ended and a fresh one started (Python cannot be interrupted inside a worker), and
 * a capture store dropped before is opened again in it.
 *
 * What needs the streamfold program (the command line's FILE, a fleet) is refused with a sentence
 * saying so; a capture store is the one dropped on the page (openStore).
 */
import { $, h } from './dom.js';
import { formatBytes } from './format.js';

const STEPS = {
  runtime: 'starting the Python runtime (its WebAssembly, its standard library)',
  packages: 'installing msgspec and streamfold',
  import: 'importing streamfold',
};
const CANCELLED = 'Cancelled: Python was stopped mid-fold and is starting again in a fresh worker, '
  + 'with nothing of the last capture kept.';
const NO_SERVER = 'needs the streamfold program (pip install streamfold), which this static page runs without';

let worker = null;
let nextId = 1;
const pending = new Map();  // id -> {resolve, reject, onProgress, cancellable}
let store = null;           // the capture store dropped on the page: {body, name}, opened again after a restart
let metaAnswer = null;
let broken = null;          // why the worker's script failed, when it did

function statusElement() {
  let element = document.getElementById('runtime-status');
  if (!element) {
    const button = h('button', { type: 'button', hidden: true, text: 'Cancel', onclick: cancel,
      title: 'Stop this fold: Python starts again in a fresh worker' });
    button.id = 'cancel-fold';
    element = h('div', { class: 'runtime-status muted', role: 'status' }, h('span', { dataset: { role: 'text' } }), button);
    element.id = 'runtime-status';
    (document.querySelector('.topbar') || document.body).append(element);
  }
  return element;
}

function showStatus(stage, text) {
  document.body.dataset.runtime = stage;
  statusElement().querySelector('[data-role="text"]').textContent = text;
}

function showCancel() {
  const running = [...pending.values()].some((waiting) => waiting.cancellable);
  const button = $('cancel-fold');
  if (button) button.hidden = !running;
}

function onMessage(event) {
  const message = event.data;
  if (message.status) {
    if (message.status === 'ready') {
      const kept = message.restored ? ', restored as this browser kept it' : '';
      showStatus('ready', `Python ready in ${(message.ms / 1000).toFixed(1)} s${kept} · runs in this tab`);
    }
    else if (message.status === 'kept') document.body.dataset.runtimeKept = 'true';  // for scripts: a later start is quick
    else if (message.status === 'failed') showStatus('failed', `Python did not start: ${message.error}`);
    else showStatus(message.status, `Python: ${STEPS[message.status]}…`);
    return;
  }
  const waiting = pending.get(message.id);
  if (!waiting) return;
  if (message.progress) { if (waiting.onProgress) waiting.onProgress(...message.progress); return; }
  pending.delete(message.id);
  showCancel();
  if (message.kind === 'error') waiting.reject(new Error(message.value));
  else waiting.resolve(message.value);
}

// The worker's script itself failed (it did not load, or threw outside a call): every call waiting, and
// every later one, is told so rather than left waiting on a worker that will never answer.
function workerFailed(event) {
  broken = `Python did not start: ${event.message || 'the worker failed to load'}`;
  showStatus('failed', broken);
  const waiting = [...pending.values()];
  pending.clear();
  showCancel();
  for (const each of waiting) each.reject(new Error(broken));
}

function startWorker() {
  broken = null;
  worker = new Worker(new URL('../worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = onMessage;
  worker.onerror = workerFailed;
  showStatus('runtime', `Python: ${STEPS.runtime}…`);
  if (store) call('openStore', [store.name], store.body).catch(() => {});  // said by the list's own answer
}

function call(method, args, body = null, { onProgress = null, cancellable = false } = {}) {
  if (broken) return Promise.reject(new Error(broken));
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject, onProgress, cancellable });
    showCancel();
    worker.postMessage({ id, method, args, body });
  });
}

function cancel() {
  worker.terminate();
  const stopped = [...pending.values()];
  pending.clear();
  metaAnswer = null;
  startWorker();
  showCancel();
  for (const each of stopped) each.reject(new Error(CANCELLED));
}

function refused(what) { return Promise.reject(new Error(`${what} ${NO_SERVER}.`)); }

function tooLargeMessage(size, limit) {
  return `The capture is ${formatBytes(size)}; this page folds at most ${formatBytes(limit)} (a browser tab holds `
    + 'it several times over). Fold it with the streamfold program instead: streamfold show FILE, or streamfold web FILE.';
}

export const workerBackend = Object.freeze({
  meta() {
    metaAnswer = metaAnswer || call('meta', []);
    return metaAnswer;
  },

  openedFile() { return refused('Opening the command line\'s FILE'); },

  async fold(capture, options, onProgress) {
    const order = [options.dialect ?? null, options.transport ?? null, options.entry ?? null, options.lane ?? null];
    if (capture.fleet !== undefined) return refused('A fleet');
    if (capture.stored !== undefined) {
      return call('fold', [capture.stored, ...order], null, { cancellable: true, onProgress: (done, total) => onProgress('fold', done, total) });
    }
    const limit = (await workerBackend.meta()).max_size;
    if (capture.body.length > limit) throw new Error(tooLargeMessage(capture.body.length, limit));
    return call('fold', [null, ...order], capture.body,
      { cancellable: true, onProgress: (done, total) => onProgress('fold', done, total) });
  },

  frames(foldId, start, count) { return call('frames', [foldId, start, count]); },

  diff(left, right, options) {
    const body = new Uint8Array(left.length + right.length);
    body.set(left, 0);
    body.set(right, left.length);
    return call('diff', [left.length, options.dialect ?? null, options.transport ?? null], body, { cancellable: true });
  },

  captures(since) { return call('captures', [since ?? null]); },

  storedBody(id) { return call('storedBody', [id]); },

  fleet() { return refused('A fleet'); },
  fleetCaptures() { return refused('A fleet'); },
  fleetBody() { return refused('A fleet'); },

  tooLargeMessage,

  // A capture store dropped on the page: listed from now on ({name, open}, as meta's store).
  async openStore(body, name) {
    const opened = await call('openStore', [name], body);
    store = { body, name };
    return opened;
  },
});

startWorker();
