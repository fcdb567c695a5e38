/*
 * streamfold web page: the pipeline a person debugs, left to right.
 *
 *   raw bytes → events (frames) → JSON per frame → merged result
 *
 * Native ES modules, no build step: this entry starts the page; the rest is under js/:
 *
 *   backend.js       the one way to the Python core (every server call; its interface is documented
 *                    there, for a second backend such as a Web Worker running the core)
 *   state.js         what is open and selected; panes.js the panes made at start
 *   dom.js           building elements, stream text as text nodes with hidden characters marked;
 *                    format.js sizes, counts, places
 *   raw.js, events.js, payload.js, result.js, timeline.js
 *                    the stages and the timeline (virtual-list.js under the first two);
 *                    provenance.js which frame made which character, selection.js one frame in all
 *   frames.js        a fold's rows by range; load.js a fold shown; input.js paste, drop, open, keys
 *   diff.js          two captures compared; captures.js a capture store's list (web --db)
 *   fleet.js         a fleet's reports, filters and captures (web --fleet), charts.js its SVG charts;
 *                    modes.js the tabs (Inspect, Diff, Fleet)
 *
 * All computation happens in the Python core, behind the backend; the modules only show what it
 * returns.
 *
 * Safety: every string that came from a stream reaches the DOM as text
 * (text nodes, textContent), never as markup: no module parses HTML
 * from a string (tests/fronts/test_web.py and ESLint check), and no link or URL is ever built
 * from stream data. The server's Content-Security-Policy (no inline script,
 * no other origin) stands behind that.
 *
 * Speed: a 100k-frame capture must stay usable, so the raw bytes and the
 * event list are virtualised (only visible rows exist in the DOM), frame
 * payloads arrive as JSON text parsed only when a frame is shown, and the
 * result text is one text node per field, highlighted with CSS Custom
 * Highlights instead of one element per run.
 */
import { backend } from './js/backend.js';
import { chooseStored, hashCapture, setupCaptures, storeList } from './js/captures.js';
import { setupDiff } from './js/diff.js';
import { $, h } from './js/dom.js';
import { hashFleetCapture, openFleetCapture, setupFleet } from './js/fleet.js';
import { foldOpened, setupInput, setupKeyboard } from './js/input.js';
import { renderSummary, setupEntryPicker, showAlert } from './js/load.js';
import { setupModes, showMode } from './js/modes.js';
import { createPanes } from './js/panes.js';
import { renderJsonView } from './js/payload.js';
import { setupResultPointer } from './js/result.js';
import { state } from './js/state.js';

async function start() {
  createPanes();
  setupInput();
  setupKeyboard();
  setupResultPointer();
  setupDiff();
  setupModes();
  setupEntryPicker();
  renderSummary();
  renderJsonView();
  $('result-view').replaceChildren(h('p', { class: 'empty-note', text: 'The merged reply appears here.' }));
  try {
    state.meta = await backend.meta();
  } catch (error) {
    showAlert(error.message);
    return;
  }
  for (const [id, names] of [['dialect-select', state.meta.dialects], ['transport-select', state.meta.transports]]) {
    $(id).append(...names.map((name) => h('option', { text: name })));
  }
  if (state.meta.fleet) {
    // The fleet is the page's start, unless the URL names one of its captures (a reload).
    const named = hashFleetCapture();
    const listed = setupFleet(state.meta.fleet);
    if (named !== null) { openFleetCapture(named); return; }
    if (!state.meta.capture && !state.meta.store) { showMode('fleet'); await listed; return; }
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
    try {
      const body = await backend.openedFile();
      foldOpened({ body, name: initial.name, size: body.length });
      return;
    } catch (error) {
      showAlert(error.message);
    }
  } else if (initial && initial.error) {
    showAlert(`Cannot read ${initial.name}: ${initial.error}`);
  }
  if (store) $('captures-list').focus();
  else $('capture-text').focus();
}

document.addEventListener('DOMContentLoaded', start);
