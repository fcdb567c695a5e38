"""What `streamfold serve SOURCE…` serves: each SOURCE read into named `Recording`s.

A SOURCE is any input streamfold reads (a raw body, a HAR, curl output, a log, ...; `-` is standard
input, named `stdin`), a stored capture `DB.sqlite#ID`, a whole store `DB.sqlite` (every capture in
it), or a directory (every file in it and below, in the order of their paths, but hidden files, `*.md`
and streamfold's own `*.expect.json`; a store in it gives each of its captures).
A capture is named after its file (`openai-plain-text`; under a directory, its path there without
the suffix: `openai/o3-usage-only-final-chunk`) or its store (`captures#12`); a name given twice gets
`-2`, `-3`. Each is folded once here: its frames say where the faults cut, and its transport and
dialect which faults apply.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from ..decoding import PayloadKind
from ..dialects import detect, spec_of
from ..result import Result
from ..services import Capture, InputError, read_capture
from ..services.load import fold_capture
from ..store import StoreError, list_exchanges, parse_ref, read_stored
from .plan import Recording

__all__ = ["SourceError", "read_sources", "recording_of"]

_SKIPPED_SUFFIXES = (".md", ".expect.json", ".sqlite-wal", ".sqlite-shm")


class SourceError(ValueError):
    """A SOURCE that cannot be served; the message says why."""


def recording_of(capture: Capture, name: str) -> Recording:
    """A capture read by the services layer, folded once, as a `Recording` to serve."""
    result = fold_capture(capture).result
    path = urlsplit(capture.url).path if capture.url else None
    return Recording(name=name, body=capture.body, transport=result.transport, dialect=_framed_as(result),
                     frames=tuple(result.frames), reads=capture.reads, started=capture.started,
                     status=capture.status, response_headers=capture.response_headers, path=path or None)


def _framed_as(result: Result) -> str:
    """The dialect whose payloads the capture's frames are, which the faults rewrite: the Result's, or the
    envelope's that carries it (Claude Code's `stream-json` lines fold as `anthropic`, but an error or an
    end is a `result` line there, not a Messages event)."""
    first = next((frame.index for frame in result.frames if result.frame_kinds[frame.index] is PayloadKind.JSON), None)
    claimed = detect(result.payload(first).value) if first is not None else None
    if claimed is not None and claimed.name != result.dialect and spec_of(claimed).replay is not None:
        return claimed.name
    return result.dialect


def _stem(path: Path) -> str:
    name = path.name
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def _files(directory: Path) -> list[Path]:
    """The files under `directory` in the order of their paths there, but hidden ones and non-captures."""
    found = []
    for root, folders, names in os.walk(directory):
        folders[:] = [folder for folder in folders if not folder.startswith(".")]
        found += [Path(root) / name for name in names
                  if not name.startswith(".") and not name.lower().endswith(_SKIPPED_SUFFIXES)]
    return sorted(found, key=lambda file: file.relative_to(directory).parts)


def _read_file(path: Path, name: str) -> Recording:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    try:
        return recording_of(read_capture(data), name)
    except InputError as exc:
        raise SourceError(f"{str(path)!r}: {exc}") from None


def _read_store(path: str, exchange: int | None) -> list[Recording]:
    stem = _stem(Path(path))
    try:
        ids = [exchange] if exchange is not None else sorted(row["id"] for row in list_exchanges(path))
        if not ids:
            raise SourceError(f"the capture store {path!r} holds no captures yet")
        return [recording_of(read_stored(path, number), f"{stem}#{number}") for number in ids]
    except (StoreError, InputError) as exc:
        raise SourceError(str(exc)) from None


def _read_in(directory: Path, file: Path) -> list[Recording]:
    """A file of a directory: a capture, or a store (each of its captures)."""
    try:
        ref = parse_ref(str(file))
    except StoreError:
        ref = None
    if ref is not None:
        return _read_store(*ref)
    return [_read_file(file, file.relative_to(directory).as_posix().rsplit(".", 1)[0])]


def read_sources(sources: list[str]) -> list[Recording]:
    """Every capture the SOURCE arguments name, in order. Raises `SourceError` for one that cannot be read."""
    found: list[Recording] = []
    for source in sources:
        if source == "-":
            try:
                found.append(recording_of(read_capture(sys.stdin.buffer.read()), "stdin"))
            except InputError as exc:
                raise SourceError(f"standard input: {exc}") from None
            continue
        try:
            ref = parse_ref(source) if os.path.isfile(source.rpartition("#")[0] or source) else None
        except StoreError as exc:
            raise SourceError(str(exc)) from None
        path = Path(source)
        if ref is not None:
            found.extend(_read_store(*ref))
        elif path.is_dir():
            inside = [recording for file in _files(path) for recording in _read_in(path, file)]
            if not inside:
                raise SourceError(f"the directory {source!r} holds no captures")
            found.extend(inside)
        else:
            found.append(_read_file(path, _stem(path)))
    seen: dict[str, int] = {}
    named: list[Recording] = []
    for recording in found:
        count = seen[recording.name] = seen.get(recording.name, 0) + 1
        named.append(recording if count == 1 else replace(recording, name=f"{recording.name}-{count}"))
    return named
