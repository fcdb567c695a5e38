import { backend } from './backend.js';
import { $, h } from './dom.js';
import { formatBytes, formatCount } from './format.js';
import { showAlert } from './load.js';
import { eventsView, rawView, timeline } from './panes.js';
import { renderJsonView } from './payload.js';
import { state, timings } from './state.js';

// Frames by range. The fold answers with its progress, then the result without
// the frames' rows (backend.fold); the rows come from backend.frames by range:
// the ones in view first, then the rest in order, so the raw view, the search
// and the timeline get every frame in the end.

const FRAME_RANGE = 2000;
const KIND_NAMES = { j: 'json', c: 'comment', d: 'done', e: 'empty', g: 'glued', i: 'invalid' };

// Stand-ins for the rows not here yet: the kind is known, the place estimated (timeline).
export function stubFrames(view) {
  const count = view.frame_count, kinds = view.frame_kinds || '', size = view.capture.size;
  const frames = new Array(count);
  for (let i = 0; i < count; i++) {
    frames[i] = { stub: true, index: i, kind: KIND_NAMES[kinds[i]] || 'json', offset: Math.floor(i * size / Math.max(1, count)),
      line: null, event: null, terminated: true, issues: [], summary: '…', raw: '', size: 0 };
  }
  return frames;
}

export function showFoldProgress(capture, stage, done, total) {
  const doing = { upload: 'Sending', read: 'Reading' }[stage] || 'Folding';
  $('summary-bar').replaceChildren(h('span', { class: 'spinner', 'aria-hidden': true }),
    h('span', { text: `${doing} ${capture.name}: ${formatBytes(done)} of ${formatBytes(total)}` }),
    Object.assign(h('progress', { class: 'fold-progress', 'aria-label': `${doing} progress` }),
      { max: Math.max(1, total), value: Math.min(done, total) }));
}

class FrameLoader {
  constructor() { this.token = 0; this.complete = true; }

  start(view) {
    this.token++;
    this.view = view;
    this.foldId = view.fold_id;
    const count = view.frames ? 0 : view.frame_count;
    this.ranges = Math.ceil(count / FRAME_RANGE);
    this.loaded = new Uint8Array(this.ranges);
    this.loadedCount = 0;
    this.inFlight = new Map();
    this.started = performance.now();
    this.complete = this.ranges === 0;
    document.body.dataset.framesLoaded = this.complete ? 'all' : '0';
    // The first range comes first (the page is ready with it: every frame of a small capture).
    this.first = this.complete ? Promise.resolve() : this.fetchRange(0);
    if (!this.complete) this.background(this.token);
  }

  // The row of frame `index` is wanted now (it is in view, or selected).
  need(index) {
    const range = Math.floor(index / FRAME_RANGE);
    if (range < this.ranges && !this.loaded[range]) this.fetchRange(range);
  }

  async background(token) {
    for (let range = 0; range < this.ranges && token === this.token; range++) {
      if (!this.loaded[range]) await this.fetchRange(range);
    }
  }

  fetchRange(range) {
    if (this.inFlight.has(range)) return this.inFlight.get(range);
    const token = this.token;
    const promise = (async () => {
      let answer;
      try {
        answer = await backend.frames(this.foldId, range * FRAME_RANGE, FRAME_RANGE);
      } catch (error) {
        if (token === this.token) showAlert(`Frames ${formatCount(range * FRAME_RANGE)} on did not load: ${error.message}`);
        this.token++; // stop loading this fold
        return;
      } finally {
        this.inFlight.delete(range);
      }
      if (token !== this.token || this.loaded[range]) return;
      this.take(range, answer.frames);
    })();
    this.inFlight.set(range, promise);
    return promise;
  }

  take(range, rows) {
    for (const row of rows) {
      state.frames[row.index] = row;
      if ((row.issues.length || !row.terminated) && state.problems[row.index] < 2) state.problems[row.index] = 2;
    }
    eventsView.fitNames(rows);
    this.loaded[range] = 1;
    this.loadedCount++;
    if (range === 0) timings.firstRangeMs = performance.now() - this.started;
    document.body.dataset.framesLoaded = String(Math.min(state.frames.length, this.loadedCount * FRAME_RANGE));
    eventsView.refresh();
    const selected = state.selected;
    if (selected >= range * FRAME_RANGE && selected < (range + 1) * FRAME_RANGE) renderJsonView();
    if (this.loadedCount === this.ranges) this.finish();
    else $('raw-sub').textContent = `loading frames… ${formatCount(this.loadedCount * FRAME_RANGE)} of ${formatCount(state.frames.length)}`;
  }

  // Every row is here: lay out the raw view, place the frames on the timeline, search them all.
  finish() {
    this.complete = true;
    timings.allFramesMs = performance.now() - this.started;
    rawView.setData();
    timeline.setData();
    eventsView.haystack = null;
    if (eventsView.search.value.trim() || eventsView.filter !== 'all') eventsView.apply(true);
    if (state.selected >= 0) rawView.scrollToFrame(state.selected, true);
    document.body.dataset.framesLoaded = 'all';
  }
}

export const frameLoader = new FrameLoader();
