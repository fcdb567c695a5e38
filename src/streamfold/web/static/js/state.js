
// What is open and selected, shared by every module; `timings`, what the last fold took (tests read
// them as window.streamfold.timings).

export const state = {
  meta: null,
  capture: null,      // {body: Uint8Array, name, size}
  view: null,         // the fold view (backend.fold)
  frames: [],
  result: null,
  problems: new Int8Array(0),   // per frame: 0 fine, 1 info, 2 warning, 3 error
  findingsByFrame: new Map(),
  provenance: [],     // {choice, field, text, runs: Int32Array of start,end,frame triples, monotonic, element}
  selected: -1,
  hovered: -1,
  foldToken: 0,
  entry: null,        // the HAR entry picked (its index, as text), or null: the one the server picks
  lane: null,         // the lane picked (a capture interleaving replies: its id), or null: the dialect's default
};

export const timings = {};
window.streamfold = Object.freeze({ timings });
