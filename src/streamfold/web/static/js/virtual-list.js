import { h } from './dom.js';

// Virtual list: a scroller holding a spacer as tall as every row; only the
// Browsers cap an element's height (16-33 million px); taller lists scale their scrolling.
const MAX_SCROLL_HEIGHT = 8000000;
// rows in view exist, recycled from a small pool as the list scrolls.

export class VirtualList {
  constructor(scroller, rowHeight, renderRow, rendered = null) {
    this.scroller = scroller;
    this.rowHeight = rowHeight;
    this.renderRow = renderRow;
    this.rendered = rendered;
    this.count = 0;
    this.first = 0;
    this.pool = [];
    this.spacer = h('div', { class: 'vl-spacer' });
    this.layer = h('div', { class: 'vl-layer' });
    this.spacer.append(this.layer);
    scroller.replaceChildren(this.spacer);
    this.pending = false;
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(scroller);
  }

  setCount(count) {
    this.count = count;
    this.totalHeight = count * this.rowHeight;
    this.spacerHeight = Math.min(this.totalHeight, MAX_SCROLL_HEIGHT);
    this.spacer.style.height = `${this.spacerHeight}px`;
    this.render();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }

  // Where the view's top is in the list's full height (differs from scrollTop only when scaled).
  virtualTop() {
    const view = this.scroller.clientHeight;
    const scrollTop = this.scroller.scrollTop;
    if (this.totalHeight <= this.spacerHeight) return scrollTop;
    const scrollRange = this.spacerHeight - view;
    return scrollRange > 0 ? scrollTop / scrollRange * (this.totalHeight - view) : 0;
  }

  render() {
    const view = this.scroller.clientHeight;
    const virtualTop = this.virtualTop();
    const first = Math.max(0, Math.min(Math.floor(virtualTop / this.rowHeight), this.count - 1));
    const visible = Math.ceil(view / this.rowHeight) + 2;
    const last = Math.min(this.count, first + visible);
    const layerTop = Math.max(0, Math.min(this.scroller.scrollTop - (virtualTop - first * this.rowHeight),
      this.spacerHeight - (last - first) * this.rowHeight));
    this.layer.style.transform = `translateY(${layerTop}px)`;
    while (this.pool.length < last - first) {
      const row = h('div', { class: 'vl-row' });
      this.pool.push(row);
      this.layer.append(row);
    }
    for (let i = 0; i < this.pool.length; i++) {
      const row = this.pool[i];
      if (first + i < last) {
        row.hidden = false;
        this.renderRow(first + i, row);
      } else {
        row.hidden = true;
        row.removeAttribute('id'); // a row drawn again may take its id
      }
    }
    this.first = first;
    if (this.rendered) this.rendered();
  }

  // Bring a row into view; `where`: 'nearest' (only if hidden) or 'upper' (a quarter down the view).
  scrollToRow(index, where = 'nearest') {
    const view = this.scroller.clientHeight;
    const top = index * this.rowHeight;
    const current = this.virtualTop();
    if (where === 'nearest' && top >= current && top + this.rowHeight <= current + view) { this.render(); return; }
    let target = where === 'nearest' && top > current ? top + this.rowHeight - view : top;
    if (where === 'upper') target = top - Math.floor(view / 4);
    target = Math.max(0, Math.min(target, this.totalHeight - view));
    if (this.totalHeight <= this.spacerHeight) this.scroller.scrollTop = target;
    else this.scroller.scrollTop = target / (this.totalHeight - view) * (this.spacerHeight - view);
    this.render();
  }

  isRowVisible(index) {
    const top = index * this.rowHeight;
    const current = this.virtualTop();
    return top >= current && top + this.rowHeight <= current + this.scroller.clientHeight;
  }
}
