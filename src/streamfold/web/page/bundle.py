"""The static page's folder: what `streamfold page build DIR` writes, byte for byte the same at each
build of the same sources and runtime (zip entries sorted, their times fixed).

    index.html                the served page's, in static mode: relative paths, the worker's entry
                              (static/page.js), its Content-Security-Policy in a <meta>
    static/                   the page's CSS and ES modules, the Web Worker (static/worker.js)
    runtime/                  Pyodide's runtime files (`runtime.PYODIDE_FILES`; the standard library
                              cut to what the page imports, `imports.py`, the lock file to its
                              `info`), msgspec's wheel,
                              streamfold-VERSION.zip (the core and web/api.py, nothing of the
                              server's), files.json (the build's id, the worker's names for the last two)
    streamfold-page.json      what was built from what, and every file's sha256

A folder that holds anything else is refused rather than written over; an earlier build's files are
replaced.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import zipfile
from pathlib import Path

from ... import __version__
from .imports import NEVER_IN_A_TAB, PAGE_ROOTS, RUNTIME_ROOTS, SERVER_ONLY, closure
from .runtime import MSGSPEC, PYODIDE_VERSION, Runtime

__all__ = ["CONTENT_SECURITY_POLICY", "MANIFEST", "BuildError", "build_files", "write_build"]

STATIC = Path(__file__).resolve().parents[1] / "static"
PACKAGE = Path(__file__).resolve().parents[2]
MANIFEST = "streamfold-page.json"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no build's clock in its bytes

#: The served page's policy (web/access.py), as a static host cannot send it: in a <meta>, where
#: frame-ancestors is not read; plus what the runtime needs: WebAssembly compiled from the page's own
#: wasm ('wasm-unsafe-eval': no JavaScript eval) and the worker from the page's origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'")

_STATIC_NOTE = ("Everything stays in this browser tab: streamfold's Python runs here, in WebAssembly. A dropped "
                ".sqlite capture store lists its captures. Live capture lists, fleets, recording and replaying "
                "need the streamfold program (pip install streamfold).")

#: The served index.html's text -> the static page's (each must be found exactly once).
_STATIC_MODE = (
    ('<meta charset="utf-8">\n', '<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="'
     + CONTENT_SECURITY_POLICY + '">\n'),
    ('href="/static/favicon.svg"', 'href="static/favicon.svg"'),
    ('href="/static/app.css"', 'href="static/app.css"'),
    ('src="/static/app.js"', 'src="static/page.js"'),
    ("Everything stays on this machine.", _STATIC_NOTE),
)


class BuildError(Exception):
    """The folder could not be written: the message is one line."""


def build_files(runtime: Runtime) -> dict[str, bytes]:
    """Every file of the folder, by its path in it (without the manifest)."""
    files = {f"static/{path.relative_to(STATIC).as_posix()}": path.read_bytes()
             for path in sorted(STATIC.rglob("*")) if path.is_file() and path.name != "index.html"}
    files["index.html"] = _static_index((STATIC / "index.html").read_text(encoding="utf-8")).encode()
    ours, stdlib = _page_modules(runtime.files["python_stdlib.zip"])
    archive = f"streamfold-{__version__}.zip"
    served = {"python_stdlib.zip": stdlib,
              "pyodide-lock.json": _lock_without_packages(runtime.files["pyodide-lock.json"])}
    for name, data in runtime.files.items():
        files[f"runtime/{name}"] = served.get(name, data)
    files[f"runtime/{MSGSPEC.name}"] = runtime.msgspec_wheel
    files[f"runtime/{archive}"] = ours
    # The build's id names what the worker keeps in the browser (Python's memory, made from these files).
    build = hashlib.sha256(b"".join(hashlib.sha256(files[f"runtime/{name}"]).digest() for name in sorted(
        [*runtime.files, MSGSPEC.name, archive]))).hexdigest()[:16]
    files["runtime/files.json"] = _json({"build": build, "msgspec": MSGSPEC.name, "streamfold": archive})
    return files


def write_build(directory: Path, files: dict[str, bytes]) -> dict[str, object]:
    """`files` and the manifest written under `directory` (an earlier build's files removed first);
    the manifest returned."""
    manifest: dict[str, object] = {
        "streamfold": __version__, "pyodide": PYODIDE_VERSION, "msgspec": MSGSPEC.name,
        "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}}
    _clear(directory)
    for path, data in sorted(files.items()):
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (directory / MANIFEST).write_bytes(_json(manifest))
    return manifest


def _static_index(served: str) -> str:
    page = served
    for old, new in _STATIC_MODE:
        if page.count(old) != 1:
            raise BuildError(f"the served page's index.html no longer holds {old.strip()!r} once: the static build "
                             "(streamfold/web/page/bundle.py) must learn its new shape")
        page = page.replace(old, new)
    return page


def _page_modules(stdlib_zip: bytes) -> tuple[bytes, bytes]:
    """(streamfold's archive, the standard library's), each with only the modules the page may import."""
    ours = {_module_name(path.relative_to(PACKAGE.parent).as_posix()): path
            for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts}
    with zipfile.ZipFile(io.BytesIO(stdlib_zip)) as source:
        stdlib = {info.filename: source.read(info) for info in source.infolist() if not info.is_dir()}
    stdlib_modules = {_module_name(name): name for name in stdlib if name.endswith(".py")}

    def text(module: str) -> tuple[str, bool] | None:
        if module in ours:
            return ours[module].read_text(encoding="utf-8"), ours[module].name == "__init__.py"
        if module in stdlib_modules:
            name = stdlib_modules[module]
            return stdlib[name].decode("utf-8", "replace"), name.endswith("/__init__.py")
        return None

    kept = closure([*PAGE_ROOTS, *RUNTIME_ROOTS], text, [*ours, *stdlib_modules],
                   excluded=(*SERVER_ONLY, *NEVER_IN_A_TAB))
    archive = {ours[module].relative_to(PACKAGE.parent).as_posix(): ours[module].read_bytes()
               for module in kept if module in ours}
    packages = {module for module in kept if module in stdlib_modules}
    trimmed = {name: data for name, data in stdlib.items() if _in_kept(name, packages)}
    return _zip(archive), _zip(trimmed)


def _lock_without_packages(lock: bytes) -> bytes:
    """Pyodide's lock file without its packages (120 KB): the page installs none from its CDN, only the
    wheel beside it, by URL; the runtime still reads the lock's `info` (its ABI) as it starts."""
    return _json({"info": json.loads(lock)["info"], "packages": {}})


def _in_kept(name: str, kept: set[str]) -> bool:
    """Whether a file of the standard library's zip is a kept module, or data of a kept package."""
    if name.endswith(".py"):
        return _module_name(name) in kept
    return name.rpartition("/")[0].replace("/", ".") in kept


def _module_name(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name], compresslevel=9)
    return buffer.getvalue()


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()


def _clear(directory: Path) -> None:
    """An earlier build's files removed; a folder with anything else in it refused."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise BuildError(f"{directory} is a file, not a folder to build the page in")
    found = [entry.name for entry in directory.iterdir()]
    if not found:
        return
    try:
        earlier = json.loads((directory / MANIFEST).read_bytes())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BuildError(f"{directory} is not empty and holds no earlier page build ({MANIFEST}): give an empty "
                         "or a new folder") from None
    ours = {str(path).split("/")[0] for path in earlier} | {MANIFEST}
    stray = sorted(set(found) - ours)
    if stray:
        raise BuildError(f"{directory} holds files the last page build did not write ({', '.join(stray[:3])}): "
                         "give an empty or a new folder")
    for name in found:
        path = directory / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            os.remove(path)
