"""The page without a server: `streamfold page build DIR` writes it as a folder of static files, where
streamfold's Python runs in the browser tab under Pyodide (CPython in WebAssembly), in a Web Worker.

    runtime.py   where the runtime and msgspec's wheel come from: pinned by version and hash, cached
    imports.py   which modules the page may import (the rest of streamfold and of the standard library
                 is left out of the folder)
    bundle.py    the folder, byte for byte reproducible
    command.py   the `page` command group
    adapter.py   runs in the browser: the worker's calls answered by PageApi (web/api.py)
    bytecode.py  runs in the browser: streamfold compiled once, kept by the worker for its later starts

The page's own files (the worker, its backend, the entry) are static/worker.js, static/page.js and
static/js/worker-backend.js, beside the served page's. Nothing here is imported by the served page.
"""
