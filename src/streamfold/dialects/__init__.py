"""Dialects: one small module per vendor, registered by name.

`DIALECTS` maps a name to its class; `detect()` returns the first dialect
that claims a decoded payload (reference §3 order), or None.
"""

from __future__ import annotations

from ..framing import FrameIssue
from ..opaque import Opaque, find_carrier
from ..result import Result, register_exporter
from ._base import Dialect
from .a2a import A2A
from .ag_ui import AGUI
from .anthropic import Anthropic
from .bedrock import Bedrock
from .claude_stream_json import ClaudeStreamJSON
from .cloudflare import Cloudflare
from .cohere import Cohere
from .cohere_v1 import CohereV1
from .gemini import Gemini
from .gemini_interactions import GeminiInteractions
from .llama_cpp import LlamaCpp
from .lmstudio import LMStudio
from .mcp import MCP
from .ollama import Ollama
from .openai_chat import OpenAIChat
from .openai_completions import OpenAICompletions
from .openai_realtime import OpenAIRealtime
from .openai_responses import OpenAIResponses
from .tgi import TGI
from .unknown import Unknown
from .vercel_data import VercelData
from .vercel_ui import VercelUI

__all__ = ["DIALECTS", "Dialect", "carried_error", "detect", "for_transport", "opaque_state"]

# Reference §3 order: the first dialect that claims a payload wins. VercelUI claims only chunks of its
# schema's exact shapes, so it takes no other stream from where it is; it comes before OpenAIChat so
# that its exported UIMessage (role "assistant", no content) is read back as its own, not as a chat message.
# Realtime events (`event_id`) come before Responses, which claims every `response.*` name both use.
# GeminiInteractions claims only its own `event_type` names with their required fields, and no Interactions
# event has Gemini's `candidates`/`usageMetadata`, so the two are disjoint whichever comes first.
_DETECTION_ORDER: tuple[type[Dialect], ...] = (
    Bedrock, VercelUI, OpenAIChat, OpenAICompletions, OpenAIRealtime, OpenAIResponses, Anthropic, Gemini,
    GeminiInteractions,
    Cohere, CohereV1, TGI, LlamaCpp, LMStudio, Ollama, Cloudflare, A2A, MCP, AGUI, ClaudeStreamJSON, VercelData)

_ALL: tuple[type[Dialect], ...] = (*_DETECTION_ORDER, Unknown)
DIALECTS: dict[str, type[Dialect]] = {dialect.name: dialect for dialect in _ALL}


for _dialect in _ALL:
    register_exporter(_dialect.name, _dialect.export)


def for_transport(transport: str) -> type[Dialect] | None:
    """The dialect a transport decides on its own (the payloads alone do not say): AWS
    event-stream bytes are Bedrock's."""
    return next((dialect for dialect in _ALL if transport in dialect.transports), None)


def carried_error(issue: FrameIssue) -> tuple[str, str] | None:
    """The in-stream error a frame issue stands for in some vendor's streams (`Dialect.carried_error`)."""
    for dialect in _ALL:
        if (found := dialect.carried_error(issue)) is not None:
            return found
    return None


def opaque_state(result: Result) -> tuple[Opaque, ...]:
    """The opaque values of a reply a client must send back (`streamfold.opaque`), each with the
    frame that carried it; () for a dialect without an export or without such values."""
    dialect = DIALECTS.get(result.dialect)
    if dialect is None:
        return ()
    try:
        exported = result.export()
    except NotImplementedError:
        return ()
    return tuple(item.at_frame(find_carrier(result, item.value)) for item in dialect.opaque_state(exported))


def detect(value: object) -> type[Dialect] | None:
    for dialect in _DETECTION_ORDER:
        if dialect.claims(value):
            return dialect
    return None


# Bedrock's InvokeModel chunks wrap another vendor's events: it finds their dialect here (it
# cannot import the registry, which imports it).
Bedrock.detect_inner = detect
