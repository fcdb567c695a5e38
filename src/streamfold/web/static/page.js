/*
 * The static page's entry (`streamfold page build` writes an index.html that loads this module instead
 * of app.js): the page with the Web Worker's backend (js/worker-backend.js, the Python core under
 * Pyodide in this tab) in place of the local server's. app.js starts the page once the document is
 * parsed, after this module has run.
 */
import './app.js';
import { useBackend } from './js/backend.js';
import { workerBackend } from './js/worker-backend.js';

useBackend(workerBackend);
