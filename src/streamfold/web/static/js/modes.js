import { $ } from './dom.js';
import { eventsView, rawView, timeline } from './panes.js';

// The page's modes, one tab each: Inspect (one capture's four stages), Diff (two compared), and Fleet
// (web --fleet: a fleet's reports and captures; its tab shows only then). body[data-mode] says which
// is shown; what a mode does when it is shown again is registered with `onMode`.

const shown = {};

export function onMode(mode, callback) { shown[mode] = callback; }

export function showMode(mode) {
  document.body.dataset.mode = mode;
  for (const button of document.querySelectorAll('.modes [data-mode]')) {
    button.setAttribute('aria-selected', String(button.dataset.mode === mode));
  }
  // The panes measured nothing while they were hidden: laid out again now.
  if (mode === 'inspect') { rawView.reflow(true); eventsView.refresh(); timeline.draw(); }
  if (shown[mode]) shown[mode]();
}

export function setupModes() {
  for (const button of document.querySelectorAll('.modes [data-mode]')) {
    button.addEventListener('click', () => showMode(button.dataset.mode));
  }
  $('mode-inspect').setAttribute('aria-selected', 'true');
}
