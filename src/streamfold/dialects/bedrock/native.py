"""The Bedrock `ConverseResponse` a non-streaming `Converse` would have returned: the snapshot
the dialect takes at the end of the stream (`snapshot`, in `Result.native`) and the export built
from a Result and that snapshot alone (`export_converse`).

The snapshot holds the `metadata` metrics and, per content block (by index), what the Result
does not: where a text or reasoning block's text starts in the choice's content or reasoning
(`start`), its signature, redacted content and citations; a server tool's id, name, type and
parsed input; a tool result's start and streamed content.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...opaque import Opaque

if TYPE_CHECKING:
    from ...merge import Merger
    from ...result import Choice, Result

__all__ = ["export_converse", "opaque_values", "read_converse", "snapshot"]

#: What the export reads of a content block's fields, by block type.
_EXPORTED_FIELDS = {"text": ("_start", "citations"), "reasoning": ("_start", "signature", "redactedContent"),
                    "server_tool_use": ("toolUseId", "name", "type", "input"),
                    "toolResult": ("toolResult", "content")}


def snapshot(merger: Merger) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    metrics = merger.get(("dialect", "metrics"))
    if metrics is not None:
        out["metrics"] = metrics
    blocks: dict[str, Any] = {}
    for path, (fields, _, _) in merger.values.items():
        if len(path) == 3 and type(path[0]) is int and path[0] == 0 and path[1] == "block" \
                and type(fields) is dict:
            exported = _EXPORTED_FIELDS.get(str(fields.get("type")), ())
            kept = {name: fields[name] for name in exported if name in fields}
            if "_start" in kept:
                kept["start"] = kept.pop("_start")
            if kept:
                blocks[str(path[2])] = kept
    if blocks:
        out["blocks"] = blocks
    return out or None


def export_converse(result: Result) -> dict[str, Any]:
    native = result.native if type(result.native) is dict else {}
    choice = result.choice(0)
    out: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": None}
    if choice is not None:
        out["output"]["message"] = {"role": choice.role or "assistant",
                                    "content": _exported_content(choice, native.get("blocks", {}))}
        out["stopReason"] = choice.finish_reason_raw
    if result.usage is not None:
        out["usage"] = result.usage.raw
    metrics = native.get("metrics")
    if metrics is not None:
        out["metrics"] = metrics
    return out


def _exported_content(choice: Choice, fields_by_index: dict[str, Any]) -> list[dict[str, Any]]:
    calls = {call.key: call for call in choice.tool_calls}
    blocks = [(block, fields_by_index.get(str(block.index), {})) for block in choice.blocks]
    texts = {"text": choice.content, "reasoning": choice.reasoning or ""}
    content: list[dict[str, Any]] = []
    for position, (block, fields) in enumerate(blocks):
        if block.type in texts:
            # A block's text runs from its start to the next block of the same kind.
            later = [f["start"] for b, f in blocks[position + 1 :] if b.type == block.type]
            text = texts[block.type][fields.get("start", 0) : later[0] if later else None]
        if block.type == "text":
            part: dict[str, Any] = {"text": text}
            if "citations" in fields:
                part["citationsContent"] = fields["citations"]
            content.append(part)
        elif block.type == "reasoning":
            if "redactedContent" in fields:
                content.append({"reasoningContent": {"redactedContent": fields["redactedContent"]}})
            else:
                reasoning: dict[str, Any] = {"text": text}
                if "signature" in fields:
                    reasoning["signature"] = fields["signature"]
                content.append({"reasoningContent": {"reasoningText": reasoning}})
        elif block.type == "tool_call" and block.index in calls:
            call = calls[block.index]
            # Unparseable input has no true non-streaming twin: keep the raw text (as Anthropic's export
            # does), never a silent {}.
            content.append({"toolUse": {"toolUseId": call.id, "name": call.name,
                                        "input": call.parsed if call.error is None else call.arguments}})
        elif block.type == "server_tool_use":
            # Run by Bedrock (Nova's code interpreter): a block, not one of the choice's tool calls.
            tool = {"toolUseId": fields.get("toolUseId"), "name": fields.get("name"),
                    "input": fields.get("input", {}), "type": fields.get("type", "server_tool_use")}
            content.append({"toolUse": tool})
        elif block.type == "toolResult":
            start = fields.get("toolResult")
            content.append({"toolResult": {**(start if type(start) is dict else {}),
                                           "content": fields.get("content", [])}})
    return content


def read_converse(value: object) -> dict[str, Any] | None:
    """The reverse of `export_converse`: the facts of a `ConverseResponse`, or None when `value` is not one."""
    output = value.get("output") if isinstance(value, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    if not (isinstance(value, dict) and "stopReason" in value and isinstance(message, dict)
            and isinstance(message.get("content", []), list)):
        return None
    blocks = [block for block in message.get("content") or [] if isinstance(block, dict)]
    reasoning = [block["reasoningContent"].get("reasoningText") for block in blocks
                 if isinstance(block.get("reasoningContent"), dict)]
    uses = [block["toolUse"] for block in blocks if isinstance(block.get("toolUse"), dict)
            and block["toolUse"].get("type", "tool_use") != "server_tool_use"]
    return {"content": "".join(str(block["text"]) for block in blocks if "text" in block),
            "reasoning": "".join(str(r.get("text") or "") for r in reasoning if isinstance(r, dict)) or None,
            "tool_calls": [(use.get("name"), use["input"] if isinstance(use.get("input"), str) else
                            json.dumps(use.get("input", {}), separators=(",", ":"), ensure_ascii=False))
                           for use in uses],
            "tool_call_ids": [use.get("toolUseId") for use in uses],
            "finish_reason": value.get("stopReason"), "usage": value.get("usage")}


def opaque_values(exported: dict[str, Any]) -> list[Opaque]:
    """A reasoning block's `signature` and `redactedContent` (boto3 gives the latter as bytes)."""
    output = exported.get("output")
    message = output.get("message") if type(output) is dict else None
    content = message.get("content") if type(message) is dict else None
    found: list[Opaque] = []
    for position, block in enumerate(content if type(content) is list else ()):
        reasoning = block.get("reasoningContent") if type(block) is dict else None
        if type(reasoning) is not dict:
            continue
        where = f"output.message.content[{position}].reasoningContent"
        text = reasoning.get("reasoningText")
        if type(text) is dict and type(signature := text.get("signature")) is str and signature:
            found.append(Opaque("reasoning signature", f"{where}.reasoningText.signature", signature,
                                ("signature",)))
        if type(redacted := reasoning.get("redactedContent")) is str and redacted:
            found.append(Opaque("redacted reasoning", f"{where}.redactedContent", redacted,
                                ("redactedContent", "redacted_content")))
    return found
