import { backend } from './backend.js';
import { withBody } from './captures.js';
import { $, h, setChildren, streamNodes } from './dom.js';
import { formatBytes, formatCount, isBinary, plural } from './format.js';
import { fileCapture, textCapture } from './input.js';
import { foldOptions, showAlert } from './load.js';
import { onMode } from './modes.js';
import { state } from './state.js';

// Diff: two captures, folded by the server, compared side by side.

export const diffSides = { left: { capture: null }, right: { capture: null } };

function diffSideElement(side) { return document.querySelector(`.diff-side[data-side="${side}"]`); }

export function setDiffSide(side, capture) {
  diffSides[side].capture = capture;
  const element = diffSideElement(side);
  element.querySelector('[data-role="source"]').textContent = `${capture.name} · ${formatBytes(capture.size)}`;
  const textarea = element.querySelector('[data-role="text"]');
  textarea.value = '';
  textarea.placeholder = `${capture.name} (${formatBytes(capture.size)}) is loaded; type or paste here to replace it`;
}

export function setupDiff() {
  for (const side of ['left', 'right']) {
    const element = diffSideElement(side);
    const textarea = element.querySelector('[data-role="text"]');
    textarea.addEventListener('input', () => {
      diffSides[side].capture = textarea.value ? textCapture(textarea.value, 'pasted text') : null;
      element.querySelector('[data-role="source"]').textContent = textarea.value ? `pasted text · ${formatBytes(diffSides[side].capture.size)}` : 'nothing yet';
    });
    element.querySelector('[data-role="file"]').addEventListener('change', async (event) => {
      const file = event.target.files[0];
      event.target.value = '';
      if (file) setDiffSide(side, await fileCapture(file));
    });
  }
  diffSideElement('left').querySelector('[data-role="use-current"]').addEventListener('click', () => {
    if (state.capture) setDiffSide('left', state.capture);
    else showAlert('No capture is open in Inspect yet.');
  });
  $('compare-button').addEventListener('click', compare);
  onMode('diff', () => { if (!diffSides.left.capture && state.capture) setDiffSide('left', state.capture); });
}

async function compare() {
  const left = diffSides.left.capture, right = diffSides.right.capture;
  if (!left || !right) { showAlert('Give both captures: paste, drop or open one on each side.'); return; }
  showAlert(null);
  try {
    await Promise.all([withBody(left), withBody(right)]);
  } catch (error) {
    showAlert(error.message);
    return;
  }
  const output = $('diff-output');
  output.replaceChildren(h('p', { class: 'muted' }, h('span', { class: 'spinner', 'aria-hidden': true }), 'Folding and comparing…'));
  let diff;
  try {
    diff = await backend.diff(left.body, right.body, foldOptions());
  } catch (error) {
    output.replaceChildren();
    showAlert(error.message);
    return;
  }
  renderDiff(diff, left, right);
}

// A changed text: the shared start and end shortened to some context, the differing tokens of the
// middle marked (`marks`: [start, end] spans of whole words, from the server; zero-width: the other
// side has something here).
const DIFF_CONTEXT = 240;
function diffText(text, prefix, suffix, marks) {
  const mark = marks !== null;
  const cell = h('div', { class: 'diff-text' });
  if (text === null) { cell.append(h('span', { class: 'muted', text: '(none)' })); return cell; }
  if (!mark && text.length > 4 * DIFF_CONTEXT) {
    cell.append(...streamNodes(text.slice(0, 2 * DIFF_CONTEXT)),
      h('span', { class: 'elided', text: ` … ${formatCount(text.length - 2 * DIFF_CONTEXT)} more characters` }));
    return cell;
  }
  const middleEnd = Math.max(prefix, text.length - suffix);
  const head = text.slice(0, prefix);
  if (head.length > DIFF_CONTEXT) {
    cell.append(h('span', { class: 'elided', text: `… ${formatCount(head.length - DIFF_CONTEXT)} identical characters … ` }));
    cell.append(...streamNodes(head.slice(head.length - DIFF_CONTEXT)));
  } else cell.append(...streamNodes(head));
  if (mark) cell.append(...markedMiddle(text, prefix, middleEnd, marks));
  else cell.append(...streamNodes(text.slice(prefix, middleEnd)));
  const tail = text.slice(middleEnd);
  if (tail.length > DIFF_CONTEXT) {
    cell.append(...streamNodes(tail.slice(0, DIFF_CONTEXT)));
    cell.append(h('span', { class: 'elided', text: ` … ${formatCount(tail.length - DIFF_CONTEXT)} identical characters …` }));
  } else cell.append(...streamNodes(tail));
  return cell;
}

function markedMiddle(text, from, to, marks) {
  const parts = [];
  let at = from;
  for (const [start, end] of marks.length ? marks : [[from, to]]) {
    if (start > at) parts.push(...streamNodes(text.slice(at, start)));
    parts.push(end > start ? h('mark', { class: 'diff-mark' }, streamNodes(text.slice(start, end)))
      : h('mark', { class: 'diff-mark empty', title: 'nothing here on this side' }));
    at = Math.max(at, end);
  }
  if (to > at) parts.push(...streamNodes(text.slice(at, to)));
  return parts;
}

function renderDiff(diff, left, right) {
  const output = $('diff-output');
  const changed = diff.fields.filter((field) => !field.same).length;
  const table = h('table', { class: 'diff-table' },
    h('thead', null, h('tr', null, h('th', { text: 'field' }), h('th', { text: 'left' }), h('th', { text: 'right' }))));
  const tbody = h('tbody');
  let section = null;
  for (const field of diff.fields) {
    if (field.section !== section) {
      section = field.section;
      tbody.append(h('tr', { class: 'diff-section' }, h('th', { colspan: 3, text: section })));
    }
    tbody.append(h('tr', { class: field.same ? 'same' : 'changed' },
      h('th', { class: 'diff-label' }, field.label, field.same ? null : h('span', { class: 'badge warn small', text: 'differs' }),
        field.note ? h('div', { class: 'muted', text: field.note }) : null),
      h('td', null, diffText(field.left, field.prefix, field.suffix, field.same ? null : (field.marks || {}).left || [])),
      h('td', null, diffText(field.right, field.prefix, field.suffix, field.same ? null : (field.marks || {}).right || []))));
  }
  table.append(tbody);
  const onlyChanges = h('input', { type: 'checkbox' });
  onlyChanges.addEventListener('change', () => table.classList.toggle('only-changes', onlyChanges.checked));
  const parts = [
    h('div', { class: 'diff-summary' },
      h('span', { class: `badge ${changed ? 'warn' : 'ok'}`,
        text: changed ? `${plural(changed, 'field')} differ${changed === 1 ? 's' : ''}` : 'same result' }),
      h('span', { text: `${left.name} (${formatBytes(diff.left.input_size)})` }),
      h('span', { class: 'muted', text: 'vs' }),
      h('span', { text: `${right.name} (${formatBytes(diff.right.input_size)})` }),
      changed ? h('label', { class: 'toggle' }, onlyChanges, 'hide identical fields') : null),
    table,
  ];
  const frames = diff.frames;
  parts.push(h('h3', { class: 'section-title', text: 'Frames' }));
  const response = diff.left.response ? 'left' : diff.right.response ? 'right' : null;
  parts.push(h('p', { class: 'muted', text: frames.compared === false
    ? `Frames are not compared: the ${response} side is a non-streaming response (no frames); only the fields a response tells are compared above.`
    : frames.hunks_total
    ? `${plural(frames.left_total, 'frame')} on the left, ${formatCount(frames.right_total)} on the right; ${plural(frames.hunks_total, 'run')} of frames differ (compared by event, data, id and comments).`
    : `The ${plural(frames.left_total, 'frame')} carry the same events, data, ids and comments on both sides.` }));
  const opLabel = { replace: 'changed', delete: 'only on the left', insert: 'only on the right' };
  for (const hunk of frames.hunks) {
    const range = ([a, b]) => (b - a === 0 ? 'none' : b - a === 1 ? `frame ${a}` : `frames ${a}–${b - 1}`);
    const column = (list, [a, b], transport) => h('div', { class: 'hunk-side' },
      list.map((frame) => h('div', { class: 'hunk-frame' },
        h('div', { class: 'hunk-frame-head' }, h('span', { class: 'ev-index', text: frame.index }),
          h('span', { class: `badge kind-${frame.kind}`, text: frame.kind }),
          h('span', { class: 'muted', text: isBinary(transport) ? `byte ${formatCount(frame.offset)}` : `line ${frame.line}` })),
        h('pre', { class: 'code' }, streamNodes(frame.raw + (frame.raw_truncated ? '…' : ''))))),
      b - a > list.length ? h('p', { class: 'muted', text: `and ${plural(b - a - list.length, 'more frame')}` }) : null);
    parts.push(h('div', { class: `hunk op-${hunk.op}` },
      h('div', { class: 'hunk-head' }, h('span', { class: 'badge warn', text: opLabel[hunk.op] || hunk.op }),
        h('span', { text: `left: ${range(hunk.left)}` }), h('span', { class: 'muted', text: '↔' }), h('span', { text: `right: ${range(hunk.right)}` })),
      h('div', { class: 'hunk-sides' }, column(hunk.left_frames, hunk.left, diff.left.result.transport),
        column(hunk.right_frames, hunk.right, diff.right.result.transport))));
  }
  if (frames.hunks_total > frames.hunks.length) {
    parts.push(h('p', { class: 'muted', text: `… and ${plural(frames.hunks_total - frames.hunks.length, 'more run')} not listed.` }));
  }
  setChildren(output, parts);
}
