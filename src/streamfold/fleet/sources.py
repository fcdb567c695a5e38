"""What a user points `fleet fold` at, made into inputs, and each input into the
rows of a batch to fold (`batch.INPUT_SCHEMA`).

A SOURCE is a file, a directory (every file under it, hidden ones left out),
a glob, or a URL fsspec knows (`s3://bucket/prefix/`, `gs://...`). Each file is
told by its first bytes: a capture store (SQLite), Parquet with a `body`
column, JSONL of capture records (`records.py`), or anything else
`streamfold show` reads, which is one capture (a HAR or a cassette: one per
entry, found by the fold). A SOURCE that cannot be listed or opened is a
`Failure` naming it; the others go on.
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..store.schema import SQLITE_MAGIC
from .records import Done, empty_record, is_records_line, jsonl_records, parquet_records, store_records
from .text import row_text

__all__ = ["UNTOLD", "Failure", "Input", "expand", "records_of", "told"]

_GLOB = frozenset("*?[")
#: The kind of a local file not opened yet.
UNTOLD = ""
#: The bytes a kind is told by, and the size below which a file is read whole to tell it.
_HEAD = 4096
_WHOLE = 1024 * 1024
_READ_ONLY = os.O_RDONLY | getattr(os, "O_BINARY", 0)


@dataclass(frozen=True, slots=True)
class Failure:
    """A SOURCE (or one input under it) that could not be used, and why, on one line."""

    input: str
    reason: str

    def __str__(self) -> str:
        return f"{self.input}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Input:
    """One input: a file that is one capture or holds many, a capture store, a JSONL or Parquet file."""

    #: Its identity across runs: an absolute path or a URL.
    key: str
    #: `file`, `store`, `jsonl`, `parquet`; a local file's is `UNTOLD` until it is read (`told`).
    kind: str
    size: int
    #: Changes when its bytes do (size and modification time, or the object's ETag).
    fingerprint: str
    #: For a URL: the fsspec filesystem and the path on it.
    fs: Any = None
    path: str = ""

    def read(self) -> bytes:
        if self.fs is not None:
            return bytes(self.fs.cat_file(self.path))
        with open(self.key, "rb") as handle:
            return handle.read()

    def open(self) -> Any:
        return self.fs.open(self.path, "rb") if self.fs is not None else open(self.key, "rb")


def expand(sources: list[str], *, exclude: str | None = None) -> tuple[list[Input], list[Failure]]:
    """Every input under `sources`, each once, in the order given (a directory's files sorted); `exclude`:
    a directory to leave out (the fleet's own output)."""
    inputs: dict[str, Input] = {}
    failures: list[Failure] = []
    skip = os.path.abspath(exclude) if exclude else None
    for source in sources:
        try:
            found = _remote(source) if "://" in source and not source.startswith("file://") else _local(source, skip)
        except _UnusableError as exc:
            failures.append(Failure(source, str(exc)))
            continue
        for item in found:
            if isinstance(item, Failure):
                failures.append(item)
            else:
                inputs.setdefault(item.key, item)
    return list(inputs.values()), failures


class _UnusableError(Exception):
    pass


def _local(source: str, skip: str | None) -> list[Input | Failure]:
    path = source.removeprefix("file://")
    paths: list[str]  # absolute and normal
    if _GLOB & set(path):
        paths = sorted(os.path.abspath(found) for found in glob.glob(path, recursive=True) if os.path.isfile(found))
        if not paths:
            raise _UnusableError("the pattern matches no file")
    elif os.path.isdir(path):
        # Its root made absolute once, a walk's paths are: `abspath` on each file costs a fleet of small files
        # more than its `stat`.
        paths = _walk(os.path.abspath(path), skip)
        if not paths:
            raise _UnusableError("the directory holds no file")
    elif os.path.exists(path):
        paths = [os.path.abspath(path)]
    else:
        raise _UnusableError("no such file or directory")
    found: list[Input | Failure] = []
    for name in paths:
        try:
            status = os.stat(name)
        except OSError as exc:
            found.append(Failure(name, f"cannot be read: {exc.strerror or exc}"))
            continue
        # Its kind is told when it is read (`records_of`): one open a file, not one to list it and one to read it.
        found.append(Input(name, UNTOLD, status.st_size, f"{status.st_size}:{status.st_mtime_ns}"))
    return found


def _walk(root: str, skip: str | None) -> list[str]:
    paths: list[str] = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith(".")
                            and os.path.abspath(os.path.join(folder, name)) != skip)
        paths.extend(os.path.join(folder, name) for name in sorted(files) if not name.startswith("."))
    return paths


def _remote(source: str) -> list[Input | Failure]:
    try:
        import fsspec
    except ImportError:
        raise _UnusableError("reading URLs needs fsspec, which is not installed: pip install 'streamfold-core[remote]' "
                        "(and the protocol's own package: s3fs for s3://, gcsfs for gs://)") from None
    try:
        fs, root = fsspec.core.url_to_fs(source)
        if _GLOB & set(root):
            paths = sorted(fs.glob(root))
        elif fs.isdir(root):
            paths = sorted(fs.find(root))
        else:
            paths = [root]
        found: list[Input | Failure] = []
        for path in paths:
            info = fs.info(path)
            if info.get("type") == "directory":
                continue
            with fs.open(path, "rb") as handle:
                head = handle.read(_HEAD)
            tag = info.get("ETag") or info.get("etag") or info.get("mtime") or info.get("LastModified") or ""
            found.append(Input(fs.unstrip_protocol(path), _kind(head), int(info.get("size") or 0),
                               f"{info.get('size')}:{tag}", fs, path))
    except ImportError as exc:  # fsspec knows the protocol but its package (s3fs, gcsfs) is missing
        raise _UnusableError(f"cannot read it: {exc}") from None
    except Exception as exc:  # credentials, network, a bucket that is not there: one line each, never a traceback
        raise _UnusableError(f"cannot read it: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
    if not found:
        raise _UnusableError("the URL names no file")
    for item in found:
        if isinstance(item, Input) and item.kind == "store":
            return [Failure(item.key, "a capture store must be a local file (copy it here first)")]
    return found


def _kind(head: bytes) -> str:
    if head.startswith(SQLITE_MAGIC):
        return "store"
    if head.startswith(b"PAR1"):
        return "parquet"
    end = head.find(b"\n")  # the first line, not a copy of the rest too
    if is_records_line(head if end < 0 else head[:end]):
        return "jsonl"
    return "file"


#: Every input kind and how its rows are read: `(input, done) -> rows`, where `done` holds the captures
#: already folded with their fingerprints, so their bytes are not read again.
_READERS: Mapping[str, Callable[[Input, Done], Iterator[dict[str, Any]]]] = {
    "file": lambda item, done: iter([_file_record(item)]),
    "store": lambda item, done: store_records(item.key, done),
    "jsonl": lambda item, done: jsonl_records(item.key, item.open, done, item.fingerprint),
    "parquet": lambda item, done: parquet_records(item.key, item.open, done, item.fingerprint),
}


def records_of(item: Input, done: Done) -> Iterator[dict[str, Any]]:
    """The rows (`batch.INPUT_SCHEMA`) of `item` still to fold. Raises `OSError`/`ValueError` (from the
    store: `StoreError`) when the input cannot be read at all: the caller says so on one line."""
    if item.kind == UNTOLD:
        return _told_records(item, done)
    return _READERS[item.kind](item, done)


def told(item: Input) -> Input:
    """`item` with its kind told by its first bytes (raises `OSError`)."""
    if item.kind != UNTOLD:
        return item
    with open(item.key, "rb") as handle:
        return dataclasses.replace(item, kind=_kind(handle.read(_HEAD)))


def _told_records(item: Input, done: Done) -> Iterator[dict[str, Any]]:
    head = _read_start(item.key, item.size + 1 if item.size < _WHOLE else _HEAD)
    kind = _kind(head[:_HEAD])
    if kind == "file":  # the commonest input, one capture: its bytes were read whole, in the same open
        yield _file_record(item, head if len(head) <= item.size else None)
        return
    yield from _READERS[kind](dataclasses.replace(item, kind=kind), done)


def _read_start(path: str, size: int) -> bytes:
    """The first `size` bytes of a file (fewer: it is shorter), in one read: a fleet of small files spends
    more on reading them than on anything but the fold, and a buffered `open` costs twice the system
    calls."""
    handle = os.open(path, _READ_ONLY)
    try:
        return os.read(handle, size)
    finally:
        os.close(handle)


def _file_record(item: Input, data: bytes | None = None) -> dict[str, Any]:
    """The row of a file that is one capture: `data`, its bytes when already read, else read now."""
    label = row_text(item.key)  # its path as the tables hold it: the capture's id and where it is
    record = empty_record(label, "file")
    try:
        record["data"] = item.read() if data is None else data
    except OSError as exc:
        record["read_error"] = f"cannot be read: {exc.strerror or exc}"
    record.update(location=label, fingerprint=item.fingerprint)
    return record
