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
 *   worker -> page  {status, ms, error?, restored?}  'runtime', 'packages', 'import', 'ready'; 'failed'
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

// Python as it stands once started (Pyodide's memory snapshot), kept in this browser's Cache Storage under
// the build's id: a later visit, or a fresh worker after Cancel, restores it instead of starting Python
// (most of a warm start). Kept before anything is installed: a snapshot cannot hold a loaded wasm library
// (msgspec's), and streamfold, imported after msgspec, must see it. A browser that keeps no caches (or
// refuses this one) starts Python each time.
const SNAPSHOTS = 'streamfold-page-python';

async function keptSnapshot(key) {
  try {
    const kept = await (await caches.open(SNAPSHOTS)).match(key);
    return kept ? new Uint8Array(await kept.arrayBuffer()) : null;
  } catch (_) {
    return null;
  }
}

async function keepSnapshot(key, snapshot) {
  try {
    await caches.delete(SNAPSHOTS);  // an earlier build's
    await (await caches.open(SNAPSHOTS)).put(key, new Response(snapshot));
  } catch (_) { /* no room, or no caches here: the next start starts Python */ }
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
  const key = `${RUNTIME}python-${build}`;
  const snapshot = await keptSnapshot(key);
  if (snapshot) {
    try {
      return [await Promise.race([loadPyodide({ indexURL: RUNTIME, _loadSnapshot: snapshot }), failure]), true];
    } catch (error) {
      console.warn(`streamfold: the kept Python did not restore (${error.message}); starting it anew`);
    }
  }
  const pyodide = await Promise.race([loadPyodide({ indexURL: RUNTIME, _makeSnapshot: true }), failure]);
  const made = pyodide.makeMemorySnapshot();
  // Written once the first answers are out: 30 MB to the browser's disk must not delay the first fold.
  ready.then(() => setTimeout(() => keepSnapshot(key, made), 0), () => {});
  return [pyodide, false];
}

async function load() {
  say('runtime');
  // What the page's build put beside the runtime (runtime/files.json): its id, the wheel's and the archive's names.
  const files = await fetched(`${RUNTIME}files.json`, (response) => response.json());
  const archive = fetched(RUNTIME + files.streamfold, (response) => response.arrayBuffer());
  archive.catch(() => {});  // awaited below; a failure before then is said there
  const [pyodide, restored] = await startPython(files.build, runtimeFailure());
  clearTimeout(deadline);
  say('packages');
  await pyodide.loadPackage(RUNTIME + files.msgspec, { messageCallback: () => {} });
  pyodide.unpackArchive(await archive, 'zip', { extractDir: SITE_PACKAGES });
  say('import');
  const answer = pyodide.pyimport('streamfold.web.page.adapter').answer;
  say('ready', { restored });
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
