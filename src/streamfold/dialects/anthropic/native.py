"""The Anthropic `Message` a non-streaming request would have returned: the snapshot the
dialect takes at the end of the stream (`snapshot`, stored in `Result.native`), the export
built from a Result and that snapshot alone (`export_message`), and its reverse (`read_message`).

The snapshot holds what the Result does not:

- `message`: the `message` of `message_start` as sent, with the fields the export fills
  from the Result (`id`, `type`, `role`, `model`, `content`, `stop_reason`,
  `stop_sequence`, `usage`) set to null: they keep their place, not their value;
- `stop_sequence`, `stop_details`, `container`, `context_management`,
  `input_transformations`: the last non-null value `message_delta` gave each (absent when
  none came);
- `content`: each content block in index order, as the export lists it, except that a
  text block's `text` and a thinking block's `thinking` are `[start, end]`, the slice of
  the choice's `content` or `reasoning` that is the block's text (a string only when no
  slice is: blocks whose deltas interleaved), and a `tool_use` block's `input` is the key
  of the choice's tool call that holds it (its parsed arguments, or their raw join when
  they do not parse: never a silent `{}`). Signatures, citations, redacted thinking,
  server tool input and result blocks are kept as they are, and a compaction block with
  its folded `content` and `encrypted_content`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._toolargs import parse_arguments
from ...opaque import Opaque
from .._base import arguments_text
from .blocks import CHOICE, TOOL_USE_START, Block

if TYPE_CHECKING:
    from ...merge import Merger
    from ...result import Result, ToolCall

__all__ = ["export_message", "may_hold_opaque", "opaque_dropped", "opaque_values", "read_message", "snapshot"]

#: The fields of the message the export takes from the Result.
_FILLED = frozenset({"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"})


def snapshot(message: Mapping[str, Any] | None, stop: Mapping[str, Any], blocks: Mapping[int, Block],
             merger: Merger) -> dict[str, Any] | None:
    """What `export` needs beyond the Result (see the module's docstring), None when nothing."""
    out: dict[str, Any] = {}
    if message is not None:
        out["message"] = {key: None if key in _FILLED else value for key, value in message.items()}
    out.update(stop)
    if blocks:
        content_text = merger.text((CHOICE, "content")) or ""
        reasoning_text = merger.text((CHOICE, "reasoning")) or ""
        out["content"] = [_snapshot_block(block, content_text, reasoning_text, merger)
                          for _, block in sorted(blocks.items())]
    return out or None


def _snapshot_block(block: Block, content_text: str, reasoning_text: str, merger: Merger) -> dict[str, Any]:
    if block.start is TOOL_USE_START:
        return {"type": "tool_use", "id": merger.get((CHOICE, "tool", block.index, "id")),
                "name": merger.get((CHOICE, "tool", block.index, "name")), "input": block.index}
    out = dict(block.start)
    kind = block.kind
    if kind == "text":
        out["text"] = _text_at(block, content_text)
        if block.citations is not None:
            out["citations"] = list(block.citations)
    elif kind == "thinking":
        out["thinking"] = _text_at(block, reasoning_text)
        out["signature"] = block.signature or ""
    elif kind == "tool_use":
        out["input"] = block.index  # the key of its tool call
    elif block.json is not None:  # a server tool's block
        joined = "".join(piece for piece, _ in block.json)
        parsed = block.parsed or parse_arguments(joined, block.json)
        out["input"] = parsed.value if parsed.error is None else joined
    return out


def _text_at(block: Block, text: str) -> list[int] | str:
    """Where the block's text is in the choice's text, or the text itself when it is not one slice."""
    joined = "".join(block.pieces)
    if not joined:
        return ""
    start = text.find(joined, block.offset)
    if start < 0:
        start = text.find(joined)
    return [start, start + len(joined)] if start >= 0 else joined


def export_message(result: Result) -> dict[str, Any]:
    """The `anthropic.types.Message` a non-streaming request would have returned."""
    native = result.native if type(result.native) is dict else {}
    choice = result.choice(CHOICE)
    calls = {call.key: call for call in choice.tool_calls} if choice is not None else {}
    texts = (choice.content, choice.reasoning or "") if choice is not None else ("", "")
    start = native.get("message")
    message: dict[str, Any] = dict(start) if type(start) is dict else {}
    message.update(
        id=result.id, type="message", role=(choice.role if choice else None) or "assistant",
        model=result.model, content=[_export_block(block, texts, calls) for block in native.get("content", ())],
        stop_reason=choice.finish_reason_raw if choice else None,
        stop_sequence=native.get("stop_sequence"))
    for name in ("stop_details", "container", "context_management", "input_transformations"):
        if native.get(name) is not None:
            message[name] = native[name]
    usage = result.usage
    # A reply read whole (not streamed) has its counts but no usage object as sent: rebuilt from the counts.
    message["usage"] = None if usage is None else dict(usage.raw) if isinstance(usage.raw, dict) else {
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    return message


def _export_block(block: dict[str, Any], texts: tuple[str, str], calls: Mapping[Any, ToolCall]) -> dict[str, Any]:
    out = dict(block)
    kind = out.get("type")
    if kind == "text":
        out["text"] = _text_of(out["text"], texts[0])
    elif kind == "thinking":
        out["thinking"] = _text_of(out["thinking"], texts[1])
    elif kind == "tool_use":
        call = calls.get(out["input"])
        # Unparseable input has no true non-streaming twin: keep the raw text, never a silent {}.
        out["input"] = {} if call is None else call.parsed if call.error is None else call.arguments
    return out


def _text_of(held: object, text: str) -> str:
    if type(held) is list:
        start, end = held
        return text[start:end]
    return str(held)


def read_message(value: object) -> dict[str, Any] | None:
    """An Anthropic `Message`: text and thinking blocks, tool_use blocks with their input."""
    if not (isinstance(value, dict) and isinstance(value.get("content"), list)
            and (value.get("type") == "message" or value.get("role") == "assistant")):
        return None
    blocks = [block for block in value["content"] if isinstance(block, dict)]
    thinking = "".join(block.get("thinking", "") for block in blocks if block.get("type") == "thinking")
    uses = [block for block in blocks if block.get("type") == "tool_use"]
    return {
        "content": "".join(block.get("text", "") for block in blocks if block.get("type") == "text"),
        "reasoning": thinking or None,
        "tool_calls": [(block.get("name"), arguments_text(block.get("input"))) for block in uses],
        "tool_call_ids": [block.get("id") for block in uses],
        "finish_reason": value.get("stop_reason"),
        "usage": value.get("usage"),
    }


def opaque_values(exported: dict[str, Any]) -> list[Opaque]:
    """A thinking block's `signature`, a redacted_thinking block's `data`, a compaction block's
    `encrypted_content` and `signature`: the API refuses a turn sent back without them, or with them
    changed."""
    found: list[Opaque] = []
    for position, block in enumerate(exported.get("content") or ()):
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "thinking" and type(signature := block.get("signature")) is str and signature:
            found.append(Opaque("thinking signature", f"content[{position}].signature", signature, ("signature",)))
        elif kind == "redacted_thinking" and type(data := block.get("data")) is str and data:
            found.append(Opaque("redacted thinking data", f"content[{position}].data", data, ("data",)))
        elif kind == "compaction":
            # BetaCompactionBlock: "Opaque metadata from prior compaction, to be round-tripped verbatim",
            # and a "Signature over the summary, to be sent back with the block verbatim".
            for field, label in (("encrypted_content", "compaction encrypted content"),
                                 ("signature", "compaction signature")):
                if type(opaque := block.get(field)) is str and opaque:
                    found.append(Opaque(label, f"content[{position}].{field}", opaque, (field,)))
    return found


#: The block types `opaque_values` and `opaque_dropped` read.
_OPAQUE_BLOCKS = frozenset({"thinking", "redacted_thinking", "compaction"})


def may_hold_opaque(result: Result) -> bool:
    """Whether the export can hold what `opaque_values` and `opaque_dropped` read: only a thinking,
    redacted thinking or compaction block does, and the export copies every block (most replies have none)."""
    native = result.native
    content = native.get("content") if type(native) is dict else None
    return type(content) is list and any(type(block) is dict and block.get("type") in _OPAQUE_BLOCKS
                                         for block in content)


def opaque_dropped(exported: dict[str, Any]) -> int:
    """Thinking blocks without their signature: the API sends a thinking block's signature last, in a
    `signature_delta` just before the block stops, so a stream cut inside the block (or a gateway that
    drops the delta) leaves a turn the API refuses when sent back."""
    return sum(1 for block in exported.get("content") or ()
               if type(block) is dict and block.get("type") == "thinking" and not block.get("signature"))
