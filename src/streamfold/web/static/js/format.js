
// Formatting

export function formatBytes(size) {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = size / 1024, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

const numberFormat = new Intl.NumberFormat('en');
export function formatSeconds(seconds) {
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
}

export const formatCount = (n) => numberFormat.format(n);
export const plural = (n, word) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

// A binary transport (AWS event-stream) has no lines: its frames are messages placed by byte.
const BINARY_TRANSPORTS = new Set(['aws-eventstream']);
export const isBinary = (transport) => BINARY_TRANSPORTS.has(transport);

// Where a finding or a frame is, as the CLI says it: "frame 3 · line 12", or "message 3 · byte 668".
export function place(frame, offset, line, transport) {
  if (isBinary(transport)) {
    return offset === null || offset === undefined ? `message ${frame}` : `message ${frame} · byte ${formatCount(offset)}`;
  }
  return line ? `frame ${frame} · line ${line}` : `frame ${frame}`;
}

export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

export function fieldLabel(field) {
  if (field.startsWith('tool:')) return `tool call ${field.slice(5)} arguments`;
  return { content: 'reply', reasoning: 'reasoning', refusal: 'refusal' }[field] || field;
}
