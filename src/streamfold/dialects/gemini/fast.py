"""Gemini's hot payload shape as msgspec Structs: a chunk whose one candidate
carries only text parts (and the cumulative usage), for `Gemini.fold_fast`.

Declared whole and with unknown fields refused (`forbid_unknown_fields`), so a
chunk with anything `fold` would act on beyond appending text (a finish reason,
prompt feedback, an error, another kind of part) fails validation; that also
keeps msgspec from skipping bytes it never checks as UTF-8. A payload that does
not fit is decoded again as plain JSON and folded by `fold`: the Structs only
choose the fast way, never the result. Whether the candidate is one whose text
run is open (its role known, no finish reason yet) is `fold_fast`'s to check.

Importing this module raises ImportError without msgspec; the dialect then
has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["GeminiCandidate", "GeminiChunk", "GeminiContent", "GeminiTextPart", "decode_gemini_chunk"]


class GeminiTextPart(msgspec.Struct, forbid_unknown_fields=True):
    text: str


class GeminiContent(msgspec.Struct, forbid_unknown_fields=True):
    parts: list[GeminiTextPart]
    role: str | None = None


class GeminiCandidate(msgspec.Struct, forbid_unknown_fields=True):
    content: GeminiContent
    index: int | None = None
    finishReason: None = None  # noqa: N815 - the field as the API names it


class GeminiChunk(msgspec.Struct, forbid_unknown_fields=True):
    candidates: list[GeminiCandidate]
    # Counts, `trafficType` and per-modality details; typed to the end, so a fast shape holds
    # nothing nested deeper than its own (see `_json.MAX_DEPTH`).
    usageMetadata: dict[str, int | str | list[dict[str, int | str]]] | None = None  # noqa: N815
    modelVersion: str | None = None  # noqa: N815
    responseId: str | None = None  # noqa: N815
    createTime: str | None = None  # noqa: N815
    promptFeedback: None = None  # noqa: N815
    modelStatus: None = None  # noqa: N815
    error: None = None


#: Bytes to a `GeminiChunk`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_gemini_chunk: Callable[[bytes], GeminiChunk] = msgspec.json.Decoder(GeminiChunk).decode
