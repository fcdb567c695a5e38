import { h, tooltipText } from './dom.js';
import { formatCount, formatSeconds } from './format.js';

// Small charts of a fleet (web --fleet), drawn as SVG by hand: bars of counts by outcome class, and a
// histogram of latencies. No chart library: the page loads nothing from elsewhere, and these two are a
// few rectangles. Labels come from the fleet (stream data): they are only ever text nodes; colours
// come from a fixed list of classes, never from the data.

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// The outcome classes the page colours (streamfold.outcomes), worst first; another word is plain.
const OUTCOME_TONES = {
  unreadable: 'bad', 'not-a-stream': 'bad', 'client-cut': 'warn', errored: 'bad', 'upstream-cut': 'warn',
  damaged: 'bad', 'arguments-invalid': 'warn', short: 'warn', complete: 'ok',
};
export const outcomeTone = (name) => (Object.hasOwn(OUTCOME_TONES, name) ? OUTCOME_TONES[name] : 'plain');

const BAR_HEIGHT = 20, BAR_GAP = 6, LABEL_WIDTH = 130, COUNT_WIDTH = 60, BARS_WIDTH = 420;

// Horizontal bars, one per [label, count]; `onPick(label)` when one is clicked (the page filters by it).
export function outcomeBars(counts, onPick) {
  if (!counts.length) return h('p', { class: 'muted', text: 'No captures.' });
  const largest = Math.max(...counts.map(([, count]) => count));
  const space = BARS_WIDTH - LABEL_WIDTH - COUNT_WIDTH;
  const height = counts.length * (BAR_HEIGHT + BAR_GAP);
  const chart = svg('svg', { class: 'chart bars', viewBox: `0 0 ${BARS_WIDTH} ${height}`, width: BARS_WIDTH, height,
    role: 'img', 'aria-label': counts.map(([label, count]) => `${tooltipText(label)}: ${count}`).join(', ') });
  counts.forEach(([label, count], row) => {
    const shown = tooltipText(label); // SVG text shows no badge: a bidi control is spelled out, not obeyed
    const y = row * (BAR_HEIGHT + BAR_GAP);
    const width = Math.max(2, Math.round((count / largest) * space));
    const bar = svg('g', { class: `bar tone-${outcomeTone(label)}`, 'data-label': label, 'data-count': count },
      svg('title', null, `${shown}: ${formatCount(count)} captures (click to filter by it)`),
      svg('text', { x: LABEL_WIDTH - 8, y: y + BAR_HEIGHT / 2, class: 'bar-label' }, shown),
      svg('rect', { x: LABEL_WIDTH, y, width, height: BAR_HEIGHT, rx: 3 }),
      svg('text', { x: LABEL_WIDTH + width + 6, y: y + BAR_HEIGHT / 2, class: 'bar-count' }, formatCount(count)));
    bar.addEventListener('click', () => onPick(label));
    chart.append(bar);
  });
  return chart;
}

const HIST_WIDTH = 300, HIST_HEIGHT = 110, AXIS = 18;

// A histogram: `bins` are [low, high, count] in seconds, equal widths from 0.
export function latencyHistogram(name, histogram) {
  if (!histogram.count) {
    return h('p', { class: 'muted chart-empty', text: `No ${name}: no capture here has arrival times.` });
  }
  const bins = histogram.bins;
  const largest = Math.max(1, ...bins.map(([, , count]) => count));
  const slot = HIST_WIDTH / bins.length;
  const plot = HIST_HEIGHT - AXIS;
  const chart = svg('svg', { class: 'chart histogram', viewBox: `0 0 ${HIST_WIDTH} ${HIST_HEIGHT}`, width: HIST_WIDTH,
    height: HIST_HEIGHT, role: 'img', 'aria-label': `${name} of ${histogram.count} captures` });
  bins.forEach(([low, high, count], index) => {
    const height = count ? Math.max(2, Math.round((count / largest) * (plot - 4))) : 0;
    chart.append(svg('rect', { class: 'hist-bar', x: index * slot + 1, y: plot - height, width: Math.max(1, slot - 2), height,
      'data-count': count },
    svg('title', null, `${formatSeconds(low)} – ${formatSeconds(high)}: ${formatCount(count)} captures`)));
  });
  chart.append(svg('line', { class: 'axis', x1: 0, y1: plot, x2: HIST_WIDTH, y2: plot }),
    svg('text', { class: 'axis-label', x: 0, y: HIST_HEIGHT - 4 }, '0'),
    svg('text', { class: 'axis-label end', x: HIST_WIDTH, y: HIST_HEIGHT - 4 }, formatSeconds(bins[bins.length - 1][1])));
  return chart;
}
