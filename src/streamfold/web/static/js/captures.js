import { backend } from './backend.js';
import { $, h, streamNodes } from './dom.js';
import { formatBytes, formatCount, plural, formatSeconds } from './format.js';
import { foldCapture, renderSummary, showAlert } from './load.js';
import { eventsView, rawView, timeline } from './panes.js';
import { state } from './state.js';

// A capture store (streamfold web --db PATH): its captures, newest first, polled every second
// (backend.captures answers "unchanged" when its version is the one the page has), so the list
// fills in while a recorder writes. Opening one folds it where it is stored, with the store's arrival
// times (backend.fold of {stored: id}); the URL keeps it (#capture=ID), so a reload reopens it.
// Everything in a row came from a recorded request or its reply: text nodes only.

const CAPTURES_POLL_MS = 1000;
const CAPTURES_HIDDEN_POLL_MS = 5000;

export const storeList = {
  rows: [],
  version: '',
  active: null,       // the id the keyboard is on
  openLatest: false,  // FILE was PATH.sqlite: open the newest once the list is here
  refolded: null,     // the capture folded again when it ended (once: a failing fold is not retried)
  timer: 0,
  busy: false,
  polls: 0,
};

export function hashCapture() {
  const match = /^#capture=(\d{1,15})$/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

export function storedName(stored) {
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
    row.status === null ? 'no status yet' : `status ${row.status}`, row.dialect || 'dialect not known yet',
    row.model ? `model ${row.model}` : '', ended,
    row.ttft === null ? 'no TTFT' : `TTFT ${formatSeconds(row.ttft)}`,
    row.frames === null ? '' : plural(row.frames, 'frame'), plural(findings, 'finding')].filter(Boolean).join(', ');
  const option = h('div', { class: 'capture-row', role: 'option', 'aria-selected': 'false', 'aria-label': label,
    dataset: { id: String(row.id) } },
  h('span', { class: 'c-id', text: `#${row.id}` }),
  h('span', { class: 'c-time', text: clockTime(row.started_at), title: `${row.started} (UTC)` }),
  h('span', { class: 'c-method', text: row.method }),
  h('span', { class: 'c-path', title: row.url }, streamNodes(path)),
  h('span', { class: `c-num${row.status >= 400 ? ' error-text' : ''}`, text: row.status === null ? '—' : String(row.status) }),
  // The model the reply reports, where the store kept it (a store of schema 1 did not).
  h('span', { class: 'c-dialect', text: row.dialect || '—', title: row.model ? `model ${row.model}` : 'model not known' }),
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
    answer = await backend.captures(storeList.version);
  } catch (error) {
    $('captures-note').textContent = `${error.message} Is it still running?`;
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
export function chooseStored(id, replace = false) {
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
export function noteOpenCapture(capture) {
  if (!state.meta || !state.meta.store) return;
  if (capture.stored === undefined && hashCapture() !== null) history.replaceState(null, '', location.pathname + location.search);
  if (capture.stored !== undefined) storeList.active = capture.stored;
  markCaptures();
}

// The diff posts bytes: a stored capture's body (a fleet's) is asked for once, when it is compared.
export async function withBody(capture) {
  if (capture.body || (capture.stored === undefined && capture.fleet === undefined)) return;
  capture.body = await (capture.fleet !== undefined ? backend.fleetBody(capture.fleet) : backend.storedBody(capture.stored));
  capture.size = capture.body.length;
}

// The summary bar's word on a stored exchange: its HTTP status, and when it is still in flight, that
// only what had arrived is shown (folded again by itself once it ends, or now with Reload).
export function storedSummary(stored) {
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

// A capture store opened after the page started (one dropped on the static page): listed as --db's is.
export function showStore(store) {
  const shown = state.meta.store;
  state.meta.store = store;
  if (!shown) { setupCaptures(store); return; }
  Object.assign(storeList, { rows: [], version: '', active: null });
  $('captures-store').textContent = store.name;
  pollCaptures();
}

export function setupCaptures(store) {
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
