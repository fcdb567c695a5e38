import { state } from './state.js';

// Provenance: for every result text, runs of [start, end, frame] (UTF-16 units).

export function runIndexAt(runs, offset) {
  let low = 0, high = runs.length / 3 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (runs[middle * 3 + 1] <= offset) low = middle + 1;
    else if (runs[middle * 3] > offset) high = middle - 1;
    else return middle;
  }
  return -1;
}

// The runs a frame produced; frames only grow along a text, so they are found by bisection.
function runsOfFrame(entry, frameIndex) {
  const runs = entry.runs;
  const count = runs.length / 3;
  const found = [];
  if (!entry.monotonic) {
    for (let i = 0; i < count; i++) if (runs[i * 3 + 2] === frameIndex) found.push(i);
    return found;
  }
  let low = 0, high = count;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (runs[middle * 3 + 2] < frameIndex) low = middle + 1; else high = middle;
  }
  for (let i = low; i < count && runs[i * 3 + 2] === frameIndex; i++) found.push(i);
  return found;
}

export function producedBy(frameIndex) {
  const produced = [];
  for (const entry of state.provenance) {
    for (const i of runsOfFrame(entry, frameIndex)) {
      produced.push({ field: entry.field, choice: entry.choice, text: entry.text.slice(entry.runs[i * 3], entry.runs[i * 3 + 1]) });
    }
  }
  return produced;
}

// A DOM range over characters [start, end) of an element's text (its text nodes in order).
export function textRange(element, start, end) {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let seen = 0, started = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = node.data.length;
    if (!started && start <= seen + length) { range.setStart(node, start - seen); started = true; }
    if (started && end <= seen + length) { range.setEnd(node, end - seen); return range; }
    seen += length;
  }
  return started ? range : null;
}

function textOffset(element, node, offset) {
  if (node.nodeType !== Node.TEXT_NODE || !element.contains(node)) return -1;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let seen = 0;
  for (let current = walker.nextNode(); current; current = walker.nextNode()) {
    if (current === node) return seen + offset;
    seen += current.data.length;
  }
  return -1;
}

function caretAt(x, y) {
  if (document.caretPositionFromPoint) {
    const position = document.caretPositionFromPoint(x, y);
    return position ? { node: position.offsetNode, offset: position.offset } : null;
  }
  if (document.caretRangeFromPoint) {
    const range = document.caretRangeFromPoint(x, y);
    return range ? { node: range.startContainer, offset: range.startOffset } : null;
  }
  return null;
}

// The character under the pointer in a provenance element, or -1 (the caret alone may be beside it).
export function characterAt(element, x, y) {
  const caret = caretAt(x, y);
  if (!caret) return -1;
  const offset = textOffset(element, caret.node, caret.offset);
  if (offset < 0) return -1;
  for (const candidate of [offset, offset - 1]) {
    if (candidate < 0) continue;
    const range = textRange(element, candidate, candidate + 1);
    if (!range) continue;
    for (const rect of range.getClientRects()) {
      if (x >= rect.left - 1 && x <= rect.right + 1 && y >= rect.top - 1 && y <= rect.bottom + 1) return candidate;
    }
  }
  return -1;
}

const highlights = window.CSS && CSS.highlights && typeof Highlight === 'function' ? CSS.highlights : null;

export function setHighlight(name, ranges) {
  if (!highlights) return;
  if (ranges.length) highlights.set(name, new Highlight(...ranges));
  else highlights.delete(name);
}

export function rangesOfFrame(frameIndex) {
  const ranges = [];
  for (const entry of state.provenance) {
    if (!entry.element) continue;
    for (const i of runsOfFrame(entry, frameIndex)) {
      const range = textRange(entry.element, entry.runs[i * 3], entry.runs[i * 3 + 1]);
      if (range) ranges.push({ range, entry });
    }
  }
  return ranges;
}
