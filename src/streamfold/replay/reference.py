"""The reference for what was served: the bytes actually written on a request, with its status and
headers, folded the way `streamfold show --json` folds a capture (the JSON contract, schema 1).

`reply_part` is what a correct client must build, the part of a result that a transparent fault
leaves equal: transport, dialect, completeness, model, id, each choice's role, text, reasoning,
refusal, tool calls (id, name, raw arguments, parsed value) and finish reason, the usage, the
`native` snapshot, the stream errors' codes and raw payloads (their messages name frame numbers),
and the codes of the findings of warning or error severity. What may differ: frame counts and
frame numbers (a keep-alive adds frames), byte offsets and lines, the blocks' frame ranges, the
messages of errors and findings (they name frames), and informational findings.

`Served` keeps the last requests' references (bounded), computed when first asked for.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..result import Result
from ..services import Capture
from ..services.load import fold_capture

__all__ = ["KEPT_REQUESTS", "Served", "ServedLog", "reference", "reference_result", "reply_part"]

#: How many requests' references are kept (the oldest go first).
KEPT_REQUESTS = 100
_SERIOUS = ("warning", "error")


def reference_result(body: bytes, status: int, headers: tuple[tuple[str, str], ...]) -> Result:
    """The fold of `body` served with `status` and `headers`, with its frames (what `assert_reply` names)."""
    return fold_capture(Capture(body, "replay", status=status, response_headers=headers)).result


def reference(body: bytes, status: int, headers: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The JSON result of `body` served with `status` and `headers`, as `show --json` gives it."""
    return reference_result(body, status, headers).to_dict()


def reply_part(result: dict[str, Any]) -> dict[str, Any]:
    """The part of a JSON result a transparent fault must leave equal (see the module docstring)."""
    choices = [{key: value for key, value in choice.items() if key != "blocks"} for choice in result["choices"]]
    return {
        "transport": result["transport"], "dialect": result["dialect"], "complete": result["complete"],
        "model": result["model"], "id": result["id"], "choices": choices, "usage": result["usage"],
        "native": result.get("native"),
        "errors": [(error.get("code"), error.get("raw")) for error in result["errors"]],
        "findings": sorted({d["code"] for d in result["diagnostics"] if d.get("severity") in _SERIOUS}),
    }


@dataclass
class Served:
    """One request served: what was planned and how much of it went out."""

    request: int
    capture: str
    faults: tuple[str, ...]
    status: int
    headers: tuple[tuple[str, str], ...]
    planned: bytes
    #: Bytes handed to the server so far (all of `planned` once the response ended).
    sent: int = 0
    #: The response ended: every planned write went out (or the planned cut happened).
    finished: bool = False
    #: The client went away before the end.
    client_gone: bool = False
    _folded: Result | None = field(default=None, repr=False)
    _folded_at: int = field(default=-1, repr=False)

    def folded(self) -> Result:
        """The fold of the bytes sent so far, with its frames (folded again only when more went out)."""
        sent = self.sent
        if self._folded is None or self._folded_at != sent:
            self._folded = reference_result(self.planned[:sent], self.status, self.headers)
            self._folded_at = sent
        return self._folded

    def result(self) -> dict[str, Any]:
        """The reference of the bytes sent so far, as JSON (`GET /_streamfold/expect`)."""
        return self.folded().to_dict()

    def summary(self) -> dict[str, Any]:
        """The request as `GET /_streamfold/requests` lists it."""
        return {"request": self.request, "capture": self.capture, "faults": list(self.faults),
                "status": self.status, "planned_bytes": len(self.planned), "sent_bytes": self.sent,
                "finished": self.finished, "client_gone": self.client_gone}


class ServedLog:
    """The last `KEPT_REQUESTS` requests by id; thread-safe (the server's loop writes, tests read)."""

    def __init__(self, keep: int = KEPT_REQUESTS) -> None:
        self._keep = keep
        self._entries: OrderedDict[int, Served] = OrderedDict()
        self._lock = threading.Lock()
        self._next = 1

    def next_id(self) -> int:
        """The id of the next request (ids count from 1 and are never reused)."""
        with self._lock:
            self._next += 1
            return self._next - 1

    def add(self, served: Served) -> None:
        """Keep `served`, forgetting the oldest past `keep`."""
        with self._lock:
            self._entries[served.request] = served
            while len(self._entries) > self._keep:
                self._entries.popitem(last=False)

    def get(self, request: int | None = None) -> Served | None:
        """Request `request`, or the last one when None; None when it is unknown (or forgotten)."""
        with self._lock:
            if request is None:
                return next(reversed(self._entries.values()), None)
            return self._entries.get(request)

    def entries(self) -> list[Served]:
        with self._lock:
            return list(self._entries.values())
