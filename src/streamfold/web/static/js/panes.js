import { $ } from './dom.js';
import { EventsView } from './events.js';
import { RawView } from './raw.js';
import { Timeline } from './timeline.js';

// The panes that keep state of their own (a virtual list, a canvas): made once the page is there, then
// reached by every module that shows a frame in them.
export let rawView, eventsView, timeline;

export function createPanes() {
  rawView = new RawView($('raw-list'));
  eventsView = new EventsView($('event-list'), $('frame-search'), document.querySelector('.filters'), $('events-count'));
  timeline = new Timeline($('timeline'), $('timeline-tip'), $('timeline-legend'));
}
