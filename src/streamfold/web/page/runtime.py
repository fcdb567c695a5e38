"""Where the page's runtime comes from: the one place its versions and hashes are declared.

The page runs streamfold's Python under Pyodide (CPython compiled to WebAssembly), taken from the npm
package `pyodide` (its runtime files: no packages, which Pyodide serves from a CDN the page never
asks), and msgspec's WebAssembly wheel from PyPI. Each download is checked against the hash below
before it is used, and kept in the cache (`$XDG_CACHE_HOME/streamfold/page`, else
`~/.cache/streamfold/page`), so a second build asks no one. Offline, `--runtime DIR` names a directory
holding an unpacked npm `pyodide` package (its files, or its `package/` folder) and the wheel; its
files are checked against the same hashes.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MSGSPEC", "PYODIDE", "PYODIDE_FILES", "Pinned", "Runtime", "RuntimeUnavailableError", "cache_dir",
           "load_runtime"]


@dataclass(frozen=True)
class Pinned:
    """A file fetched by URL, known by its sha256."""

    name: str
    url: str
    sha256: str


PYODIDE_VERSION = "314.0.8"
#: The npm package's tarball (the registry's integrity for it: sha512-74Wq1kXOC+CCEzAf...; this is its sha256).
PYODIDE = Pinned(f"pyodide-{PYODIDE_VERSION}.tgz",
                 f"https://registry.npmjs.org/pyodide/-/pyodide-{PYODIDE_VERSION}.tgz",
                 "9a52704e0ae5b07aaacb8e4fed9f1658e8024694a078695ea45ac79dee4cefcb")
#: The runtime files the page serves, from the package, each by its own hash (so an unpacked package
#: given with --runtime is checked file by file).
PYODIDE_FILES = {
    "pyodide.mjs": "1bb8cc14f9405aaa7cd4e00c12edd0a8539de9cc026618d6ee5a9663f367dc70",
    "pyodide.asm.mjs": "22514b8be6980e28a02c8b1d6387ce8dfe666fc4edf8d547cff5dce29ff4d972",
    "pyodide.asm.wasm": "e14d49ceca9b4a0e274ea918f3a898de2d3880b6e5573a6cfe1a2267ecc70329",
    "python_stdlib.zip": "2bd3394a145bfbbe5bbc9d9d6ab9136abbb986c6fef6c142b3a2962227aa5c28",
    "pyodide-lock.json": "5dc2fc119108bc148c7457dc86e7675b5c87e1cafd420b9c34c1eaef7b36c010",
}
#: msgspec's wheel for Pyodide 314's ABI (CPython 3.14, emscripten 2026_0), from PyPI.
MSGSPEC = Pinned("msgspec-0.23.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
                 "https://files.pythonhosted.org/packages/fa/33/67509d508c2ba46e7ddf00237259e4164dcebabc4650930bc432ccf57946/"
                 "msgspec-0.23.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
                 "1836f50ad87e7c56600b648a1b75c3bbcce62835cb1f489435fc5fee8d068831")

_TIMEOUT = 60.0


class RuntimeUnavailableError(Exception):
    """The runtime could not be had: the message is one line saying what and what to do."""


@dataclass(frozen=True)
class Runtime:
    """The runtime's files (name -> bytes, `PYODIDE_FILES`' names) and msgspec's wheel."""

    files: dict[str, bytes]
    msgspec_wheel: bytes


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "streamfold" / "page"


def load_runtime(given: str | os.PathLike[str] | None = None) -> Runtime:
    """The runtime from `given` (an unpacked npm package and the wheel), else from the cache, else
    downloaded into it; every file checked against its hash."""
    if given is not None:
        return _from_directory(Path(given))
    tarball = _cached(PYODIDE)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        files = {}
        for name in PYODIDE_FILES:
            member = archive.extractfile(f"package/{name}")
            if member is None:  # pragma: no cover - the hash above says it is there
                raise RuntimeUnavailableError(f"{PYODIDE.name} holds no {name}")
            files[name] = member.read()
    return Runtime(_checked_files(files, PYODIDE.name), _cached(MSGSPEC))


def _from_directory(directory: Path) -> Runtime:
    package = directory / "package" if (directory / "package" / "pyodide.mjs").exists() else directory
    files = {}
    for name in PYODIDE_FILES:
        try:
            files[name] = (package / name).read_bytes()
        except OSError as exc:
            raise RuntimeUnavailableError(
                f"--runtime {directory}: no {name} in it ({exc.strerror or exc}); give an unpacked npm "
                f"pyodide@{PYODIDE_VERSION} package (npm pack pyodide@{PYODIDE_VERSION}) and {MSGSPEC.name}") from None
    try:
        wheel = (directory / MSGSPEC.name).read_bytes()
    except OSError:
        raise RuntimeUnavailableError(
            f"--runtime {directory}: no {MSGSPEC.name} in it (pip download --only-binary=:all: --platform "
            "pyemscripten_2026_0_wasm32 --python-version 3.14 --no-deps msgspec==0.23.0)") from None
    _check(wheel, MSGSPEC.sha256, f"--runtime {directory}: {MSGSPEC.name}")
    return Runtime(_checked_files(files, f"--runtime {directory}"), wheel)


def _checked_files(files: dict[str, bytes], source: str) -> dict[str, bytes]:
    for name, data in files.items():
        _check(data, PYODIDE_FILES[name], f"{source}: {name}")
    return files


def _check(data: bytes, sha256: str, what: str) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise RuntimeUnavailableError(f"{what} is not the pinned file (sha256 {got}, expected {sha256}): "
                            f"the page is built only from the runtime streamfold was tested with")


def _cached(pinned: Pinned) -> bytes:
    """`pinned`'s bytes from the cache, or downloaded into it when it is missing or not the pinned file."""
    path = cache_dir() / pinned.name
    data: bytes
    try:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == pinned.sha256:
            return data
    except OSError:
        pass
    try:
        with urllib.request.urlopen(pinned.url, timeout=_TIMEOUT) as response:
            data = response.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise RuntimeUnavailableError(f"cannot fetch {pinned.name} from {pinned.url} ({reason}); build offline with "
                                      "--runtime DIR (see docs/page.md)") from None
    _check(data, pinned.sha256, f"{pinned.url}")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    os.replace(partial, path)  # a build interrupted mid-write leaves no half file under the real name
    return data
