"""The UI message stream's chunk shapes, as the `ai` package's own `uiMessageChunkSchema` states
them (ai 6 and 7, `ui-message-stream/ui-message-chunks.ts`): per chunk type, the keys it must have
and the keys it may have. Detection claims a payload only when it fits one of them exactly (ai 6's
objects are strict; ai 7's admit more keys, but every key ai 7 declares is here), so a
`{"type": "start"}` or `{"type": "error"}` of another protocol with other keys is not taken.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DATA_PREFIX", "fits"]

DATA_PREFIX = "data-"
_META = ("providerMetadata",)
_TOOL = ("providerExecuted", "providerMetadata", "dynamic", "title", "_meta", "toolMetadata")

#: type -> (required keys, optional keys), `type` itself aside.
SHAPES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    kind: (frozenset(required), frozenset(optional)) for kind, required, optional in (
        ("start", (), ("messageId", "messageMetadata")),
        ("text-start", ("id",), _META), ("text-delta", ("id", "delta"), _META),
        ("text-end", ("id",), ("citations", *_META)),
        ("reasoning-start", ("id",), _META), ("reasoning-delta", ("id", "delta"), _META),
        ("custom", ("kind",), _META),
        ("reasoning-end", ("id",), _META),
        ("tool-input-start", ("toolCallId", "toolName"), ("inputEncoding", *_TOOL)),
        ("tool-input-delta", ("toolCallId", "inputTextDelta"), ()),
        ("tool-input-available", ("toolCallId", "toolName"), ("input", *_TOOL)),
        ("tool-input-error", ("toolCallId", "toolName", "errorText"), ("input", *_TOOL)),
        ("tool-approval-request", ("approvalId", "toolCallId"),
         ("approvalDescriptor", "inputSchemaInput", "reason", "isAutomatic", "signature")),
        ("tool-approval-response", ("approvalId", "approved"), ("reason", "providerExecuted", *_META)),
        ("tool-output-available", ("toolCallId",),
         ("output", "providerExecuted", "dynamic", "preliminary", "toolMetadata", *_META)),
        ("tool-output-error", ("toolCallId", "errorText"), ("providerExecuted", "dynamic", "toolMetadata", *_META)),
        ("tool-output-denied", ("toolCallId",), ()),
        ("source-url", ("sourceId", "url"), ("title", *_META)),
        ("source-document", ("sourceId", "mediaType", "title"), ("filename", *_META)),
        ("file", ("url", "mediaType"), _META), ("reasoning-file", ("url", "mediaType"), _META),
        ("steering-message", ("id", "parts"), ()),
        ("start-step", (), ()), ("finish-step", (), ()), ("reset-step", (), ()),
        ("finish", (), ("finishReason", "messageMetadata")),
        ("error", ("errorText",), ()),
        ("abort", (), ("reason",)),
        ("message-metadata", ("messageMetadata",), ()),
    )}
_DATA = (frozenset[str](), frozenset({"id", "data", "transient"}))


def fits(value: dict[str, Any], kind: str) -> bool:
    """Does `value` (of type `kind`) have exactly the keys its chunk type allows, the required ones included?"""
    shape = _DATA if kind.startswith(DATA_PREFIX) and len(kind) > len(DATA_PREFIX) else SHAPES.get(kind)
    if shape is None:
        return False
    required, optional = shape
    keys = value.keys() - {"type"}
    return required <= keys and keys <= required | optional
