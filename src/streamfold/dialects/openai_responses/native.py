"""The `Response` a non-streaming request would have returned, from the Result
alone, and the reverse (`read_response`, for `check` and `diff`).

At the end of the stream `snapshot` keeps what the export needs beyond the
Result, as plain JSON (`Result.native`):

    {"envelope": the last response object a lifecycle or terminal event carried, as sent (or None),
     "created": the first `created_at` seen (or None),
     "status": the response status (or None),
     "error": {"code", "message"} of the error the server sent (or None),
     "items": [ITEM, ...]  only when the envelope's `output` is empty or missing}

    ITEM = {"item": the final item (`output_item.done`, the terminal `response.output`) or else the
                    `.added` skeleton, with its `type` and `id` settled; the values the export
                    rebuilds from the stream are None there, so no text is copied,
            "final": whether a final item came,
            "index": its `output_index` (the key of its tool call in the Result),
            "parts": [PART, ...]      a message's parts,
            "summary": [RANGES, ...]  a reasoning item's summary parts,
            "texts": [RANGES, ...]    a reasoning item's reasoning_text parts (when it has some)}
    PART = {"kind": "output_text" | "refusal" | "reasoning_text", "part": the final part object with
            its text values None, "text": RANGES, "annotations": [...] (but a refusal)}
    RANGES = [[start, end], ...]: where the part's text sits in the choice's `content`, `refusal`
             or `reasoning` (parts may interleave, and reasoning parts are joined by a blank line)

A function call's `call_id`, name and arguments come from the Result's tool
call with the item's key. A built-in tool item that never got its final form
(custom tool input, MCP arguments, code, an apply_patch diff, shell commands
and output) has its streamed fields set in ITEM's `item` (`builtin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._json import copy_json
from ...opaque import Opaque
from .agents import ROOT, agent_name
from .builtin import set_field
from .items import PART_KINDS, Item, Segment

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["export", "may_hold_opaque", "opaque_values", "read_response", "snapshot"]


def snapshot(envelope: dict[str, Any] | None, created: Any, status: str | None, error: dict[str, Any] | None,
             items: dict[int, Item]) -> dict[str, Any]:
    """What `export` needs beyond the Result, taken once at the end of the stream: the last
    response object, the first `created_at`, the status, the server's error, the output items."""
    out: dict[str, Any] = {"envelope": envelope, "created": created, "status": status, "error": error}
    output = None if envelope is None else envelope.get("output")
    if type(output) is not list or not output:
        # The vendor's own output is missing: the export rebuilds it from the stream.
        out["items"] = [_item(item) for _, item in sorted(items.items())]
    return out


def _item(item: Item) -> dict[str, Any]:
    base = dict(item.final or item.skeleton or {})
    kind = item.type or base.get("type") or "message"
    base["type"] = kind
    if item.id is not None:
        base.setdefault("id", item.id)
    out: dict[str, Any] = {"item": base, "final": item.final is not None}
    if kind == "message":
        _rebuilt(base, "content")
        out["parts"] = [_part(segment) for _, segment in sorted(item.parts.items())]
    elif kind == "reasoning":
        _rebuilt(base, "summary")
        out["summary"] = [_ranges(segment) for _, segment in sorted(item.summary.items())]
        texts = [_ranges(segment) for _, segment in sorted(item.parts.items()) if segment.kind == "reasoning_text"]
        if texts:
            _rebuilt(base, "content")
            out["texts"] = texts
    elif kind == "function_call":
        out["index"] = item.index
        if item.arguments is not None:
            _rebuilt(base, "arguments")  # the Result's tool call holds them
    if item.streamed and item.final is None:
        # A built-in tool item cut before its final form: its fields as the stream built them (they are in
        # no Result field, so the snapshot holds the text itself).
        base = out["item"] = copy_json(base)
        for path, held in sorted(item.streamed.items(), key=lambda entry: [str(step) for step in entry[0]]):
            set_field(base, path, held.value())
    return out


def _rebuilt(value: dict[str, Any], *keys: str) -> None:
    """Keys the export fills from the stream: their place is kept, their value is not."""
    for key in keys:
        if key in value:
            value[key] = None


def _part(segment: Segment) -> dict[str, Any]:
    part = dict(segment.final_part or {})
    out: dict[str, Any] = {"kind": segment.kind, "part": part, "text": _ranges(segment)}
    if segment.kind == "refusal":
        _rebuilt(part, "refusal")
    else:
        _rebuilt(part, "text", "annotations")
        annotations = segment.final_annotations
        if annotations is None:
            annotations = [a for _, a in sorted((segment.annotations or {}).items())]
        out["annotations"] = annotations
    return out


def _ranges(segment: Segment) -> list[list[int]]:
    """The [start, end) character ranges of the segment's text in its buffer (its choice's field)."""
    ends = segment.text.buffer.ends
    out: list[list[int]] = []
    for a, b in segment.runs:
        start, end = ends[a - 1] if a else 0, ends[b - 1]
        if out and out[-1][1] == start:
            out[-1][1] = end
        else:
            out.append([start, end])
    return out


def export(result: Result) -> dict[str, Any]:
    """The `Response` a non-streaming request would have returned.

    The envelope is the last response object the stream carried (the
    terminal one when it came). Its `output` is kept when it is non-empty
    (the vendor's final word, already reconciled with the stream);
    otherwise the items are rebuilt from the stream: the final items of
    `output_item.done` with the folded text, summaries, arguments and the
    annotations placed at their `annotation_index`. Fields the Response
    type requires and the stream never carried get neutral values
    (`created_at` 0, `tools` [], `tool_choice` "auto", token details 0).
    """
    native: dict[str, Any] = copy_json(result.native) if type(result.native) is dict else {}
    out: dict[str, Any] = dict(native.get("envelope") or {})
    output = out.get("output")
    if type(output) is not list or not output:
        out["output"] = [_export_item(item, result) for item in native.get("items") or ()]
    out.setdefault("id", result.id or "")
    out["object"] = "response"
    if out.get("created_at") is None:
        out["created_at"] = native.get("created") or 0
    if out.get("model") is None:
        out["model"] = result.model or ""
    for key, default in (("parallel_tool_calls", True), ("tool_choice", "auto"), ("tools", [])):
        if out.get(key) is None:
            out[key] = default
    if native.get("status") is not None:
        out["status"] = native["status"]
    if native.get("error") is not None and out.get("error") is None:
        out["error"] = native["error"]
    if out.get("error") is not None:
        out["status"] = "failed"  # (an `error` event mid-stream leaves the last status `in_progress`)
    usage = None if result.usage is None else result.usage.raw
    if type(usage) is dict:
        out["usage"] = _full_usage(usage)
    return out


def _export_item(item: dict[str, Any], result: Result) -> dict[str, Any]:
    out: dict[str, Any] = item["item"]
    kind = out["type"]
    choice = result.choice(0)
    fields = {"content": choice.content, "refusal": choice.refusal or "",
              "reasoning": choice.reasoning or ""} if choice is not None else {}

    def text(ranges: list[list[int]], field: str) -> str:
        joined = fields.get(field, "")
        return "".join(joined[start:end] for start, end in ranges)

    # An item the stream never finished: what a non-streaming reply would say of it.
    status = "completed" if result.complete else "incomplete"
    if not item["final"] and kind in ("message", "function_call", "reasoning"):
        out["status"] = status
    if kind == "message":
        out.setdefault("id", "")
        out["role"] = "assistant"
        out.setdefault("status", status)
        content: list[dict[str, Any]] = []
        for part in item["parts"]:
            value = part["part"]
            if part["kind"] == "refusal":
                value.update(type="refusal", refusal=text(part["text"], "refusal"))
            else:
                value.update(type="output_text", text=text(part["text"], PART_KINDS.get(part["kind"], "content")),
                             annotations=part["annotations"])
            content.append(value)
        out["content"] = content
    elif kind == "reasoning":
        out.setdefault("id", "")
        out["summary"] = [{"type": "summary_text", "text": text(ranges, "reasoning")}
                          for ranges in item["summary"]]
        if "texts" in item:
            out["content"] = [{"type": "reasoning_text", "text": text(ranges, "reasoning")}
                              for ranges in item["texts"]]
    elif kind == "function_call":
        call = next((c for c in result.choices[0].tool_calls if c.key == item["index"]), None) \
            if result.choices else None
        out["call_id"] = (call.id if call else None) or out.get("call_id") or ""
        out["name"] = (call.name if call else None) or out.get("name") or ""
        out["arguments"] = call.arguments if call else (out.get("arguments") or "")
        out.setdefault("status", status)
    return out


def _full_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The usage object with the detail fields ResponseUsage requires (0 when the stream had none)."""
    out = dict(usage)
    for key in ("input_tokens", "output_tokens"):
        if type(out.get(key)) is not int:
            out[key] = 0
    if type(out.get("total_tokens")) is not int:
        out["total_tokens"] = out["input_tokens"] + out["output_tokens"]
    for key, fields in (("input_tokens_details", ("cached_tokens", "cache_write_tokens")),
                        ("output_tokens_details", ("reasoning_tokens",))):
        details = out.get(key)
        details = dict(details) if type(details) is dict else {}  # a server's list or string is left out
        for name in fields:
            details.setdefault(name, 0)
        out[key] = details
    return out


def read_response(value: object) -> dict[str, Any] | None:
    """An OpenAI Responses `Response`: output_text of message items, function_call items. (`object` may be
    null: the SDK's accumulated response keeps what the stream's `response.completed` sent, and some
    servers leave it out.)"""
    if not (isinstance(value, dict) and isinstance(value.get("output"), list)
            and (value.get("object") == "response" or (value.get("object") is None and "created_at" in value))):
        return None
    # A multi-agent response holds every agent's items: the reply is the root agent's, as the fold's default lane.
    items = [item for item in value["output"] if isinstance(item, dict) and agent_name(item) in (None, ROOT)]
    summary = [part.get("text", "") for item in items if item.get("type") == "reasoning"
               for part in item.get("summary", []) if isinstance(part, dict)]
    details = value.get("incomplete_details")
    return {
        "content": "".join(part.get("text", "") for item in items if item.get("type") == "message"
                           for part in item.get("content", []) if isinstance(part, dict)
                           and part.get("type") == "output_text"),
        "reasoning": "\n\n".join(summary) or None,
        "tool_calls": [(item.get("name"), item.get("arguments", "")) for item in items
                       if item.get("type") == "function_call"],
        "tool_call_ids": [item.get("call_id") for item in items if item.get("type") == "function_call"],
        "finish_reason": details.get("reason") if isinstance(details, dict) else value.get("status"),
        "usage": value.get("usage"),
    }


def may_hold_opaque(result: Result) -> bool:
    """Whether the export can hold what `opaque_values` reads: only a reasoning item carries it, whether in
    the envelope's `output` or in the items rebuilt from the stream (most replies have none, and the
    export deep-copies the envelope)."""
    native = result.native
    if type(native) is not dict:
        return False
    envelope = native.get("envelope")
    output = envelope.get("output") if type(envelope) is dict else None
    rebuilt = native.get("items")
    items = [*(output if type(output) is list else ()),
             *(held.get("item") for held in (rebuilt if type(rebuilt) is list else ()) if type(held) is dict)]
    return any(type(item) is dict and item.get("type") == "reasoning" for item in items)


def opaque_values(exported: dict[str, Any]) -> list[Opaque]:
    """A reasoning item's `id` and `encrypted_content`: a stateless next turn (store=false) sends the
    items back, and the API refuses an encrypted item it cannot match."""
    found: list[Opaque] = []
    output = exported.get("output")
    for position, item in enumerate(output if type(output) is list else ()):
        if type(item) is not dict or item.get("type") != "reasoning":
            continue
        if type(item_id := item.get("id")) is str and item_id:
            found.append(Opaque("reasoning item id", f"output[{position}].id", item_id, ("id",)))
        if type(encrypted := item.get("encrypted_content")) is str and encrypted:
            found.append(Opaque("encrypted reasoning", f"output[{position}].encrypted_content", encrypted,
                                ("encrypted_content",)))
    return found
