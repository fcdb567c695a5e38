"""The hot payload shapes of the dialects that have a fast way, as msgspec
Structs: decoding into these skips the dicts and the dialect's lookups (see
`Dialect.fold_fast`).

OpenAI chat: a chunk whose one choice carries only text (content or
reasoning) or only tool-call argument fragments (`OpenAIChat.fold_fast`).

Every field `OpenAIChat.fold` reads is declared, and typed so that anything
`fold` would act on beyond appending text (usage, an error, a tool call's id
or name) fails validation; a role and a finish reason, which vendors repeat
on every chunk (as "assistant" and ""), are checked by `fold_fast`. Unknown fields fail too
(`forbid_unknown_fields`), which also keeps msgspec from skipping bytes it
never checks as UTF-8. A payload that does not fit is decoded again as plain
JSON and folded by `fold`: the Structs only choose the fast way, never the result.

Anthropic: a `content_block_delta` event whose delta is a `text_delta`,
`thinking_delta` or `input_json_delta` (`Anthropic.fold_fast`), declared whole
and with unknown fields refused, for the same reason.

OpenAI Responses: a text, refusal, reasoning, reasoning summary or function
argument delta event (`OpenAIResponses.fold_fast`), declared whole and with
unknown fields refused.

Ollama: a chat line (`message`) or a generate line (`response`) that is not
the last (`Ollama.fold_fast`), declared whole and with unknown fields refused.

Gemini: a chunk whose one candidate carries only text parts (and the
cumulative usage), once the candidate has its role (`Gemini.fold_fast`),
declared whole and with unknown fields refused.

Cohere: a `content-delta` event with text or thinking (`Cohere.fold_fast`),
declared whole and with unknown fields refused.

Importing this module raises ImportError without msgspec; the dialects then
have no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, Union

import msgspec

__all__ = ["DECODERS", "BlockDelta", "Chunk", "CohereContentDelta", "GeminiChunk", "OllamaLine", "ResponsesDelta", "decode_block_delta",
           "decode_chunk", "decode_cohere_content_delta", "decode_gemini_chunk", "decode_ollama_line", "decode_responses_delta"]


class Function(msgspec.Struct, forbid_unknown_fields=True):
    arguments: str
    name: None = None


class ToolCall(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    function: Function
    id: None = None
    type: Union[str, None] = None


class Delta(msgspec.Struct, forbid_unknown_fields=True):
    content: Union[str, None] = None
    reasoning_content: Union[str, None] = None
    reasoning: Union[str, None] = None
    tool_calls: Union[list[ToolCall], None] = None
    role: Union[str, None] = None
    refusal: None = None
    reasoning_details: None = None
    function_call: None = None


class Choice(msgspec.Struct, forbid_unknown_fields=True):
    index: int
    delta: Delta
    finish_reason: Union[str, None] = None
    logprobs: None = None
    usage: None = None


class Chunk(msgspec.Struct, forbid_unknown_fields=True):
    choices: list[Choice]
    id: Union[str, None] = None
    object: Union[str, None] = None
    created: Union[int, None] = None
    model: Union[str, None] = None
    system_fingerprint: Union[str, None] = None
    service_tier: Union[str, None] = None
    obfuscation: Union[str, None] = None
    usage: None = None
    error: None = None


#: Bytes to a `Chunk`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_chunk: Callable[[bytes], Chunk] = msgspec.json.Decoder(Chunk).decode


class TextDelta(msgspec.Struct, tag="text_delta", tag_field="type", forbid_unknown_fields=True):
    #: The fragment, whatever the delta calls it.
    piece: str = msgspec.field(name="text")
    #: The kind of block this delta belongs to.
    block: ClassVar[str] = "text"


class ThinkingDelta(msgspec.Struct, tag="thinking_delta", tag_field="type", forbid_unknown_fields=True):
    piece: str = msgspec.field(name="thinking")
    block: ClassVar[str] = "thinking"


class InputJSONDelta(msgspec.Struct, tag="input_json_delta", tag_field="type", forbid_unknown_fields=True):
    piece: str = msgspec.field(name="partial_json")
    block: ClassVar[str] = "tool_use"


class BlockDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["content_block_delta"]
    index: int
    delta: Union[TextDelta, ThinkingDelta, InputJSONDelta]


#: Bytes to a `BlockDelta`; raises ValueError for any other payload.
decode_block_delta: Callable[[bytes], BlockDelta] = msgspec.json.Decoder(BlockDelta).decode


class _ResponsesDelta(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    sequence_number: int
    output_index: int
    delta: str
    item_id: Union[str, None] = None
    obfuscation: Union[str, None] = None


class OutputTextDelta(_ResponsesDelta, tag="response.output_text.delta", kw_only=True):
    part: int = msgspec.field(name="content_index")
    logprobs: Union[list[Any], None] = None
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


ResponsesDelta = Union[OutputTextDelta, RefusalDelta, ReasoningTextDelta, SummaryTextDelta, ArgumentsDelta]
#: Bytes to one of the `ResponsesDelta` events; raises ValueError for any other payload.
decode_responses_delta: Callable[[bytes], ResponsesDelta] = msgspec.json.Decoder(ResponsesDelta).decode


class OllamaMessage(msgspec.Struct, forbid_unknown_fields=True):
    content: str
    role: Union[str, None] = None
    thinking: Union[str, None] = None
    tool_calls: None = None


class OllamaLine(msgspec.Struct, forbid_unknown_fields=True):
    model: Union[str, None] = None
    created_at: Union[str, None] = None
    message: Union[OllamaMessage, None] = None
    response: Union[str, None] = None
    thinking: Union[str, None] = None
    done: Union[bool, None] = None
    tool_calls: None = None
    logprobs: None = None
    error: None = None
    remote_model: Union[str, None] = None
    remote_host: Union[str, None] = None


#: Bytes to an `OllamaLine`; raises ValueError for any other payload.
decode_ollama_line: Callable[[bytes], OllamaLine] = msgspec.json.Decoder(OllamaLine).decode


class GeminiTextPart(msgspec.Struct, forbid_unknown_fields=True):
    text: str


class GeminiContent(msgspec.Struct, forbid_unknown_fields=True):
    parts: list[GeminiTextPart]
    role: Union[str, None] = None


class GeminiCandidate(msgspec.Struct, forbid_unknown_fields=True):
    content: GeminiContent
    index: Union[int, None] = None
    finishReason: None = None


class GeminiChunk(msgspec.Struct, forbid_unknown_fields=True):
    candidates: list[GeminiCandidate]
    usageMetadata: Union[dict[str, Any], None] = None
    modelVersion: Union[str, None] = None
    responseId: Union[str, None] = None
    createTime: Union[str, None] = None
    promptFeedback: None = None
    modelStatus: None = None
    error: None = None


#: Bytes to a `GeminiChunk`; raises ValueError for any other payload.
decode_gemini_chunk: Callable[[bytes], GeminiChunk] = msgspec.json.Decoder(GeminiChunk).decode


class CohereContent(msgspec.Struct, forbid_unknown_fields=True):
    text: Union[str, None] = None
    thinking: Union[str, None] = None


class CohereMessage(msgspec.Struct, forbid_unknown_fields=True):
    content: CohereContent


class CohereDelta(msgspec.Struct, forbid_unknown_fields=True):
    message: CohereMessage


class CohereContentDelta(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["content-delta"]
    delta: CohereDelta
    index: Union[int, None] = None


#: Bytes to a `CohereContentDelta`; raises ValueError for any other payload.
decode_cohere_content_delta: Callable[[bytes], CohereContentDelta] = msgspec.json.Decoder(CohereContentDelta).decode


#: Each dialect's decoder of its hot shapes, by dialect name (see `Dialect.shape_decoder`).
DECODERS: dict[str, Callable[[bytes], Any]] = {
    "openai-chat": decode_chunk,
    "anthropic": decode_block_delta,
    "openai-responses": decode_responses_delta,
    "gemini": decode_gemini_chunk,
    "ollama": decode_ollama_line,
    "cohere": decode_cohere_content_delta,
}
