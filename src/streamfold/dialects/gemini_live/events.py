"""The Gemini Live API's server messages (`BidiGenerateContentServerMessage`; google-genai 3.6.1
`types.LiveServerMessage`): the fields a message and its `serverContent` may hold, and what claims one."""

from __future__ import annotations

__all__ = ["CONTENT_FIELDS", "LIVE_ONLY_FIELDS", "MESSAGE_FIELDS", "base64_size", "claims_message", "summarize"]

#: The fields only a Live message has: a message holding one is the Live API's.
LIVE_ONLY_FIELDS = frozenset({
    "setupComplete", "serverContent", "toolCall", "toolCallCancellation", "goAway", "sessionResumptionUpdate",
    "voiceActivityDetectionSignal", "voiceActivity"})
#: Every field of a server message (each message holds one of the above, maybe with its usage).
MESSAGE_FIELDS = LIVE_ONLY_FIELDS | {"usageMetadata"}
#: The fields of `serverContent`.
CONTENT_FIELDS = frozenset({
    "modelTurn", "turnComplete", "interrupted", "groundingMetadata", "generationComplete", "inputTranscription",
    "outputTranscription", "urlContextMetadata", "turnCompleteReason", "waitingForInput",
    "interimInputTranscription", "interactionStatus"})


def claims_message(value: object) -> bool:
    """A Live server message: an object whose fields are all a server message's, one of them Live's own (a
    `streamGenerateContent` chunk has `usageMetadata` too, beside its `candidates`)."""
    return (type(value) is dict and not LIVE_ONLY_FIELDS.isdisjoint(value) and MESSAGE_FIELDS.issuperset(value)
            and all(type(value[key]) is dict for key in value))


def base64_size(data: object) -> int:
    """How many bytes a base64 text holds (inline audio, which is never text), without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=") if type(data) is str else 0


def summarize(value: object) -> str:
    """A message's line in the frames table: what it carries, the model's words first (audio by its size)."""
    if type(value) is not dict:
        return "not a Live message"
    said: list[str] = []
    content = value.get("serverContent")
    for key, item in (content.items() if type(content) is dict else ()):
        if key == "modelTurn" and type(item) is dict and type(item.get("parts")) is list:
            for part in item["parts"]:
                if type(part) is dict and type(part.get("text")) is str:
                    said.append(("thought " if part.get("thought") is True else "text ") + repr(part["text"][:60]))
                elif type(part) is dict and type(part.get("inlineData")) is dict:
                    said.append(f"audio ({base64_size(part['inlineData'].get('data'))} bytes)")
        elif key.endswith("Transcription") and type(item) is dict:
            said.append(f"{key} {str(item.get('text'))[:60]!r}")
        elif item is True or type(item) is str:
            said.append(key if item is True else f"{key} {item}")
    call = value.get("toolCall")
    for function in call.get("functionCalls") or () if type(call) is dict else ():
        if type(function) is dict:
            said.append(f"toolCall {function.get('name')}")
    said.extend(key for key in value if key not in ("serverContent", "toolCall"))
    return ", ".join(said) or "an empty message"
