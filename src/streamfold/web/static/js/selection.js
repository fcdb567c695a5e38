import { $ } from './dom.js';
import { eventsView, rawView, timeline } from './panes.js';
import { renderJsonView } from './payload.js';
import { rangesOfFrame, setHighlight } from './provenance.js';
import { state } from './state.js';

// Selection: one frame, shown in every stage.

export function select(frameIndex, source) {
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
