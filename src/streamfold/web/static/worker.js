/*
 * The static page's Web Worker (`streamfold page build`): streamfold's Python under Pyodide, answering
 * the page's backend (js/worker-backend.js) through streamfold/web/page/adapter.py, which calls
 * PageApi as the local server does. Nothing here computes: it loads, then passes messages.
 *
 * It starts loading at once: the runtime (pyodide.asm.wasm, the standard library), then msgspec's
 * wheel and streamfold's archive (the archive fetched while the runtime starts). Each step is told as
 * it begins.
 *
 *   page -> worker  {id, method, args, body}        body: a capture's bytes (Uint8Array) or null
 *   worker -> page  {status, ms, error?, ...}        'runtime', 'packages', 'import', 'ready' (restored,
 *                                                   compiled: whether what was kept was used); 'failed';
 *                                                   'kept' (what a later start uses is written)
 *                   {id, progress: [done, total]}   a fold's bytes folded so far
 *                   {id, kind, value}               kind 'json': the answer; 'bytes': a Uint8Array
 *                                                   (transferred, not copied); 'error': a sentence
 */
import { loadPyodide } from '../runtime/pyodide.mjs';

const RUNTIME = new URL('../runtime/', import.meta.url).href;
const SITE_PACKAGES = '/lib/python3.14/site-packages';
const started = performance.now();

function say(status, more = {}) { postMessage({ status, ms: Math.round(performance.now() - started), ...more }); }

async function fetched(url, parse) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status} ${response.statusText}`);
  return parse(response);
}

// What this worker keeps in the browser's Cache Storage, under the build's id, for its later starts (the
// next visit, or a fresh worker after Cancel):
//   python-BUILD    Python as it stands once started (Pyodide's memory snapshot), restored instead of
//                   starting Python. Taken before anything is installed: a snapshot cannot hold a loaded
//                   wasm library (msgspec's), and streamfold, imported after msgspec, must see it.
//   bytecode-BUILD  streamfold's modules compiled (streamfold/web/page/bytecode.py), unpacked beside
//                   their sources so that importing them compiles nothing.
// Both are written once the first answers are out. A browser that keeps no caches (or refuses these)
// starts Python, and compiles streamfold, each time.
const KEPT = 'streamfold-page-python';

async function kept(name) {
  try {
    const found = await (await caches.open(KEPT)).match(RUNTIME + name);
    return found ? new Uint8Array(await found.arrayBuffer()) : null;
  } catch (_) {
    return null;
  }
}

async function keep(name, bytes, build) {
  try {
    const cache = await caches.open(KEPT);
    for (const request of await cache.keys()) {
      if (!request.url.endsWith(build)) await cache.delete(request);  // an earlier build's
    }
    await cache.put(RUNTIME + name, new Response(bytes));
  } catch (_) { /* no room, or no caches here: the next start does without */ }
}

// Jobs run one after the other once the first answers are out (the snapshot's write first: it is ready).
let later = Promise.resolve();
function afterFirstAnswers(work) {
  later = later.then(() => ready).then(() => new Promise((resolve) => setTimeout(resolve, 0))).then(work)
    .catch(() => {}).then(() => say('kept'));
}

// Pyodide waits forever when its WebAssembly cannot be had (it logs, and its promise never settles): a
// missing file is found by asking for it beside, anything else by a deadline, so that no call of the page
// waits on a runtime that will not come.
const START_LIMIT_MS = 120_000;
let deadline = 0;

function runtimeFailure() {
  const missing = fetch(`${RUNTIME}pyodide.asm.wasm`, { method: 'HEAD' }).then((response) => {
    if (!response.ok) throw new Error(`runtime/pyodide.asm.wasm answered ${response.status} ${response.statusText}`);
    return new Promise(() => {});  // there: the deadline alone stands
  });
  const late = new Promise((_, reject) => {
    deadline = setTimeout(() => reject(new Error(`the runtime did not start in ${START_LIMIT_MS / 1000} s`)),
      START_LIMIT_MS);
  });
  return Promise.race([missing, late]);
}

async function startPython(build, failure) {
  const snapshot = await kept(`python-${build}`);
  if (snapshot) {
    try {
      return [await Promise.race([loadPyodide({ indexURL: RUNTIME, _loadSnapshot: snapshot }), failure]), true];
    } catch (error) {
      console.warn(`streamfold: the kept Python did not restore (${error.message}); starting it anew`);
    }
  }
  const pyodide = await Promise.race([loadPyodide({ indexURL: RUNTIME, _makeSnapshot: true }), failure]);
  const made = pyodide.makeMemorySnapshot();
  afterFirstAnswers(() => keep(`python-${build}`, made, build));
  return [pyodide, false];
}

async function load() {
  say('runtime');
  // What the page's build put beside the runtime (runtime/files.json): its id, the wheel's and the archive's names.
  const files = await fetched(`${RUNTIME}files.json`, (response) => response.json());
  const archive = fetched(RUNTIME + files.streamfold, (response) => response.arrayBuffer());
  archive.catch(() => {});  // awaited below; a failure before then is said there
  const bytecode = kept(`bytecode-${files.build}`);
  const [pyodide, restored] = await startPython(files.build, runtimeFailure());
  clearTimeout(deadline);
  say('packages');
  await pyodide.loadPackage(RUNTIME + files.msgspec, { messageCallback: () => {} });
  pyodide.unpackArchive(await archive, 'zip', { extractDir: SITE_PACKAGES });
  const compiled = await bytecode;
  if (compiled) pyodide.unpackArchive(compiled, 'zip', { extractDir: SITE_PACKAGES });
  say('import');
  const answer = pyodide.pyimport('streamfold.web.page.adapter').answer;
  say('ready', { restored, compiled: compiled !== null });
  if (!compiled) {
    afterFirstAnswers(() => {
      const made = pyodide.pyimport('streamfold.web.page.bytecode').compiled(SITE_PACKAGES);
      const bytes = made.toJs();
      made.destroy();
      return keep(`bytecode-${files.build}`, bytes, files.build);
    });
  }
  return answer;
}

const ready = load();
ready.catch((error) => say('failed', { error: String(error && error.message || error) }));

function reply(id, result) {
  const [kind, data] = result.toJs();
  result.destroy();
  if (kind === 'json') postMessage({ id, kind, value: JSON.parse(new TextDecoder().decode(data)) });
  else if (kind === 'bytes') postMessage({ id, kind, value: data }, [data.buffer]);
  else postMessage({ id, kind: 'error', value: new TextDecoder().decode(data) });
}

// One call at a time, in order: Python runs on this one thread anyway.
let queue = Promise.resolve();
onmessage = (event) => {
  const { id, method, args, body } = event.data;
  queue = queue.then(async () => {
    let answer;
    try {
      answer = await ready;
    } catch (error) {
      postMessage({ id, kind: 'error', value: `Python did not start in this page: ${error.message || error}` });
      return;
    }
    let last = 0;
    const progress = (done, total) => {
      const now = performance.now();
      if (now - last < 50) return;  // the page repaints at most this often anyway
      last = now;
      postMessage({ id, progress: [done, total] });
    };
    try {
      // JavaScript's null is Python's jsnull under Pyodide; undefined is None.
      reply(id, answer(method, args.map((value) => value ?? undefined), body ?? undefined, progress));
    } catch (error) {
      postMessage({ id, kind: 'error', value: `The page's Python failed: ${error.message || error}` });
    }
  });
};
