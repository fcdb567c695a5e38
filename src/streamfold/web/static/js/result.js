import { $, appendText, h, setChildren, streamNodes } from './dom.js';
import { formatCount, isBinary, place, plural } from './format.js';
import { eventsView, rawView } from './panes.js';
import { jsonTree, markedText } from './payload.js';
import { characterAt, runIndexAt, setHighlight, textRange } from './provenance.js';
import { select } from './selection.js';
import { state } from './state.js';

// Stage 4: the merged result.

export function renderResult() {
  const container = $('result-view');
  const result = state.result;
  const parts = [];
  const provenanceOf = new Map(state.provenance.map((entry) => [`${entry.choice}|${entry.field}`, entry]));
  const provenanceText = (choice, field, text, cls) => {
    const entry = provenanceOf.get(`${choice}|${field}`);
    const element = appendText(h('div', { class: `prov-text ${cls}`, dataset: { choice: String(choice), field } }), text);
    if (entry) entry.element = element;
    return element;
  };
  const severalChoices = result.choices.length > 1;
  if (!result.choices.length) parts.push(h('p', { class: 'empty-note', text: 'No reply was folded from this capture.' }));
  for (const choice of result.choices) {
    const section = h('section', { class: 'choice' });
    if (severalChoices) section.append(h('h3', { class: 'choice-title', text: `Choice ${choice.index}` }));
    if (choice.reasoning) {
      const details = h('details', { class: 'reasoning' },
        h('summary', null, h('span', { class: 'section-title inline', text: 'Reasoning' }),
          h('span', { class: 'muted', text: ` ${plural(choice.reasoning.length, 'character')}, kept apart from the reply` })),
        provenanceText(choice.index, 'reasoning', choice.reasoning, 'reasoning-text'));
      section.append(details);
    }
    section.append(h('h3', { class: 'section-title', text: 'Reply' }));
    if (choice.content) section.append(markLostText(provenanceText(choice.index, 'content', choice.content, 'reply-text'), choice.index));
    else section.append(h('p', { class: 'empty-note', text: choice.tool_calls.length ? 'No text: the reply is tool calls.' : 'No text.' }));
    if (choice.refusal) {
      section.append(h('h3', { class: 'section-title error-text', text: 'Refusal' }));
      section.append(provenanceText(choice.index, 'refusal', choice.refusal, 'refusal-text'));
    }
    choice.tool_calls.forEach((call, position) => section.append(renderToolCall(choice, call, position, provenanceText)));
    const finish = h('div', { class: 'finish' }, h('span', { class: 'muted', text: 'finish reason ' }),
      h('span', { class: `badge finish-${choice.finish_reason || 'none'}`, text: choice.finish_reason || 'none' }));
    if (choice.finish_reason_raw && choice.finish_reason_raw !== choice.finish_reason) {
      finish.append(h('span', { class: 'muted', text: ` (sent as ${JSON.stringify(choice.finish_reason_raw)})` }));
    }
    section.append(finish);
    parts.push(section);
  }
  if (result.usage) parts.push(renderUsage(result.usage));
  parts.push(renderFindings(result));
  setChildren(container, parts);
}

// A marker in the reply where a frame that did not decode came (the fold view's lost_text), as the
// CLI shows it: "⟦frame 17 lost: invalid JSON; partial text " wor"⟧". Its words are CSS content
// (data-label), not text nodes, so the reply's character offsets (provenance, hover) stay the text's.
function markLostText(element, choice) {
  const lost = (state.view.lost_text || []).filter((entry) => entry.choice === choice);
  const unit = isBinary(state.result.transport) ? 'message' : 'frame';
  for (const entry of lost.reverse()) {
    const partial = entry.partial ? `; partial text ${JSON.stringify(entry.partial)}` : '';
    const label = `⟦${unit} ${entry.frame} lost: ${entry.reason}${partial}⟧`;
    const marker = h('span', { class: 'lost-text', role: 'note', 'aria-label': label, dataset: { label, frame: String(entry.frame) } });
    const range = textRange(element, entry.offset, entry.offset);
    if (range) range.insertNode(marker); else element.append(marker);
  }
  return element;
}

function renderToolCall(choice, call, position, provenanceText) {
  const field = `tool:${position}`;
  const errorAt = state.view.tool_argument_errors.find((e) => e.choice === choice.index && e.tool === position);
  const argumentsElement = provenanceText(choice.index, field, '', 'args-text code');
  if (errorAt && errorAt.position !== null) {
    const marked = markedText(call.arguments, errorAt.position, 'error-mark');
    argumentsElement.replaceChildren(...marked.childNodes);
  } else {
    appendText(argumentsElement, call.arguments);
  }
  const parsed = call.error !== null
    ? h('div', { class: 'note error' }, h('strong', { text: 'Does not parse: ' }), call.error)
    : h('div', { class: 'json-tree' }, jsonTree(call.parsed));
  return h('section', { class: `tool-call${call.error !== null ? ' has-error' : ''}` },
    h('div', { class: 'tool-head' },
      h('span', { class: 'muted', text: `tool call ${position}` }),
      h('span', { class: 'tool-name' }, call.name === null ? '(no name)' : streamNodes(call.name)),
      call.id !== null ? h('span', { class: 'tool-id muted', text: call.id }) : null),
    h('div', { class: 'tool-panes' },
      h('div', { class: 'tool-pane' }, h('div', { class: 'pane-title', text: 'arguments, joined as streamed' }), argumentsElement),
      h('div', { class: 'tool-pane' }, h('div', { class: 'pane-title', text: 'parsed' }), parsed)));
}

function renderUsage(usage) {
  const names = [['input_tokens', 'input'], ['output_tokens', 'output'], ['reasoning_tokens', 'reasoning'],
    ['cache_read_tokens', 'cache read'], ['total_tokens', 'total']];
  return h('section', { class: 'usage' },
    h('h3', { class: 'section-title', text: 'Usage' }),
    h('dl', { class: 'facts usage-facts' }, names.filter(([key]) => usage[key] !== null && usage[key] !== undefined)
      .map(([key, label]) => [h('dt', { text: label }), h('dd', { text: formatCount(usage[key]) })])));
}

function renderFindings(result) {
  const findings = [
    ...result.errors.map((e) => ({ severity: 'error', code: e.code, frame: e.frame, offset: e.offset, line: e.line, message: e.message })),
    ...result.diagnostics.map((d) => ({ severity: d.severity, code: d.code, frame: d.frame, offset: d.offset, line: d.line, message: d.message })),
  ];
  const section = h('section', { class: 'findings' },
    h('h3', { class: 'section-title', text: findings.length ? `Findings (${findings.length})` : 'Findings' }));
  if (!findings.length) {
    section.append(h('p', { class: 'muted', text: 'Nothing suspicious: every frame decoded and folded cleanly.' }));
    return section;
  }
  const list = h('ul', { class: 'finding-list' });
  for (const finding of findings) {
    const where = finding.frame !== null && finding.frame !== undefined
      ? h('button', { type: 'button', class: 'frame-link', dataset: { frame: String(finding.frame) },
        text: place(finding.frame, finding.offset, finding.line, result.transport),
        onclick: () => select(finding.frame, 'finding') })
      : null;
    list.append(h('li', { class: `finding sev-${finding.severity}` },
      h('div', { class: 'finding-head' },
        h('span', { class: `badge sev-${finding.severity}`, text: finding.severity }),
        h('span', { class: 'finding-code', text: finding.code }), where),
      h('div', { class: 'finding-message' }, streamNodes(finding.message))));
  }
  section.append(list);
  return section;
}

export function setupResultPointer() {
  const container = $('result-view');
  const label = $('hover-label');
  let pending = null;
  const entryOf = (element) => state.provenance.find((entry) => entry.element === element);
  const locate = (event) => {
    const element = event.target.closest && event.target.closest('.prov-text');
    if (!element) return null;
    const entry = entryOf(element);
    if (!entry) return null;
    const offset = characterAt(element, event.clientX, event.clientY);
    if (offset < 0) return null;
    const run = runIndexAt(entry.runs, offset);
    return run < 0 ? null : { entry, run, frame: entry.runs[run * 3 + 2] };
  };
  const hover = (event) => {
    const found = locate(event);
    if (!found) { setHovered(-1); label.hidden = true; setHighlight('sf-hover', []); return; }
    const { entry, run, frame } = found;
    const range = textRange(entry.element, entry.runs[run * 3], entry.runs[run * 3 + 1]);
    setHighlight('sf-hover', range ? [range] : []);
    setHovered(frame);
    const info = state.frames[frame];
    label.textContent = info ? place(frame, info.offset, info.line, state.result.transport) : `frame ${frame}`;
    label.hidden = false;
    label.style.left = `${Math.min(event.clientX + 14, window.innerWidth - label.offsetWidth - 8)}px`;
    label.style.top = `${event.clientY + 16}px`;
  };
  container.addEventListener('mousemove', (event) => {
    if (pending) return;
    pending = requestAnimationFrame(() => { pending = null; hover(event); });
  });
  container.addEventListener('mouseleave', () => { setHovered(-1); label.hidden = true; setHighlight('sf-hover', []); });
  container.addEventListener('click', (event) => {
    if (window.getSelection && String(window.getSelection()).length) return; // the person is selecting text
    const found = locate(event);
    if (found) select(found.frame, 'result');
  });
}

function setHovered(frameIndex) {
  if (state.hovered === frameIndex) return;
  state.hovered = frameIndex;
  rawView.refresh();
  eventsView.refresh();
}
