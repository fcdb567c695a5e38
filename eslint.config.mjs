// ESLint's flat config for the web page's JavaScript (src/streamfold/web/static: native ES modules, no
// build step). ESLint, its recommended rules and the browser's globals are npm packages locked in
// tests/node (package.json, package-lock.json), resolved from there; tests/project/test_javascript_lint.py
// installs them and runs
//     tests/node/node_modules/.bin/eslint src/streamfold/web/static
// from the repository's root, failing on any error.
import { createRequire } from 'node:module';

const require = createRequire(new URL('./tests/node/', import.meta.url));
const js = require('@eslint/js');
const globals = require('globals');

export default [
  js.configs.recommended,
  {
    files: ['src/streamfold/web/static/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A catch that ignores its error names it `_`.
      'no-unused-vars': ['error', { caughtErrorsIgnorePattern: '^_', argsIgnorePattern: '^_' }],
      // Stream content reaches the DOM as text only (tests/fronts/test_web.py checks the sinks too).
      'no-restricted-properties': ['error',
        { property: 'innerHTML', message: 'Stream data must never become markup: use text nodes.' },
        { property: 'outerHTML', message: 'Stream data must never become markup: use text nodes.' },
        { property: 'insertAdjacentHTML', message: 'Stream data must never become markup: use text nodes.' }],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      eqeqeq: ['error', 'always'],
      'no-var': 'error',
      'prefer-const': 'error',
      'no-shadow': 'error',
      'max-lines': ['error', { max: 500 }],
    },
  },
];
