"""The page's operations as plain functions: what each of its requests asks for, answered with
JSON-ready values (dicts, lists, str, numbers) or bytes, and no HTTP anywhere.

    PageApi.meta()                              version, dialects, transports, size limit, FILE, --db store
    PageApi.opened_file()                       the bytes of the command line's FILE
    PageApi.fold(body, options)                 the fold view (`fold_view.py`); frames="range": without its
                                                rows, which come from PageApi.frames (`ranges.py`)
    PageApi.frames(fold_id, start, count)       rows of a fold kept by a frames="range" fold
    PageApi.diff(body, left_size, options)      two captures compared (`diff.py`)
    PageApi.captures(since, limit)              the --db store's captures (`stored.py`)
    PageApi.stored_fold(id, options)            a stored capture folded with its arrival times
    PageApi.stored_body(id)                     its stream body, inflated
    PageApi.fleet()                             the --fleet directory's reports and filter values (`fleet_view.py`)
    PageApi.fleet_captures(filters, offset, limit)
                                                the captures a filter keeps, a page of them, their outcome counts
                                                and latency histograms
    PageApi.fleet_fold(capture_id, options)     a fleet's capture opened again from where its row says, folded
    PageApi.fleet_body(capture_id)              its stream body

`options` come from `fold_options(dialect, transport, entry)`. Arguments that come from a URL's
query are taken as the text the page sent and checked here. A refusal is `ApiError(status,
sentence)`. The starlette app (`app.py`) is one adapter over these, adding what only a server
needs (who may ask, request sizes, how many folds at once); a Web Worker running the core under
Pyodide is meant to be another, answering the page's backend interface (static/js/backend.js)
with the same calls.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from .. import __version__
from ..dialects import DIALECTS
from ..framing.sniff import TRANSPORTS
from ..services import NOT_A_STREAM, InputError
from ..services.inputs import Capture
from .diff import diff_captures
from .fleet_view import DEFAULT_PAGE, FleetSource, fleet_filters, page_bounds
from .fold_view import build_fold_view, read_posted
from .ranges import MAX_RANGE, FoldStore, frames_range
from .refusal import ApiError, TooLargeError
from .stored import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, StoreSource, parse_id

__all__ = ["DEFAULT_MAX_SIZE", "ApiError", "FoldOptions", "PageApi", "fold_options"]

DEFAULT_MAX_SIZE = 64 * 1024 * 1024

#: The longest `entry` option taken (a part of a URL).
_MAX_ENTRY = 2000
#: The longest fleet capture id taken (a path, and a HAR entry or a record after it).
_MAX_CAPTURE_ID = 8192

_NO_STORE = "no capture store was given: start the page with streamfold web --db PATH"
_NO_FLEET = "no fleet was given: start the page with streamfold web --fleet DIR"

Progress = Callable[[int, int], None]
_T = TypeVar("_T")


@dataclass(frozen=True)
class FoldOptions:
    """How to fold: a dialect and a transport forced (None: detected), the HAR entry (cassette
    interaction, trace log record) to fold (None: the first streamed one)."""

    dialect: str | None = None
    transport: str | None = None
    entry: str | None = None
    #: The lane to fold, of a capture that interleaves replies (None: the dialect's default).
    lane: str | None = None


def fold_options(dialect: str | None = None, transport: str | None = None, entry: str | None = None,
                 lane: str | None = None) -> FoldOptions:
    """The options checked (an empty text is no option)."""
    dialect, transport, entry, lane = dialect or None, transport or None, entry or None, lane or None
    if dialect is not None and dialect not in DIALECTS:
        raise ApiError(400, f"unknown dialect {dialect!r}; known: {', '.join(sorted(DIALECTS))}")
    if transport is not None and transport not in TRANSPORTS:
        raise ApiError(400, f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")
    if entry is not None and len(entry) > _MAX_ENTRY:
        raise ApiError(400, f"entry must be an entry's number (a HAR entry, a cassette interaction, a trace log "
                            f"record) or a part of its URL, at most {_MAX_ENTRY} characters")
    if lane is not None and len(lane) > _MAX_ENTRY:
        raise ApiError(400, f"lane must be a lane's id, at most {_MAX_ENTRY} characters")
    return FoldOptions(dialect, transport, entry, lane)


class PageApi:
    """The operations of one page: `capture_path`, a file it opens on load; `max_size`, the largest
    capture folded, in bytes (a diff's two captures count together, a gzip one counts inflated);
    `kept_folds`, how many frames="range" folds are kept for their ranges; `db_path`, a capture store
    it lists (it need not exist yet: a recorder may create it); `open_stored`, the stored capture
    opened on load (an id, or the latest); `fleet_path`, a fleet directory (`streamfold fleet fold`'s) it
    reports on. Every call may block (folding, reading files, SQLite and DuckDB)."""

    def __init__(self, *, capture_path: str | os.PathLike[str] | None = None, max_size: int = DEFAULT_MAX_SIZE,
                 kept_folds: int = 4, db_path: str | os.PathLike[str] | None = None,
                 open_stored: int | Literal["latest"] | None = None,
                 fleet_path: str | os.PathLike[str] | None = None) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be positive, got {max_size!r}")
        if open_stored is not None and db_path is None:
            raise ValueError("open_stored needs db_path: the store it is in")
        self.capture = Path(capture_path) if capture_path is not None else None
        self.store = StoreSource(db_path) if db_path is not None else None
        self.fleet_source = FleetSource(fleet_path) if fleet_path is not None else None
        self.max_size = max_size
        self.open_stored = open_stored
        self.kept = FoldStore(kept_folds)

    def use_store(self, db_path: str | os.PathLike[str]) -> None:
        """List the store at `db_path` from now on (the static page's: one a person dropped)."""
        self.store = StoreSource(db_path)

    def meta(self) -> dict[str, Any]:
        described = None
        if self.capture is not None:
            try:
                described = {"name": self.capture.name, "size": self.capture.stat().st_size}
            except OSError as exc:
                described = {"name": self.capture.name, "error": _reason(exc)}
        listed = None if self.store is None else {"name": self.store.name, "open": self.open_stored}
        fleet = None if self.fleet_source is None else {"name": self.fleet_source.name}
        return {"version": __version__, "dialects": sorted(DIALECTS), "transports": list(TRANSPORTS),
                "max_size": self.max_size, "capture": described, "store": listed, "fleet": fleet,
                "not_a_stream": sorted(NOT_A_STREAM)}

    def opened_file(self) -> bytes:
        """The command line's FILE, read at each call (so a reload shows it anew)."""
        if self.capture is None:
            raise ApiError(404, "no capture was given on the command line")
        try:
            return self.capture.read_bytes()
        except OSError as exc:
            raise ApiError(404, f"cannot read {self.capture.name!r}: {_reason(exc)}") from None

    def read(self, body: bytes, options: FoldOptions) -> Capture | None:
        """`body` read as `fold` will read it, before a frames="range" fold starts answering: a capture
        over the limit once inflated is refused (413) as one over it as sent is; an unusable one (None)
        is said by the fold itself."""
        try:
            return read_posted(body, entry=options.entry, max_size=self.max_size)
        except TooLargeError as exc:
            raise ApiError(413, str(exc)) from None
        except InputError:
            return None

    def fold(self, body: bytes, options: FoldOptions, *, frames: Literal["all", "range"] = "all",
             progress: Progress | None = None, capture: Capture | None = None) -> dict[str, Any]:
        """The fold view of `body` (`capture`: `body` already `read`). frames="range": without its rows,
        the fold kept for `frames` (its "fold_id"); `progress(folded, total)` is told as it folds."""
        try:
            return build_fold_view(body, dialect=options.dialect, transport=options.transport, entry=options.entry,
                                   max_inflated=self.max_size, frames=frames, progress=progress, keep=self.kept.keep,
                                   capture=capture, lane=options.lane)
        except InputError as exc:
            raise _refused(exc, 400) from None

    def frames(self, fold_id: str, start: str = "0", count: str = str(MAX_RANGE)) -> dict[str, Any]:
        return frames_range(self.kept, fold_id, start, count)

    def diff(self, body: bytes, left_size: str, options: FoldOptions) -> dict[str, Any]:
        """The left capture then the right one in `body`, the left `left_size` bytes long, compared."""
        # isdigit() alone takes '²' and other digits int() refuses; the length bounds int()'s digit limit.
        if not (left_size.isascii() and left_size.isdigit() and len(left_size) <= 20) or int(left_size) > len(body):
            raise ApiError(400, f"left_size must be the byte length of the left capture (0 to {len(body)}), "
                                f"got {left_size!r}")
        split = int(left_size)
        try:
            return diff_captures(body[:split], body[split:], max_inflated=self.max_size, dialect=options.dialect,
                                 transport=options.transport)
        except InputError as exc:
            raise _refused(exc, 400) from None

    def captures(self, since: str | None = None, limit: str = str(DEFAULT_LIST_LIMIT)) -> tuple[int, dict[str, Any]]:
        """(status, answer): the store's answer says an unusable store in itself (404 or 422)."""
        store = self._store()
        if not (limit.isascii() and limit.isdigit() and len(limit) <= 6 and 1 <= int(limit) <= MAX_LIST_LIMIT):
            raise ApiError(400, f"limit must be a number of captures from 1 to {MAX_LIST_LIMIT}, got {limit!r}")
        return store.listing(since, int(limit))

    def stored_id(self, text: str) -> int:
        """The capture id a URL names, checked before anything else is."""
        self._store()
        capture_id = parse_id(text)
        if capture_id is None:
            raise ApiError(404, f"a capture id is a number, got {text!r}")
        return capture_id

    def stored_fold(self, capture_id: int, options: FoldOptions, *, frames: Literal["all", "range"] = "all",
                    progress: Progress | None = None) -> dict[str, Any]:
        """The stored capture's fold view; frames="range" as for `fold`."""
        try:
            return self._store().view(capture_id, dialect=options.dialect, transport=options.transport,
                                      lane=options.lane, max_size=self.max_size, frames=frames, progress=progress,
                                      keep=self.kept.keep)
        except InputError as exc:
            # A fold answered as it goes says every other refusal as 400, as the posted fold does.
            raise _refused(exc, 400 if frames == "range" else 404) from None

    def stored_body(self, capture_id: int) -> bytes:
        try:
            return self._store().body(capture_id, self.max_size)
        except InputError as exc:
            raise _refused(exc, 404) from None

    def fleet(self) -> dict[str, Any]:
        with self._fleet() as fleet:
            return fleet.summary()

    def fleet_captures(self, dialect: str | None = None, model: str | None = None, outcome: str | None = None,
                       finding: str | None = None, offset: str = "0",
                       limit: str = str(DEFAULT_PAGE)) -> dict[str, Any]:
        """A page of the captures the filters keep (each filter a value the fleet lists, or None)."""
        filters = fleet_filters(dialect=dialect, model=model, outcome=outcome, finding=finding)
        start, count = page_bounds(offset, limit)
        with self._fleet() as fleet:
            return fleet.captures(filters, start, count)

    def fleet_fold(self, capture_id: str, options: FoldOptions, *, frames: Literal["all", "range"] = "all",
                   progress: Progress | None = None) -> dict[str, Any]:
        """The fleet's capture `capture_id` read again from where its row says it came from, folded;
        frames="range" as for `fold`. A location gone is 404, one that changed since the fold 409."""
        return self._reopened(capture_id, lambda fleet: fleet.view(
            capture_id, dialect=options.dialect, transport=options.transport, entry=options.entry, lane=options.lane,
            max_size=self.max_size, frames=frames, progress=progress, keep=self.kept.keep))

    def fleet_body(self, capture_id: str) -> bytes:
        return self._reopened(capture_id, lambda fleet: fleet.body(capture_id, self.max_size))

    def _reopened(self, capture_id: str, work: Callable[[FleetSource], _T]) -> _T:
        if not capture_id or len(capture_id) > _MAX_CAPTURE_ID:
            raise ApiError(400, f"a fleet capture's id is 1 to {_MAX_CAPTURE_ID} characters")
        with self._fleet() as fleet:
            try:
                return work(fleet)
            except InputError as exc:
                # A capture that changed since the fold conflicts with its row; anything else is not there to show.
                raise _refused(exc, 409 if getattr(exc, "why", None) == "changed" else 404) from None

    @contextlib.contextmanager
    def _fleet(self) -> Iterator[FleetSource]:
        """The fleet, with a directory that stopped being one (removed while the page is open) said as 404."""
        if self.fleet_source is None:
            raise ApiError(404, _NO_FLEET)
        from ..fleet.layout import FleetError

        try:
            yield self.fleet_source
        except FleetError as exc:
            raise ApiError(404, str(exc)) from None

    def _store(self) -> StoreSource:
        if self.store is None:
            raise ApiError(404, _NO_STORE)
        return self.store


def _refused(exc: InputError, status: int) -> ApiError:
    """An input's refusal as the page is told it: 413 when it is too large, else `status`."""
    return ApiError(413 if isinstance(exc, TooLargeError) else status, str(exc))


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
