/*
 * The page's one way to the Python core. Every operation that needs the core goes through `backend`,
 * the object this module exports; no other module talks to a server. Today it is `httpBackend`: the
 * local server's /api endpoints (streamfold/web/app.py, an adapter over streamfold/web/api.py's
 * PageApi). A second backend, a Web Worker running the same core under Pyodide and calling PageApi
 * itself, implements the same methods and is put in place with `useBackend` before the page starts.
 *
 * Values are the JSON of PageApi's answers; bytes are Uint8Array. Every method returns a Promise; a
 * refusal or a failure rejects with an Error whose message is a sentence to show as it is (the core's
 * own sentence when it refused the input).
 *
 *   meta()                         PageApi.meta(): {version, dialects, transports, max_size,
 *                                  capture: the command line's FILE {name, size | error} or null,
 *                                  store: {name, open} or null, not_a_stream: finding codes}
 *   openedFile()                   the command line's FILE: Uint8Array
 *   fold(capture, options, onProgress)
 *                                  the fold view without its rows (PageApi.fold with frames="range";
 *                                  PageApi.stored_fold for a stored capture): rows come from `frames`.
 *                                  capture: {body: Uint8Array, size}, {stored: id} or {fleet: capture_id}
 *                                  (PageApi.fleet_fold: opened again from where the fleet says); options:
 *                                  {dialect, transport, entry}, each null to detect (the entry: a HAR's,
 *                                  a cassette's or a trace log's, as text); onProgress(stage, done,
 *                                  total): stage 'upload' (bytes sent), then 'fold' (bytes folded)
 *   frames(foldId, start, count)   PageApi.frames: {fold_id, start, total, frames: rows}
 *   diff(left, right, options)     PageApi.diff of two captures' bytes: {fields, frames, left, right, ...}
 *   captures(since)                PageApi.captures: the store's list, newest first, or {unchanged: true}
 *                                  when its version is `since`; an unusable store is an answer with
 *                                  "error", not a rejection
 *   storedBody(id)                 a stored capture's stream body (inflated): Uint8Array
 *   fleet()                        PageApi.fleet: {fleet, captures, filters: {name: [[value, count]]}, reports}
 *   fleetCaptures(filters, offset, limit)
 *                                  PageApi.fleet_captures: {total, offset, limit, rows, outcomes, latency};
 *                                  filters: {dialect, model, outcome, finding}, each null for all
 *   fleetBody(id)                  a fleet capture's stream body, read again: Uint8Array
 *
 * A backend may also have (the static page's, js/worker-backend.js, has):
 *   openStore(body, name)          a capture store's bytes (a dropped .sqlite), listed from then on by
 *                                  captures(): {name, open}, as meta's store
 *   tooLargeMessage(size, limit)   the sentence refusing a file over meta's max_size, before it is read
 */

const NOT_ANSWERING = 'The local streamfold server did not answer';

// The server's own sentence from an error answer's text ({"error": ...}), else its status.
function errorSentence(status, statusText, text) {
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === 'string') return body.error;
  } catch (_) { /* not JSON: the status says it */ }
  return `The server answered ${status} ${statusText}`;
}

// fetch, with a failure to answer said as such and (unless `anyStatus`) an error answer as its sentence.
async function request(url, { init, anyStatus = false } = {}) {
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new Error(`${NOT_ANSWERING} (${error.message}).`, { cause: error });
  }
  if (!response.ok && !anyStatus) {
    throw new Error(errorSentence(response.status, response.statusText, await response.text()));
  }
  return response;
}

async function bytesOf(response) { return new Uint8Array(await response.arrayBuffer()); }

function queryOf(options, more = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...options, ...more })) {
    if (value !== null && value !== undefined && value !== '') query.set(name, String(value));
  }
  return query.toString();
}

// A fold by range answers NDJSON as it goes: {"progress", "total"} lines, then {"view"} or {"error"}.
function foldByRange(capture, options, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    // A stored capture, or a fleet's, is folded where it is (its arrival times are the store's): nothing to send.
    const stored = capture.stored !== undefined || capture.fleet !== undefined;
    const query = queryOf(options, { frames: 'range' });
    if (capture.fleet !== undefined) xhr.open('GET', `/api/fleet/fold?${queryOf(options, { frames: 'range', id: capture.fleet })}`);
    else if (stored) xhr.open('GET', `/api/captures/${capture.stored}/fold?${query}`);
    else xhr.open('POST', `/api/fold?${query}`);
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
        reject(new Error(errorSentence(xhr.status, xhr.statusText, xhr.responseText)));
        return;
      }
      try { readLines(); } catch (error) { reject(new Error(`The server's answer did not parse (${error.message})`)); return; }
      if (last && last.view) resolve(last.view);
      else reject(new Error(last && last.error ? last.error : 'The server\'s answer ended before the result'));
    };
    xhr.onerror = () => reject(new Error(`${NOT_ANSWERING}. Is it still running?`));
    xhr.send(stored ? null : capture.body);
  });
}

export const httpBackend = Object.freeze({
  async meta() { return (await request('/api/meta')).json(); },

  async openedFile() { return bytesOf(await request('/api/capture')); },

  fold: foldByRange,

  async frames(foldId, start, count) {
    return (await request(`/api/frames?${queryOf({ fold: foldId, start, count })}`)).json();
  },

  async diff(left, right, options) {
    const body = new Uint8Array(left.length + right.length);
    body.set(left, 0);
    body.set(right, left.length);
    const init = { method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' } };
    return (await request(`/api/diff?${queryOf(options, { left_size: left.length })}`, { init })).json();
  },

  async captures(since) {
    const response = await request(`/api/captures?${queryOf({ since })}`, { anyStatus: true });
    try {
      return await response.json();
    } catch (error) {
      throw new Error(`${NOT_ANSWERING} (${error.message}).`, { cause: error });
    }
  },

  async storedBody(id) { return bytesOf(await request(`/api/captures/${id}/body`)); },

  async fleet() { return (await request('/api/fleet')).json(); },

  async fleetCaptures(filters, offset, limit) {
    return (await request(`/api/fleet/captures?${queryOf(filters, { offset, limit })}`)).json();
  },

  async fleetBody(id) { return bytesOf(await request(`/api/fleet/body?${queryOf({ id })}`)); },
});

export let backend = httpBackend;

// Another implementation of the methods above (a Web Worker's), set before the page starts.
export function useBackend(other) { backend = other; }
