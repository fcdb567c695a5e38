import { backend } from './backend.js';
import { latencyHistogram, outcomeBars, outcomeTone } from './charts.js';
import { $, h, streamNodes, tooltipText } from './dom.js';
import { formatCount, formatSeconds, plural } from './format.js';
import { foldCapture, showAlert } from './load.js';
import { onMode, showMode } from './modes.js';
import { state } from './state.js';

// A fleet (streamfold web --fleet DIR): its reports as tables with their SQL, the captures a filter
// keeps (by dialect, model, outcome class, finding code: the values the fleet holds) as charts and a
// paged list, and one click opens a capture in Inspect. The server opens it by its capture_id, from
// where the fleet says it came from; the page never names a path. Every value here came from the fleet,
// that is from recorded streams: text nodes only.

const FILTERS = [['dialect', 'Dialect'], ['model', 'Model'], ['outcome', 'Outcome'], ['finding', 'Finding code']];
const PAGE_SIZE = 100;

export const fleetList = {
  filters: { dialect: null, model: null, outcome: null, finding: null },
  offset: 0,
  total: 0,
  rows: [],
  token: 0,
  loads: 0,
};

export function hashFleetCapture() {
  const match = /^#fleet=(.+)$/.exec(location.hash);
  if (!match) return null;
  try { return decodeURIComponent(match[1]); } catch (_) { return null; }
}

// The end of a capture id (a path, then #entry or #record for one of many): the file's name and its part,
// or a lone file's folder and name, enough to tell captures apart in a list (the whole id is the title).
function shortId(id) {
  const cut = id.indexOf('#');
  const path = cut < 0 ? id : id.slice(0, cut);
  const tail = cut < 0 ? path.split('/').slice(-2).join('/') : `${path.split('/').pop()}${id.slice(cut)}`;
  return tail.length > 60 ? `…${tail.slice(-59)}` : tail;
}

const cell = (value, cls) => h('td', { class: cls },
  value === null || value === undefined || value === '' ? h('span', { class: 'faint', text: '—' }) : streamNodes(String(value)));

function captureRow(row, index) {
  const codes = row.finding_codes || [];
  const tr = h('tr', { class: 'fleet-row', tabindex: '0', dataset: { index: String(index), outcome: row.outcome_class },
    title: `${tooltipText(row.capture_id)}\nopen it in Inspect` },
  h('td', { class: 'mono' }, h('button', { type: 'button', class: 'link fleet-open' }, streamNodes(shortId(row.capture_id)))),
  cell(row.started_at ? row.started_at.replace('T', ' ').slice(0, 19) : null, 'nowrap'),
  cell(row.dialect),
  cell(row.model, 'mono'),
  cell(row.host, 'mono'),
  h('td', null, h('span', { class: `badge outcome-${outcomeTone(row.outcome_class)}`, text: row.outcome_class,
    title: tooltipText(row.read_error || row.outcome_class) })),
  cell(row.status, `c-num${row.status >= 400 ? ' error-text' : ''}`),
  cell(row.ttft === null ? null : formatSeconds(row.ttft), 'c-num'),
  cell(row.frames_total, 'c-num'),
  h('td', { class: codes.length ? 'warn-text' : 'faint', title: tooltipText(codes.join(', ')) || 'no findings' }, String(codes.length)));
  return tr;
}

function renderFilters(values) {
  const bar = $('fleet-filters');
  bar.replaceChildren(...FILTERS.map(([name, label]) => {
    const select = h('select', { dataset: { filter: name }, 'aria-label': `Filter by ${label.toLowerCase()}` },
      Object.assign(h('option', { text: `all (${(values[name] || []).length})` }), { value: '' }),
      ...(values[name] || []).map(([value, count]) => Object.assign(h('option', { text: `${tooltipText(value)} (${formatCount(count)})` }),
        { value })));
    select.addEventListener('change', () => setFilter(name, select.value || null));
    return h('label', { class: 'select-label' }, `${label} `, select);
  }), h('button', { type: 'button', class: 'link fleet-clear', text: 'Clear filters', onclick: clearFilters }));
}

function setFilter(name, value) {
  fleetList.filters[name] = value;
  const select = document.querySelector(`#fleet-filters select[data-filter="${name}"]`);
  // A value the list does not hold (a class picked from the chart) is added, so the select says it.
  if (value !== null && ![...select.options].some((option) => option.value === value)) {
    select.append(Object.assign(h('option', { text: tooltipText(value) }), { value }));
  }
  select.value = value ?? '';
  fleetList.offset = 0;
  listCaptures();
}

function clearFilters() {
  for (const name of Object.keys(fleetList.filters)) fleetList.filters[name] = null;
  for (const select of document.querySelectorAll('#fleet-filters select')) select.value = '';
  fleetList.offset = 0;
  listCaptures();
}

async function listCaptures() {
  const token = ++fleetList.token;
  $('fleet-status').textContent = 'Asking the fleet…';
  let answer;
  try {
    answer = await backend.fleetCaptures(fleetList.filters, fleetList.offset, PAGE_SIZE);
  } catch (error) {
    if (token === fleetList.token) { $('fleet-status').textContent = ''; showAlert(error.message); }
    return;
  }
  if (token !== fleetList.token) return;
  fleetList.rows = answer.rows;
  fleetList.total = answer.total;
  const first = answer.total ? answer.offset + 1 : 0;
  const last = answer.offset + answer.rows.length;
  $('fleet-status').textContent = `${formatCount(first)}–${formatCount(last)} of ${plural(answer.total, 'capture')}`;
  $('fleet-prev').disabled = answer.offset === 0;
  $('fleet-next').disabled = last >= answer.total;
  $('fleet-rows').replaceChildren(...answer.rows.map(captureRow));
  $('fleet-empty').hidden = answer.rows.length > 0;
  $('fleet-outcomes').replaceChildren(outcomeBars(answer.outcomes, (label) => setFilter('outcome', label)));
  $('fleet-latency').replaceChildren(
    ...['ttfb', 'ttft'].map((name) => h('figure', { class: 'chart-figure' },
      h('figcaption', { text: `${name.toUpperCase()} · ${plural(answer.latency[name].count, 'capture')}`,
        title: name === 'ttfb' ? 'time to first byte: from the request to the first byte of the body'
          : 'time to first text: from the request to the first frame that added reply text' }),
      latencyHistogram(name.toUpperCase(), answer.latency[name]))));
  fleetList.loads++;
  document.body.dataset.fleetLoads = String(fleetList.loads);
  document.body.dataset.fleetTotal = String(answer.total);
}

function reportValue(value) {
  if (Array.isArray(value)) return value.join(', ');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

function renderReports(reports) {
  $('fleet-reports').replaceChildren(...reports.map((report) => {
    const body = report.error
      ? h('p', { class: 'error-text', text: `This report failed: ${report.error}` })
      : !report.rows.length ? h('p', { class: 'muted' }, streamNodes(report.when_empty))
      : h('div', { class: 'report-table-wrap' }, h('table', { class: 'report-table' },
        h('thead', null, h('tr', null, report.columns.map((name) => h('th', null, streamNodes(name))))),
        h('tbody', null, report.rows.map((row) => h('tr', null, row.map((value) => cell(reportValue(value), typeof value === 'number' ? 'c-num' : '')))))));
    return h('section', { class: 'report', dataset: { report: report.name } },
      h('h3', null, streamNodes(report.title)),
      h('p', { class: 'muted' }, streamNodes(report.question)),
      h('details', { class: 'report-sql' }, h('summary', { text: 'SQL' }), h('pre', { class: 'mono' }, streamNodes(report.sql))),
      body,
      report.more ? h('p', { class: 'muted', text: `The first ${formatCount(report.rows.length)} rows; streamfold fleet report prints them all.` }) : null);
  }));
}

// Open a capture of the fleet in Inspect (the URL keeps it: #fleet=ID); back to the fleet if it cannot be.
export async function openFleetCapture(id, row = null) {
  history.replaceState(null, '', `#fleet=${encodeURIComponent(id)}`);
  showMode('inspect');
  const size = row && row.body_bytes ? row.body_bytes : 0;
  const opened = await foldCapture({ fleet: id, name: shortId(id), size });
  if (!opened) showMode('fleet');
}

// The summary bar's word on a fleet's capture: its class as the fleet has it, and the way back.
export function fleetSummary(row) {
  return h('span', { class: 'fleet-summary' },
    h('span', { class: `badge outcome-${outcomeTone(row.outcome_class)}`, text: row.outcome_class,
      title: `the fleet's outcome class for it${row.location ? `; read again from ${tooltipText(row.location)}` : ''}` }), ' ',
    h('button', { type: 'button', class: 'link', text: 'Back to the fleet', onclick: () => showMode('fleet') }));
}

export async function setupFleet(fleet) {
  document.body.classList.add('has-fleet');
  $('mode-fleet').hidden = false;
  $('fleet-name').textContent = fleet.name;
  $('fleet-prev').addEventListener('click', () => { fleetList.offset = Math.max(0, fleetList.offset - PAGE_SIZE); listCaptures(); });
  $('fleet-next').addEventListener('click', () => { fleetList.offset += PAGE_SIZE; listCaptures(); });
  const open = (event) => {
    const tr = event.target.closest('.fleet-row');
    if (tr) openFleetCapture(fleetList.rows[Number(tr.dataset.index)].capture_id, fleetList.rows[Number(tr.dataset.index)]);
  };
  $('fleet-rows').addEventListener('click', open);
  $('fleet-rows').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.target.classList.contains('fleet-row')) { event.preventDefault(); open(event); }
  });
  window.addEventListener('hashchange', () => {
    const id = hashFleetCapture();
    if (id !== null && !(state.capture && state.capture.fleet === id)) openFleetCapture(id);
  });
  onMode('fleet', () => history.replaceState(null, '', location.pathname + location.search));
  let summary;
  try {
    summary = await backend.fleet();
  } catch (error) {
    showAlert(error.message);
    return;
  }
  $('fleet-count').textContent = plural(summary.captures, 'capture');
  renderFilters(summary.filters);
  renderReports(summary.reports);
  await listCaptures();
}
