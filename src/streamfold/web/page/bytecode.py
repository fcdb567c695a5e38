"""streamfold's modules compiled to bytecode once in the browser, so that later starts of the page's
worker import them without compiling their sources again (about half of streamfold's import there).

The page cannot ship the bytecode: it is the runtime's CPython's (3.14), which the build does not
have. So the worker, once its first answers are out, asks for `compiled(...)`: every module of
streamfold's, compiled as an unchecked-hash .pyc (never compared with its source, which cannot change
under it: the worker keeps the archive under the build's id), zipped as it lies in __pycache__/. The
next start unpacks it beside the sources.
"""

from __future__ import annotations

import importlib.util
import io
import os
import py_compile
import zipfile

__all__ = ["compiled"]


def compiled(site_packages: str) -> bytes:
    """A zip of streamfold's modules under `site_packages` compiled, by their paths from it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for root, directories, files in os.walk(os.path.join(site_packages, "streamfold")):
            directories[:] = sorted(name for name in directories if name != "__pycache__")
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                source = os.path.join(root, name)
                written = importlib.util.cache_from_source(source)
                py_compile.compile(source, cfile=written, doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
                archive.write(written, os.path.relpath(written, site_packages))
    return buffer.getvalue()
