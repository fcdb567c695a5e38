"""The hot payload shapes of a Responses stream, as msgspec Structs: a text,
refusal, reasoning, reasoning summary or function argument delta event
(`OpenAIResponses.fold_fast_run`). Each is declared whole and unknown fields are
refused (`forbid_unknown_fields`), which also keeps msgspec from skipping
bytes it never checks as UTF-8. A payload that does not fit is decoded again
as plain JSON and folded by `fold`: the Structs only choose the fast way,
never the result.

Importing this module raises ImportError without msgspec; the dialect then
has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import msgspec

__all__ = ["ArgumentsDelta", "OutputTextDelta", "ReasoningTextDelta", "RefusalDelta", "ResponsesDelta",
           "SummaryTextDelta", "decode_responses_delta"]


class _ResponsesDelta(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    sequence_number: int
    output_index: int
    delta: str
    item_id: str | None = None
    obfuscation: str | None = None


class TopLogprob(msgspec.Struct, forbid_unknown_fields=True):
    token: str
    logprob: float
    bytes: list[int] | None = None


class Logprob(TopLogprob, forbid_unknown_fields=True):
    # Typed to the end, as every field here: a fast shape holds nothing nested deeper than its own.
    top_logprobs: list[TopLogprob] | None = None


class OutputTextDelta(_ResponsesDelta, tag="response.output_text.delta", kw_only=True):
    part: int = msgspec.field(name="content_index")
    logprobs: list[Logprob] | None = None
    #: What the delta extends, and the `event:` line that names it.
    kind: ClassVar[str] = "output_text"
    event: ClassVar[bytes] = b"event: response.output_text.delta"


class RefusalDelta(_ResponsesDelta, tag="response.refusal.delta", kw_only=True):
    part: int = msgspec.field(name="content_index")
    kind: ClassVar[str] = "part"
    event: ClassVar[bytes] = b"event: response.refusal.delta"


class ReasoningTextDelta(_ResponsesDelta, tag="response.reasoning_text.delta", kw_only=True):
    part: int = msgspec.field(name="content_index")
    kind: ClassVar[str] = "part"
    event: ClassVar[bytes] = b"event: response.reasoning_text.delta"


class SummaryTextDelta(_ResponsesDelta, tag="response.reasoning_summary_text.delta", kw_only=True):
    part: int = msgspec.field(name="summary_index")
    kind: ClassVar[str] = "summary"
    event: ClassVar[bytes] = b"event: response.reasoning_summary_text.delta"


class ArgumentsDelta(_ResponsesDelta, tag="response.function_call_arguments.delta", kw_only=True):
    part: ClassVar[None] = None
    kind: ClassVar[str] = "arguments"
    event: ClassVar[bytes] = b"event: response.function_call_arguments.delta"


ResponsesDelta = OutputTextDelta | RefusalDelta | ReasoningTextDelta | SummaryTextDelta | ArgumentsDelta
#: Bytes to one of the `ResponsesDelta` events; raises ValueError for any other payload.
decode_responses_delta: Callable[[bytes], ResponsesDelta] = msgspec.json.Decoder(ResponsesDelta).decode
