import { h, setChildren, streamNodes, tooltipText } from './dom.js';
import { debounce, formatCount, isBinary, place, plural, formatSeconds } from './format.js';
import { frameLoader } from './frames.js';
import { select } from './selection.js';
import { state } from './state.js';
import { VirtualList } from './virtual-list.js';

// Stage 2: events, one row per frame, searchable and filterable.

const EVENT_ROW_HEIGHT = 26;
const KEEP_ALIVE = /^\s*(keep-?alive|ping|heartbeat|processing)?\s*$/i;

export function kindLabel(frame) {
  if (frame.kind === 'comment' && (frame.comments || []).every((c) => KEEP_ALIVE.test(c))) {
    return frame.comments && frame.comments.length ? 'keep-alive' : 'no data';
  }
  return frame.kind;
}

export class EventsView {
  constructor(scroller, search, filterGroup, countLabel) {
    this.scroller = scroller;
    this.search = search;
    this.filterGroup = filterGroup;
    this.countLabel = countLabel;
    this.filter = 'all';
    this.order = new Int32Array(0);
    this.haystack = null;
    this.appliedQuery = '';
    this.list = new VirtualList(scroller, EVENT_ROW_HEIGHT, (row, el) => this.renderRow(row, el), () => this.markActive());
    search.addEventListener('input', debounce(() => this.apply(true), 120));
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        if (search.value.trim() !== this.appliedQuery) this.apply(false); // typed faster than the debounce
        if (this.order.length) { select(this.order[0], 'search'); scroller.focus(); }
      }
      if (event.key === 'Escape') { search.value = ''; this.apply(true); scroller.focus(); }
    });
    filterGroup.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-filter]');
      if (!button) return;
      this.filter = button.dataset.filter;
      for (const other of filterGroup.querySelectorAll('button')) {
        other.setAttribute('aria-pressed', String(other === button));
      }
      this.apply(true);
    });
    scroller.addEventListener('click', (event) => {
      const row = event.target.closest('.vl-row');
      if (row && row.dataset.frame !== undefined) select(Number(row.dataset.frame), 'events');
    });
  }

  setData() {
    this.haystack = null;
    this.longestName = 0;
    this.fitNames(state.frames);
    this.apply(false);
  }

  // The name column is as wide as the longest event name come so far (Anthropic's content_block_delta
  // whole), within the CSS's limit; names arrive with each range of frames.
  fitNames(frames) {
    let longest = this.longestName;
    for (const frame of frames) if (frame.event && frame.event.length > longest) longest = frame.event.length;
    if (longest === this.longestName) return;
    this.longestName = longest;
    this.scroller.style.setProperty('--event-name-width', `${longest}ch`);
  }

  matches(index, query) {
    const frame = state.frames[index];
    switch (this.filter) {
      case 'problems':
        if (state.problems[index] < 2) return false;
        break;
      case 'data':
        if (frame.kind === 'comment') return false;
        break;
      case 'comments':
        if (frame.kind !== 'comment') return false;
        break;
      default:
    }
    if (!query) return true;
    if (query.number !== null && query.number === index) return true;
    return this.haystackOf(index).includes(query.text);
  }

  // Lower-cased search text per frame, built on the first search only (it doubles the memory of the raw text).
  haystackOf(index) {
    if (!this.haystack) this.haystack = new Array(state.frames.length);
    let text = this.haystack[index];
    if (text === undefined) {
      const frame = state.frames[index];
      text = `${frame.summary}\n${frame.event || ''}\n${frame.raw}\n${(frame.issues || []).join(' ')}`.toLowerCase();
      this.haystack[index] = text;
    }
    return text;
  }

  apply(keepSelectionInView) {
    const total = state.frames.length;
    const raw = this.search.value.trim();
    this.appliedQuery = raw;
    const query = raw ? { text: raw.toLowerCase(), number: /^#?\d+$/.test(raw) ? Number(raw.replace('#', '')) : null } : null;
    let order;
    if (!query && this.filter === 'all') {
      order = new Int32Array(total);
      for (let i = 0; i < total; i++) order[i] = i;
    } else {
      const kept = [];
      for (let i = 0; i < total; i++) if (this.matches(i, query)) kept.push(i);
      order = Int32Array.from(kept);
    }
    this.order = order;
    this.countLabel.textContent = order.length === total
      ? plural(total, 'frame') : `${formatCount(order.length)} of ${plural(total, 'frame')}`;
    this.list.setCount(order.length);
    if (keepSelectionInView && state.selected >= 0) this.scrollToFrame(state.selected);
    else this.list.render();
  }

  positionOf(frameIndex) {
    let low = 0, high = this.order.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const value = this.order[middle];
      if (value === frameIndex) return middle;
      if (value < frameIndex) low = middle + 1; else high = middle - 1;
    }
    return -1;
  }

  // The listed frame next to the selection (j/k, arrows), even when the selection is filtered out.
  neighbour(step) {
    if (!this.order.length) return -1;
    if (state.selected < 0) return this.order[0];
    let low = 0, high = this.order.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.order[middle] < state.selected) low = middle + 1; else high = middle;
    }
    const exact = this.order[low] === state.selected;
    const position = step > 0 ? (exact ? low + 1 : low) : low - 1;
    return position >= 0 && position < this.order.length ? this.order[position] : -1;
  }

  scrollToFrame(frameIndex) {
    const position = this.positionOf(frameIndex);
    if (position >= 0) this.list.scrollToRow(position, 'nearest');
    else this.list.render();
  }

  renderRow(row, el) {
    const index = this.order[row];
    const frame = state.frames[index];
    if (frame.stub) frameLoader.need(index);
    const level = state.problems[index];
    const classes = ['vl-row', 'event-row', `k-${frame.kind}`];
    if (level === 3) classes.push('p-error');
    else if (level === 2) classes.push('p-warning');
    if (index === state.selected) classes.push('selected');
    if (index === state.hovered) classes.push('hovered');
    el.className = classes.join(' ');
    el.dataset.frame = String(index);
    el.id = `event-row-${index}`;
    el.setAttribute('role', 'option');
    el.setAttribute('aria-selected', String(index === state.selected));
    const where = isBinary(state.result.transport) ? place(index, frame.offset, null, state.result.transport)
      : `frame ${index} · line ${frame.line} · byte ${formatCount(frame.offset)}`;
    // The name and summary may be cut to fit the row: the tooltip has them whole.
    el.title = frame.stub ? `frame ${index} (loading)`
      : [where, frame.event, frame.summary].filter(Boolean).map(tooltipText).join('\n');
    const label = kindLabel(frame);
    setChildren(el,
      h('span', { class: 'ev-index', text: index }),
      frame.time === undefined ? null : h('span', { class: 'ev-time', text: formatSeconds(frame.time), title: 'when the frame arrived, from the start' }),
      h('span', { class: `badge kind-${frame.kind}${label === 'keep-alive' ? ' keep-alive' : ''}`, text: label }),
      frame.event ? h('span', { class: 'ev-name' }, streamNodes(frame.event)) : null,
      frame.terminated ? null : h('span', { class: 'badge cut', text: 'cut', title: 'the stream ended inside this frame' }),
      frame.issues.length ? h('span', { class: 'badge issue', text: frame.issues.join(' '), title: 'framing issues' }) : null,
      h('span', { class: 'ev-summary' }, streamNodes(frame.summary)),
    );
  }

  refresh() { this.list.render(); }

  // A screen reader follows the selected frame (j, k, the arrows) as the listbox's active option,
  // while it is one of the rows drawn.
  markActive() {
    const row = document.getElementById(`event-row-${state.selected}`);
    if (row && this.scroller.contains(row)) this.scroller.setAttribute('aria-activedescendant', row.id);
    else this.scroller.removeAttribute('aria-activedescendant');
  }
}
