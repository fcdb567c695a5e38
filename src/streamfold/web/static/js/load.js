import { backend } from './backend.js';
import { noteOpenCapture, storedName, storedSummary } from './captures.js';
import { $, clear, h, MARKED_ALL, setChildren, streamNodes, tooltipText } from './dom.js';
import { fleetSummary } from './fleet.js';
import { formatCount, plural, formatSeconds } from './format.js';
import { frameLoader, showFoldProgress, stubFrames } from './frames.js';
import { closeInput } from './input.js';
import { eventsView, rawView, timeline } from './panes.js';
import { renderJsonView } from './payload.js';
import { setHighlight } from './provenance.js';
import { inputSize } from './raw.js';
import { renderResult } from './result.js';
import { select } from './selection.js';
import { state, timings } from './state.js';

// Loading a capture.
const SEVERITY_LEVEL = { error: 3, warning: 2, info: 1 };

function setState(name) { document.body.dataset.state = name; }

export function showAlert(message) {
  const alert = $('alert');
  if (!message) { alert.hidden = true; clear(alert); return; }
  alert.replaceChildren(h('span', { text: message }),
    h('button', { type: 'button', class: 'icon', 'aria-label': 'Dismiss', text: '×', onclick: () => showAlert(null) }));
  alert.hidden = false;
}

// The inspect view's fold: the options, and the HAR entry and the lane picked.
function inspectOptions() {
  return { ...foldOptions(), entry: state.entry, lane: state.lane };
}

// A capture that interleaves replies (stream_ids, responses, agents): the lane folded, and the others to pick.
// A lane's id is the stream's, so untrusted: text only.
function renderLanePicker(view) {
  const lanes = (view && view.result && view.result.lanes) || [];
  $('lane-bar').hidden = lanes.length < 2;
  if (lanes.length < 2) return;
  $('lane-label').textContent = `Lane (${lanes[0].kind})`;
  setChildren($('lane-select'), ...lanes.map((lane) => Object.assign(
    h('option', { text: `${tooltipText(lane.id)} · from frame ${lane.first_frame}` }), { value: lane.id })));
  const followed = lanes.find((lane) => lane.followed);
  $('lane-select').value = followed ? followed.id : '';
  $('lane-note').textContent = `${formatCount(lanes.length)} replies interleaved; one is folded at a time`;
}

// A HAR (a cassette, a trace log) of several entries: the entry folded, and the others to pick (streamed ones
// first). A URL is the file's, so untrusted: text only, and a bidi or invisible character in it is spelled out.
function renderEntryPicker(view) {
  const har = view && view.har;
  $('entry-bar').hidden = !har;
  if (!har) return;
  $('entry-label').textContent = har.noun || 'HAR entry';
  const option = (entry) => Object.assign(h('option', { text: entryLabel(entry) }), { value: String(entry.index) });
  const group = (label, entries) => (entries.length
    ? Object.assign(h('optgroup', null, entries.map(option)), { label }) : null);
  const streamed = har.entries.filter((entry) => entry.streamed);
  setChildren($('entry-select'), group('streamed responses', streamed),
    group('other requests', har.entries.filter((entry) => !entry.streamed)));
  $('entry-select').value = String(har.entry);
  const count = har.entries.length;
  const noun = (har.noun || 'entry').split(' ').pop();
  const nouns = noun === 'entry' ? 'entries' : `${noun}s`;
  $('entry-note').textContent = `${formatCount(streamed.length)} of ${formatCount(count)} ${count === 1 ? noun : nouns} streamed`;
}

function entryLabel(entry) {
  const spelled = (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;
  const url = (entry.url || '(no URL)').replace(MARKED_ALL, spelled);
  const status = entry.status === null ? 'no status' : String(entry.status);
  return `${entry.streamed ? '▶ ' : entry.failed ? '✕ ' : ''}#${entry.index} ${entry.method || '?'} ${url} · ${status}`
    + `${entry.mime ? ` · ${entry.mime.replace(MARKED_ALL, spelled)}` : ''}`
    + `${entry.streamed ? ' · streamed' : entry.failed ? ' · failed' : ''}`;
}

export function setupEntryPicker() {
  $('lane-select').addEventListener('change', async () => {
    if (!state.capture) return;
    state.lane = $('lane-select').value;
    await foldCapture(state.capture);
  });
  $('entry-select').addEventListener('change', async () => {
    if (!state.capture) return;
    state.entry = $('entry-select').value;
    state.lane = null; // another entry: its own lanes
    await foldCapture(state.capture);
    // A fold that failed (an entry with no body) leaves the last one shown: its entry is the one picked.
    renderEntryPicker(state.view);
    if (state.view && state.view.har) state.entry = String(state.view.har.entry);
  });
}

// The dialect and transport picked (null: detected).
export function foldOptions() {
  return { dialect: $('dialect-select').value || null, transport: $('transport-select').value || null };
}

// Whether it was shown (false: refused, failed, or another fold started meanwhile).
export async function foldCapture(capture) {
  const token = ++state.foldToken;
  if (capture !== state.capture) state.entry = state.lane = null; // another capture: the server picks them
  state.capture = capture;
  noteOpenCapture(capture);
  showAlert(null);
  setState('loading');
  showFoldProgress(capture, capture.stored !== undefined ? 'read' : 'upload', 0, capture.size);
  const started = performance.now();
  timings.progress = { upload: 0, fold: 0, total: capture.size, reports: 0 };
  let view;
  try {
    view = await backend.fold(capture, inspectOptions(), (stage, done, total) => {
      if (token !== state.foldToken) return;
      timings.progress[stage] = done;
      timings.progress.reports++;
      showFoldProgress(capture, stage, done, total);
    });
  } catch (error) {
    if (token === state.foldToken) failLoad(error.message);
    return false;
  }
  if (token !== state.foldToken) return false;
  if (view.stored) capture.name = storedName(view.stored);
  timings.responseMs = performance.now() - started;
  const arrived = performance.now();
  timings.parsedMs = 0;
  load(view);
  await frameLoader.first;
  if (token !== state.foldToken) return false;
  timings.renderedMs = performance.now() - arrived;
  // Interactive once the first frame with the new content has been painted.
  requestAnimationFrame(() => setTimeout(() => {
    if (token !== state.foldToken) return;
    timings.interactiveMs = performance.now() - arrived;
    timings.totalMs = performance.now() - started;
    timings.frames = state.frames.length;
    // Counts the captures shown so far, so a test (or a person's script) can wait for a new one.
    document.body.dataset.foldCount = String(Number(document.body.dataset.foldCount || 0) + 1);
    setState('ready');
  }, 0));
  return true;
}

export function failLoad(message) {
  showAlert(message);
  setState(state.view ? 'ready' : 'empty');
  renderSummary();
}

function load(view) {
  const steps = {};
  let mark = performance.now();
  const step = (name) => { const now = performance.now(); steps[name] = Math.round(now - mark); mark = now; };
  state.view = view;
  state.result = view.result;
  state.frames = view.frames || stubFrames(view);
  state.selected = -1;
  state.hovered = -1;
  $('hover-label').hidden = true; // it named a frame of the last capture
  const frames = state.frames;
  const problems = new Int8Array(frames.length);
  const findingsByFrame = new Map();
  const note = (frame, severity, code, message, offset) => {
    if (frame === null || frame === undefined || frame < 0 || frame >= frames.length) return;
    problems[frame] = Math.max(problems[frame], SEVERITY_LEVEL[severity] || 1);
    if (!findingsByFrame.has(frame)) findingsByFrame.set(frame, []);
    findingsByFrame.get(frame).push({ severity, code, message, offset });
  };
  for (const error of view.result.errors) note(error.frame, 'error', error.code, error.message, error.offset);
  for (const diagnostic of view.result.diagnostics) note(diagnostic.frame, diagnostic.severity, diagnostic.code, diagnostic.message, diagnostic.offset);
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i];
    if (frame.kind === 'invalid') problems[i] = 3;
    else if ((frame.kind === 'glued' || frame.kind === 'empty' || frame.issues.length || !frame.terminated) && problems[i] < 2) problems[i] = 2;
  }
  state.problems = problems;
  state.findingsByFrame = findingsByFrame;
  const texts = new Map();
  for (const choice of view.result.choices) {
    texts.set(`${choice.index}|content`, choice.content);
    texts.set(`${choice.index}|reasoning`, choice.reasoning);
    texts.set(`${choice.index}|refusal`, choice.refusal);
    choice.tool_calls.forEach((call, position) => texts.set(`${choice.index}|tool:${position}`, call.arguments));
  }
  state.provenance = view.provenance.map(({ choice, field, runs }) => {
    const flat = new Int32Array(runs.length * 3);
    let monotonic = true;
    for (let i = 0; i < runs.length; i++) {
      flat[i * 3] = runs[i][0]; flat[i * 3 + 1] = runs[i][1]; flat[i * 3 + 2] = runs[i][2];
      if (i && runs[i][2] < runs[i - 1][2]) monotonic = false;
    }
    return { choice, field, text: texts.get(`${choice}|${field}`) || '', runs: flat, monotonic, element: null };
  });
  setHighlight('sf-selected', []);
  setHighlight('sf-hover', []);
  step('index');
  renderSummary();
  renderEntryPicker(view);
  renderLanePicker(view);
  renderResult();
  step('result');
  frameLoader.start(view);
  eventsView.setData();
  step('events');
  if (frameLoader.complete) rawView.setData(); else rawView.setLoading();
  step('raw');
  timeline.setData();
  step('timeline');
  timings.steps = steps;
  $('download-result').disabled = false;
  $('download-export').disabled = view.export === null;
  $('download-export').title = view.export === null ? (view.export_error || 'no export for this dialect') : 'Download the non-streaming object the same request would have returned';
  closeInput();
  // Start where a person would: the first frame with an error, else the first that produced text.
  let start = -1;
  for (let i = 0; i < frames.length && start < 0; i++) if (problems[i] === 3) start = i;
  if (start < 0 && state.provenance.length) start = state.provenance[0].runs[2];
  if (start < 0 && frames.length) start = 0;
  if (start >= 0) select(start, 'load');
  else renderJsonView();
  step('select');
}

// "complete" says the stream ended as it should; a reply cut at the token limit, or tool arguments
// that do not parse at the end, ended cleanly but are not whole: an amber "cut" badge says why.
function cutReasons(result) {
  const reasons = [];
  const several = result.choices.length > 1;
  for (const choice of result.choices) {
    const who = several ? `choice ${choice.index}: ` : '';
    if (choice.finish_reason === 'length') {
      reasons.push(`${who}the reply stopped at the token limit (finish reason ${JSON.stringify(choice.finish_reason_raw || choice.finish_reason)})`);
    }
    choice.tool_calls.forEach((call, position) => {
      if (call.error !== null) reasons.push(`${who}tool call ${position}'s arguments do not parse: ${call.error}`);
    });
  }
  return reasons;
}

function completeBadge(result) {
  if (!result.complete) {
    return h('span', { class: 'badge warn', text: 'incomplete',
      title: 'no terminal frame, or the server sent an error: the reply may be cut' });
  }
  const reasons = cutReasons(result);
  if (reasons.length) {
    return h('span', { class: 'badge warn cut-reply', text: 'cut',
      title: `the stream ended properly, but the reply is not whole: ${reasons.join('; ')}` });
  }
  return h('span', { class: 'badge ok', text: 'complete', title: 'the terminal frame arrived and the server sent no error' });
}

// Arrival times, when the capture has them: TTFB and TTFT (when the request's start is known; else
// the first text after the first byte), longest gap, stalls over the threshold the core used.
function timingSummary(view) {
  const timing = view.stream_timing;
  if (!timing && view.entry_timing) return entryTiming(view.entry_timing);
  if (!timing) return null;
  const stalls = view.result.diagnostics.filter((d) => d.code === 'stall').length;
  const parts = [];
  if (timing.ttfb !== null && timing.ttfb !== undefined) parts.push(`TTFB ${formatSeconds(timing.ttfb)}`);
  if (timing.ttft !== null && timing.ttft !== undefined) parts.push(`TTFT ${formatSeconds(timing.ttft)}`);
  else parts.push(timing.first_text === null || timing.first_text === undefined ? 'no text' : `first text ${formatSeconds(timing.first_text)} after the first byte`);
  parts.push(timing.gap_max === null ? 'one frame, no gaps' : `longest gap ${formatSeconds(timing.gap_max)}`);
  parts.push(stalls ? `${plural(stalls, 'stall')} over ${timing.stall_threshold} s` : `no stall over ${timing.stall_threshold} s`);
  parts.push(`${formatSeconds(timing.duration)} in all`);
  const origin = timing.origin !== 'request'
    ? 'times count from the first byte received (the capture does not say when the request was sent, so it has no TTFB or TTFT)'
    : 'times count from when the request was sent: TTFB (time to first byte) to the first byte of the body, TTFT (time to first text) to the first frame that added reply text';
  return h('span', { class: `timing-summary${stalls ? ' has-stalls' : ''}`, title: origin, text: parts.join(' · ') });
}

// A HAR's times are the entry's, not the frames': said as such.
function entryTiming(known) {
  const parts = [];
  if (known.first_byte !== undefined) parts.push(`first byte after ${formatSeconds(known.first_byte)}`);
  if (known.receive !== undefined) parts.push(`body received over ${formatSeconds(known.receive)}`);
  if (known.total !== undefined) parts.push(`${formatSeconds(known.total)} in all`);
  return h('span', { class: 'timing-summary entry-timing', text: `HAR entry: ${parts.join(', ')} (no per-frame times)`,
    title: "the HAR's own timing of the whole response; it does not say when each frame arrived" });
}

export function renderSummary() {
  const bar = $('summary-bar');
  if (!state.view) {
    const hint = state.meta && state.meta.store ? 'No capture open yet: open one from the list below, or paste one.' : 'No capture yet.';
    bar.replaceChildren(h('span', { class: 'muted', text: hint }));
    return;
  }
  const result = state.result;
  const counts = result.frames;
  // What is no stream (an HTML page, an error response, a PDF) claims no dialect or transport: its finding says what it is.
  const notAStream = (state.meta ? state.meta.not_a_stream || [] : []);
  const unread = result.diagnostics.find((finding) => notAStream.includes(finding.code));
  const items = [
    h('span', { class: 'source-name' }, streamNodes(state.capture ? state.capture.name : 'capture')),
    state.view.stored ? storedSummary(state.view.stored) : null,
    state.view.fleet ? fleetSummary(state.view.fleet) : null,
    inputSize(state.view.capture),
    unread ? h('span', { class: 'error-text', text: `not a stream (${unread.code})` }) : completeBadge(result),
    unread ? null : h('span', { text: result.dialect }),
    unread ? null : h('span', { text: result.transport }),
    result.model ? h('span', { class: 'mono' }, streamNodes(result.model)) : null,
    h('span', { class: 'muted' }, `${plural(counts.total, 'frame')}: ${formatCount(counts.data)} data, ${formatCount(counts.comments)} comments, `,
      h('span', { class: counts.invalid ? 'error-text' : '', text: `${formatCount(counts.invalid)} invalid` })),
    timingSummary(state.view),
    h('span', { class: 'muted', text: `folded in ${formatCount(state.view.timing.fold_ms)} ms` }),
  ];
  setChildren(bar, ...items.filter(Boolean).flatMap((item, i) => (i ? [h('span', { class: 'sep', text: '·' }), item] : [item])));
}
