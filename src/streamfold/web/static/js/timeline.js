import { clear, h } from './dom.js';
import { kindLabel } from './events.js';
import { debounce, formatBytes, formatCount, formatSeconds } from './format.js';
import { select } from './selection.js';
import { state } from './state.js';

// Timeline: frames and characters over arrival time when the capture has it (a curl
// --trace-time dump, a timestamped log), else over byte offset; drawn on a canvas (no library).

const TIMELINE_FIELDS = [
  { key: 'content', label: 'reply', color: '--series-content' },
  { key: 'reasoning', label: 'reasoning', color: '--series-reasoning' },
  { key: 'tool', label: 'tool arguments', color: '--series-tool' },
];
const KIND_RANK = { json: 1, done: 2, comment: 0, empty: 3, glued: 4, invalid: 5 };

export class Timeline {
  constructor(canvas, tip, legend) {
    this.canvas = canvas;
    this.tip = tip;
    this.legend = legend;
    this.width = 0;
    // Said instead of an axis when there is nothing to draw (no frames).
    this.empty = h('p', { class: 'timeline-empty', hidden: true });
    canvas.parentElement.append(this.empty);
    new ResizeObserver(debounce(() => this.draw(), 60)).observe(canvas.parentElement);
    canvas.addEventListener('mousemove', (event) => this.hover(event));
    canvas.addEventListener('mouseleave', () => { this.hideTip(); this.draw(); });
    canvas.addEventListener('click', (event) => {
      const frame = this.frameAt(event);
      if (frame >= 0) select(frame, 'timeline');
    });
  }

  hideTip() { this.tip.hidden = true; this.hoverX = null; }

  setData() {
    const frames = state.frames;
    const arrivals = state.view.arrivals;
    this.columns = null;
    this.hideTip(); // the pointer's place over the last capture says nothing about this one
    // x: seconds since the start when the capture carried arrival times (and they spread), else the byte offset.
    const timed = Array.isArray(arrivals) && arrivals.length === frames.length && frames.length > 0;
    this.byTime = timed && arrivals[frames.length - 1] > 0;
    this.offsets = new Float64Array(frames.length);
    for (let i = 0; i < frames.length; i++) this.offsets[i] = this.byTime ? arrivals[i] : frames[i].offset;
    this.total = this.byTime ? Math.max(1e-3, this.offsets[frames.length - 1]) : Math.max(1, state.view.capture.size);
    const note = document.querySelector('.timeline-note');
    if (note) note.textContent = frames.length ? axisNote(this.byTime, timed, state.view.capture.source, state.capture) : '';
    this.empty.hidden = frames.length > 0;
    const read = state.view.capture.size || state.view.capture.input_size;  // a log may hold no stream data
    this.empty.textContent = frames.length ? '' : read
      ? `No frames were found in these ${formatBytes(read)}: there is nothing to draw over time or bytes.`
      : 'The capture is empty: there is nothing to draw over time or bytes.';
    this.canvas.dataset.axis = !frames.length ? 'none' : this.byTime ? 'time' : 'bytes';
    // Characters each frame produced, per series.
    this.series = TIMELINE_FIELDS.map((field) => ({ ...field, perFrame: new Float64Array(frames.length), total: 0 }));
    for (const entry of state.provenance) {
      const series = this.series.find((s) => (entry.field.startsWith('tool:') ? 'tool' : entry.field) === s.key);
      if (!series) continue;
      const runs = entry.runs;
      for (let i = 0; i < runs.length; i += 3) {
        series.perFrame[runs[i + 2]] += runs[i + 1] - runs[i];
        series.total += runs[i + 1] - runs[i];
      }
    }
    const styles = getComputedStyle(document.body);
    clear(this.legend);
    this.legend.append(h('span', { class: 'legend-item' }, h('span', { class: 'swatch frames' }), 'frames'));
    for (const series of this.series) {
      if (!series.total) continue;
      series.stroke = styles.getPropertyValue(series.color).trim() || '#555';
      this.legend.append(h('span', { class: 'legend-item' }, h('span', { class: `swatch ${series.key}` }), `${series.label} characters`));
    }
    this.draw();
  }

  frameAt(event) {
    if (!state.frames.length) return -1;
    const rect = this.canvas.getBoundingClientRect();
    const offset = (event.clientX - rect.left - this.padLeft) / this.plotWidth * this.total;
    // The last frame starting at or before that byte.
    let low = 0, high = this.offsets.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.offsets[middle] <= offset) low = middle; else high = middle - 1;
    }
    return low;
  }

  hover(event) {
    if (!state.view) return;
    const frame = this.frameAt(event);
    if (frame < 0) { this.hideTip(); return; }
    const rect = this.canvas.getBoundingClientRect();
    this.hoverX = event.clientX - rect.left;
    const info = state.frames[frame];
    const where = this.byTime ? `at ${formatSeconds(this.offsets[frame])}` : `byte ${formatCount(info.offset)}`;
    this.tip.textContent = `frame ${frame} · ${where} · ${kindLabel(info)}`;
    this.tip.hidden = false;
    this.tip.style.left = `${Math.min(Math.max(0, this.hoverX - 60), rect.width - 220)}px`;
    this.draw();
  }

  // Per pixel column: the most alarming kind of frame starting there, and the characters
  // each series gained there. Kept until the width or the data change (hover redraws often).
  columnsFor(width) {
    if (this.columns && this.columns.width === width && this.columns.view === state.view) return this.columns;
    const frames = state.frames;
    const rank = new Int8Array(width).fill(-1);
    const perColumn = this.series.map(() => new Float64Array(width));
    for (let i = 0; i < frames.length; i++) {
      const column = Math.min(width - 1, Math.floor(this.offsets[i] / this.total * width));
      let r = KIND_RANK[frames[i].kind] ?? 1;
      if (state.problems[i] === 3) r = Math.max(r, 5);
      else if (state.problems[i] === 2) r = Math.max(r, 3);
      if (r > rank[column]) rank[column] = r;
      this.series.forEach((series, s) => { perColumn[s][column] += series.perFrame[i]; });
    }
    this.columns = { width, view: state.view, rank, perColumn };
    return this.columns;
  }

  draw() {
    const canvas = this.canvas;
    const cssWidth = canvas.parentElement.clientWidth;
    const cssHeight = canvas.parentElement.clientHeight;
    const ratio = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(cssWidth * ratio) || canvas.height !== Math.round(cssHeight * ratio)) {
      canvas.width = Math.round(cssWidth * ratio);
      canvas.height = Math.round(cssHeight * ratio);
      canvas.style.width = `${cssWidth}px`;
      canvas.style.height = `${cssHeight}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    if (!state.view || cssWidth < 50 || !state.frames.length) return;
    const styles = getComputedStyle(document.body);
    const color = (name) => styles.getPropertyValue(name).trim();
    this.padLeft = 8;
    const padRight = 8;
    this.plotWidth = Math.max(1, cssWidth - this.padLeft - padRight);
    const width = Math.max(1, Math.floor(this.plotWidth));
    const bandTop = 2, bandHeight = 12;
    const plotTop = bandTop + bandHeight + 6, axisHeight = 14;
    const plotHeight = Math.max(8, cssHeight - plotTop - axisHeight);
    const x = (offset) => this.padLeft + offset / this.total * this.plotWidth;
    const frames = state.frames;
    if (!this.offsets || this.offsets.length !== frames.length) return; // setData() draws again

    const { rank, perColumn } = this.columnsFor(width);
    const rankColor = [color('--kind-comment'), color('--kind-json'), color('--kind-done'), color('--warn'), color('--warn'), color('--err')];
    for (let column = 0; column < width; column++) {
      if (rank[column] < 0) continue;
      ctx.fillStyle = rankColor[rank[column]];
      const tall = rank[column] >= 3;
      ctx.fillRect(this.padLeft + column, bandTop + (tall ? 0 : 3), 1, tall ? bandHeight : bandHeight - 6);
    }

    // Characters: cumulative per series, over the byte offset of the frame that produced them.
    const grand = Math.max(1, ...this.series.map((s) => s.total));
    ctx.strokeStyle = color('--border');
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(this.padLeft, plotTop + plotHeight + 0.5);
    ctx.lineTo(this.padLeft + this.plotWidth, plotTop + plotHeight + 0.5);
    ctx.stroke();
    this.series.forEach((series, s) => {
      if (!series.total) return;
      const counts = perColumn[s];
      ctx.strokeStyle = series.stroke;
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      let sum = 0;
      ctx.moveTo(this.padLeft, plotTop + plotHeight);
      for (let column = 0; column < width; column++) {
        sum += counts[column];
        ctx.lineTo(this.padLeft + column + 1, plotTop + plotHeight - sum / grand * plotHeight);
      }
      ctx.stroke();
    });

    // Axis labels.
    ctx.fillStyle = color('--muted');
    ctx.font = `11px ${color('--sans') || 'sans-serif'}`;
    ctx.textBaseline = 'bottom';
    const ticks = 5;
    for (let t = 0; t <= ticks; t++) {
      const value = this.total * t / ticks;
      const label = this.byTime ? formatSeconds(value) : formatBytes(Math.round(value));
      ctx.textAlign = t === 0 ? 'left' : t === ticks ? 'right' : 'center';
      ctx.fillText(label, x(value), cssHeight);
    }
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(`${formatCount(grand)} chars`, this.padLeft + 2, plotTop);

    // The selected frame, and the pointer.
    if (state.selected >= 0 && state.selected < frames.length) {
      ctx.fillStyle = color('--accent');
      ctx.fillRect(Math.round(x(this.offsets[state.selected])) - 1, 0, 2, plotTop + plotHeight);
    }
    if (this.hoverX !== null && this.hoverX !== undefined) {
      ctx.fillStyle = color('--muted');
      ctx.fillRect(Math.round(this.hoverX), 0, 1, plotTop + plotHeight);
    }
  }
}

// What the timeline's x axis is, in words that fit where the capture came from.
function axisNote(byTime, timed, source, capture) {
  if (byTime && source === 'store') return 'x: time since the request was sent (each read as the recorder received it)';
  if (byTime) {
    const from = { 'curl-trace': "curl's --trace-time stamps", log: "the log's timestamps", har: 'the HAR' }[source] || 'the capture';
    return `x: time since the start (arrival times from ${from})`;
  }
  if (timed) return 'x: byte offset (every frame arrived in the same read: no spread in time to draw)';
  const pasted = capture && capture.name === 'pasted text';
  const why = {
    har: 'a HAR times the response as a whole, not each frame',
    cassette: 'a cassette keeps no arrival times',
    'trace-log': 'a trace log times the response as a whole, not each frame',
    'curl-verbose': 'curl -v output has no arrival times; curl --trace-time output has',
    'curl-trace': 'this trace has no timestamps; record it with --trace-time',
    log: 'the log lines carry no timestamps',
  }[source] || (pasted ? 'pasted text has no arrival times' : 'a stream body saved to a file has no arrival times');
  return `x: byte offset (${why})`;
}
