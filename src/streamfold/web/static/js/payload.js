import { $, appendText, h, setChildren, streamNodes } from './dom.js';
import { kindLabel } from './events.js';
import { fieldLabel, formatBytes, formatCount, isBinary, plural, formatSeconds } from './format.js';
import { frameLoader } from './frames.js';
import { producedBy } from './provenance.js';
import { state } from './state.js';

// Stage 3: the selected frame's payload, a collapsible JSON tree (or the
// parser's message, with the failing character marked).

// A JSON tree opens this deep by default; larger containers start folded.
const TREE_OPEN_DEPTH = 7;
const TREE_OPEN_MAX_CHILDREN = 60;
const TREE_CHILD_PAGE = 200;
const TREE_STRING_PREVIEW = 2000;
export function jsonTree(value, depth = 0) {
  if (value === null) return h('span', { class: 'j-null', text: 'null' });
  switch (typeof value) {
    case 'string': return jsonString(value);
    case 'number': return h('span', { class: 'j-number', text: String(value) });
    case 'boolean': return h('span', { class: 'j-bool', text: String(value) });
    default:
  }
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((item, i) => [i, item]) : Object.entries(value);
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (!entries.length) return h('span', { class: 'j-punct', text: open + close });
  const node = h('span', { class: 'j-node' });
  const toggle = h('button', { type: 'button', class: 'j-toggle', 'aria-label': 'fold or unfold' });
  const summary = h('span', { class: 'j-summary', text: isArray ? ` ${plural(entries.length, 'item')} ` : ` ${plural(entries.length, 'key')} ` });
  const body = h('div', { class: 'j-body' });
  let rendered = 0;
  const renderMore = () => {
    const upTo = Math.min(entries.length, rendered + TREE_CHILD_PAGE);
    const more = body.querySelector(':scope > .j-more');
    if (more) more.remove();
    for (; rendered < upTo; rendered++) {
      const [key, item] = entries[rendered];
      const child = jsonTree(item, depth + 1);
      // A nested container's fold button hangs left of its key, where the eye looks for it.
      const childToggle = child.classList.contains('j-node') ? child.querySelector(':scope > .j-toggle') : null;
      body.append(h('div', { class: 'j-entry' },
        childToggle,
        isArray ? null : h('span', { class: 'j-key', text: JSON.stringify(key) }),
        isArray ? null : h('span', { class: 'j-punct', text: ': ' }),
        child,
        rendered < entries.length - 1 ? h('span', { class: 'j-punct', text: ',' }) : null));
    }
    if (rendered < entries.length) {
      body.append(h('button', { type: 'button', class: 'j-more link', onclick: renderMore,
        text: `show ${formatCount(Math.min(TREE_CHILD_PAGE, entries.length - rendered))} more of ${formatCount(entries.length - rendered)}` }));
    }
  };
  const setOpen = (open_) => {
    node.classList.toggle('collapsed', !open_);
    toggle.setAttribute('aria-expanded', String(open_));
    if (open_ && rendered === 0) renderMore();
  };
  toggle.addEventListener('click', () => setOpen(node.classList.contains('collapsed')));
  summary.addEventListener('click', () => setOpen(true));
  node.append(toggle, h('span', { class: 'j-punct', text: open }), summary, body, h('span', { class: 'j-punct j-close', text: close }));
  setOpen(depth < TREE_OPEN_DEPTH && entries.length <= TREE_OPEN_MAX_CHILDREN);
  return node;
}

function jsonString(value) {
  const quoted = JSON.stringify(value);
  if (quoted.length <= TREE_STRING_PREVIEW) return h('span', { class: 'j-string' }, streamNodes(quoted));
  const span = h('span', { class: 'j-string' }, streamNodes(quoted.slice(0, TREE_STRING_PREVIEW)));
  const more = h('button', { type: 'button', class: 'link', text: `… show all ${formatCount(value.length)} characters` });
  more.addEventListener('click', () => { setChildren(span, streamNodes(quoted)); more.remove(); });
  return h('span', null, span, more);
}

function parsePayload(text) {
  try { return { value: JSON.parse(text) }; } catch (error) { return { error: String(error.message || error) }; }
}

// Text with one character marked (a parse error's position); past the end, a marker after the text.
export function markedText(text, position, cls) {
  const pre = h('pre', { class: 'code marked' });
  if (position === null || position === undefined) return appendText(pre, text);
  appendText(pre, text.slice(0, position));
  if (position < text.length) {
    const width = (text.codePointAt(position) > 0xffff) ? 2 : 1;
    pre.append(h('mark', { class: cls, title: 'the parser stopped here', text: text.slice(position, position + width) }));
    appendText(pre, text.slice(position + width));
  } else {
    pre.append(h('mark', { class: `${cls} at-end`, title: 'the text ended here' }));
  }
  return pre;
}

export function renderJsonView() {
  const container = $('json-view');
  const index = state.selected;
  const frame = state.frames[index];
  if (!frame) {
    $('json-sub').textContent = 'per frame';
    container.replaceChildren(h('p', { class: 'empty-note', text: state.frames.length ? 'Select a frame to see its payload.' : 'No frames.' }));
    return;
  }
  $('json-sub').textContent = `frame ${index} of ${formatCount(state.frames.length)}`;
  if (frame.stub) {
    frameLoader.need(index);
    container.replaceChildren(h('p', { class: 'empty-note', text: `Loading frame ${index}…` }));
    return;
  }
  const facts = [
    ['line', formatCount(frame.line)], ['byte', formatCount(frame.offset)],
    ['size', formatBytes(frame.size)],
  ].filter(([name]) => name !== 'line' || !isBinary(state.result.transport));
  if (frame.time !== undefined) facts.push(['arrived', `${formatSeconds(frame.time)} from the start`]);
  if (frame.event !== null) facts.push(['event', frame.event]);
  // Whole here, where the events list may cut it to fit its row.
  if (frame.summary) facts.push(['summary', frame.summary]);
  if (frame.id !== undefined) facts.push(['id', frame.id]);
  if (frame.retry !== undefined) facts.push(['retry', String(frame.retry)]);
  const parts = [
    h('div', { class: 'frame-head' },
      h('span', { class: 'frame-title', text: `Frame ${index}` }),
      h('span', { class: `badge kind-${frame.kind}`, text: kindLabel(frame) }),
      frame.terminated ? null : h('span', { class: 'badge cut', text: 'cut off' })),
    h('dl', { class: 'facts' }, facts.map(([name, value]) => [h('dt', { text: name }), h('dd', null, streamNodes(value))])),
  ];
  // A framing issue is both a diagnostic and one of the frame's issue_details: listed once, with its line.
  const issueKeys = new Set((frame.issue_details || []).map((issue) => `${issue.code}@${issue.offset}`));
  for (const finding of state.findingsByFrame.get(index) || []) {
    if (frame.kind === 'invalid' && finding.code === 'invalid-json') continue; // the payload section says it
    if (issueKeys.has(`${finding.code}@${finding.offset}`)) continue;
    parts.push(h('div', { class: `finding sev-${finding.severity}` },
      h('span', { class: 'finding-code', text: finding.code }), ' ', streamNodes(finding.message)));
  }
  for (const issue of frame.issue_details || []) {
    parts.push(h('div', { class: 'finding sev-warning' },
      h('span', { class: 'finding-code', text: issue.code }),
      isBinary(state.result.transport) ? ` byte ${formatCount(issue.offset)}: ` : ` line ${issue.line}: `, streamNodes(issue.message)));
  }
  parts.push(payloadSection(frame));
  const produced = producedBy(index);
  if (produced.length) {
    parts.push(h('h3', { class: 'section-title', text: 'Added to the result' }));
    for (const { field, choice, text } of produced) {
      parts.push(h('div', { class: 'produced' },
        h('span', { class: 'produced-field', text: state.result.choices.length > 1 ? `choice ${choice} ${fieldLabel(field)}` : fieldLabel(field) }),
        h('span', { class: 'produced-text' }, streamNodes(text))));
    }
  }
  if (frame.headers) {
    parts.push(h('h3', { class: 'section-title', text: 'Headers' }));
    parts.push(h('dl', { class: 'facts headers' }, frame.headers.map(([name, value]) => [h('dt', { text: name }), h('dd', { text: String(value) })])));
  }
  setChildren(container, parts);
  container.scrollTop = 0;
}

function payloadSection(frame) {
  switch (frame.kind) {
    case 'json': {
      const text = frame.data_span ? frame.raw.slice(frame.data_span[0], frame.data_span[1]) : frame.payload_json;
      const parsed = parsePayload(text);
      return h('div', { class: 'json-tree' }, 'value' in parsed ? jsonTree(parsed.value) : parsed.error);
    }
    case 'glued': {
      const documents = JSON.parse(frame.payload_json);
      return h('div', null,
        h('p', { class: 'note warn', text: `${plural(documents.length, 'JSON document')} in one frame: the blank line between frames was lost. Each was folded.` }),
        documents.map(({ offset, document }, i) => h('div', { class: 'glued-document' },
          h('div', { class: 'muted', text: `document ${i + 1}, at character ${formatCount(offset)} of the data` }),
          h('div', { class: 'json-tree' }, jsonTree(document)))));
    }
    case 'invalid':
      return h('div', { class: 'invalid-payload' },
        h('p', { class: 'note error' },
          h('strong', { text: 'Not JSON: ' }), frame.error ? frame.error.message : frame.summary,
          frame.error && frame.error.position !== null ? ` (character ${formatCount(frame.error.position)})` : ''),
        h('p', { class: 'muted', text: 'Kept aside with its position; the rest of the stream still folds.' }),
        markedText(frame.data || '', frame.error ? frame.error.position : null, 'error-mark'));
    case 'done':
      return h('p', { class: 'note ok', text: '[DONE]: the stream says it is over. Clients stop reading here.' });
    case 'empty':
      return h('div', null,
        h('p', { class: 'note warn', text: 'An empty data field: clients that JSON-parse every data field fail on it.' }),
        markedText(frame.data || '', null));
    case 'comment':
      return h('div', null,
        h('p', { class: 'note', text: frame.comments ? 'A comment frame (often a keep-alive): no data, clients skip it.' : 'No data field: clients skip this frame.' }),
        frame.comments ? h('pre', { class: 'code' }, streamNodes(frame.comments.map((c) => `: ${c}`).join('\n'))) : null);
    default:
      return appendText(h('pre', { class: 'code' }), frame.raw);
  }
}
