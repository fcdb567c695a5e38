"""Reading a claude-trace or claude-tap log into a `Capture` (see `inputs.read_capture`): each line
is one request and its response, an exchange picked and listed as a HAR's entries are
(`_exchanges`).

- claude-trace (badlogic/lemmy, apps/claude-trace; `src/interceptor.ts`, `src/types.ts`) writes
  `.claude-trace/log-*.jsonl`, one `RawPair` a line (`JSON.stringify`): `{request: {timestamp
  (seconds), method, url, headers: {name: value}, body (parsed JSON)}, response: {timestamp,
  status_code, headers, body (a JSON reply, parsed) | body_raw (the text as received: an SSE
  stream whole)} | null (an orphaned request), logged_at, note?}`. Its Authorization, x-api-key
  and cookie headers are cut to their ends, not removed; streamfold never prints headers.
- claude-tap (liaohch3/claude-tap; `claude_tap/proxy.py` `_build_record`, exported one record a
  line by `trace_store.export_jsonl`, `.traces/*/trace_*.jsonl`): `{timestamp, request_id, turn,
  duration_ms, request: {method, path, headers, body}, response: {status, headers, body (the
  reply rebuilt), sse_events: [{event, data (parsed)}], ws_events: [...]}, upstream_base_url}`.
  It keeps each SSE event parsed, not the bytes: the stream is rebuilt from them, one `event:`
  and `data:` frame each (its `SSEReassembler` names bare `data:` frames `message` and drops
  OpenAI's `[DONE]`), and said so. A WebSocket record's `ws_events` become one JSON line each.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..findings import Severity
from ._exchanges import Kind, Recorded, capture_of, kind_of
from .capture import Capture, InputError, Note

__all__ = ["from_trace_log", "looks_like_trace_log"]

TRACE_LOG = Kind("trace log", "record", "records", "trace-log", "recording-entries", "recording-malformed")
_CLAUDE_TRACE = re.compile(rb'\A\s*\{\s*"request"\s*:\s*\{\s*"timestamp"\s*:\s*-?[\d.]')
_CLAUDE_TAP = re.compile(rb'\A\s*\{\s*"timestamp"\s*:\s*"[^"\n]{0,64}"\s*,\s*"request_id"\s*:')


def looks_like_trace_log(head: bytes) -> bool:
    return bool(_CLAUDE_TRACE.match(head) or _CLAUDE_TAP.match(head))


def from_trace_log(data: bytes, entry: str | None, *, max_inflated: int, refuse_larger: bool) -> Capture:
    records: list[Recorded] = []
    unread: list[int] = []
    tap = False
    lines = [line for line in data.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            value = None
        found = _record(index, value) if isinstance(value, dict) else None
        tap = tap or (found is not None and isinstance(value, dict) and "request_id" in value)
        if found is None:
            unread.append(index + 1)
        else:
            records.append(found)
    if not records:
        raise InputError("this looks like a claude-trace or claude-tap log but none of its lines is a record "
                         "(one JSON object with a request and a response a line)")
    notes = [Note("recording-malformed", f"lines {', '.join(map(str, unread[:10]))}{'…' if len(unread) > 10 else ''}"
                                         " of the log are no record (not a JSON object with a request): left out",
                  Severity.WARNING)] if unread else []
    return capture_of(records, entry, TRACE_LOG, total=len(lines), how="claude-tap" if tap else "claude-trace",
                      max_inflated=max_inflated, refuse_larger=refuse_larger, notes=notes)


def _record(index: int, value: dict[str, Any]) -> Recorded | None:
    request = value.get("request")
    if not isinstance(request, dict):
        return None
    found = Recorded(TRACE_LOG, index)
    response = value.get("response")
    found.method = _string(request.get("method"))[:20]
    base = _string(value.get("upstream_base_url")).rstrip("/")
    found.url = (_string(request.get("url")) or base + _string(request.get("path")))[:2000]
    found.request_headers = _headers(found, request.get("headers"), "request")
    found.request_body = request.get("body")
    if response is None:
        note = _string(value.get("note"))
        found.missing = "the request has no response" + (f" ({note[:200]})" if note else "")
        return found
    if not isinstance(response, dict):
        found.problems.append(f"response is {kind_of(response)}, not an object: left out")
        return found
    found.response_headers = _headers(found, response.get("headers"), "response")
    status = response.get("status_code", response.get("status"))
    if isinstance(status, int) and not isinstance(status, bool) and 0 <= status <= 999:
        found.status_code = status
    elif status is not None:
        found.problems.append(f"response status {str(status)[:40]!r} is not a status code: left out")
    found.raw = _body(found, response)
    return found


def _body(found: Recorded, response: dict[str, Any]) -> bytes | None:
    try:
        return _rebuilt(found, response)
    except (RecursionError, ValueError):  # a value nested just deep enough to parse, one level too deep to write
        found.problems.append("its response is nested too deeply to write back as JSON: left out")
        return None


def _rebuilt(found: Recorded, response: dict[str, Any]) -> bytes | None:
    raw = response.get("body_raw")
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    for key, as_lines in (("sse_events", False), ("ws_events", True)):
        events = response.get(key)
        if isinstance(events, list) and events:
            body = _websocket_lines(events) if as_lines else _sse(events)
            what = "WebSocket message" if as_lines else "SSE event"
            lost = "" if as_lines else (", one frame each (ids, comments and OpenAI's [DONE] are not recorded, so "
                                        "their absence says nothing)")
            found.rebuilt = (f"claude-tap keeps each {what} parsed, not the bytes: the stream was rebuilt from its "
                             f"{len(events)} {key}{lost}")
            return body
    if "body" in response and response["body"] is not None:
        body = response["body"]
        return body.encode("utf-8", "surrogatepass") if isinstance(body, str) else json.dumps(body).encode()
    return None


def _sse(events: list[Any]) -> bytes:
    frames = []
    for event in events:
        if not isinstance(event, dict):
            continue
        name, data = event.get("event"), event.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        head = f"event: {name}\n" if isinstance(name, str) and name and name != "message" else ""
        frames.append(head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n")
    return "".join(frames).encode("utf-8", "surrogatepass")


def _websocket_lines(events: list[Any]) -> bytes:
    return "".join((event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)) + "\n"
                   for event in events).encode("utf-8", "surrogatepass")


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _headers(found: Recorded, value: Any, side: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        found.problems.append(f"{side}.headers is {kind_of(value)}, not an object: left out")
        return ()
    return tuple((name, said if isinstance(said, str) else json.dumps(said)) for name, said in value.items()
                 if isinstance(name, str) and name)
