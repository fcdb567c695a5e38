"""What an ADK run holds beyond the Result (its lanes, hand-offs, the calls' results, the followed agent's
actions), the export, and the reverse: reading a `/run` body (a list of events) or one event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...findings import Report, Severity
from .._base import arguments_text

if TYPE_CHECKING:
    from ...result import Result

__all__ = ["Lanes", "export", "joined", "parts_of", "read_events"]

#: At most this many other lanes are named in the finding (all are in `native`).
_NAMED = 10


def parts_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    """An event's content parts (those that are objects)."""
    content = event.get("content")
    parts = content.get("parts") if type(content) is dict else None
    return [part for part in parts if type(part) is dict] if type(parts) is list else []


def joined(parts: list[dict[str, Any]], thought: bool) -> str:
    """The text of the parts that are thoughts (or of those that are not), joined."""
    return "".join(part["text"] for part in parts
                   if type(part.get("text")) is str and (part.get("thought") is True) is thought)


class Lanes:
    """The agents of a run: the one followed (its facts beyond the Result) and the others (listed)."""

    def __init__(self) -> None:
        #: The agent that holds the conversation (the default lane): the first to speak, then each hand-off's.
        self.holder: str | None = None
        #: author -> {"branch", "final_response": bool} of the lanes not followed (no frames: `native` holds
        #: none, so that a keep-alive comment between frames changes nothing of it); their first frames.
        self.others: dict[str, dict[str, Any]] = {}
        self._first_frames: dict[str, int] = {}
        self.handoffs: list[dict[str, Any]] = []
        self.results: dict[str, dict[str, Any]] = {}
        #: The followed lane's parts that are no text and no call (code, its results, media), whole.
        self.parts: list[dict[str, Any]] = []
        self.facts: dict[str, Any] = {}

    def other(self, author: object, branch: object, frame: int, final: bool) -> None:
        name = author if type(author) is str else repr(author)
        lane = self.others.setdefault(name, {"branch": branch, "final_response": False})
        self._first_frames.setdefault(name, frame)
        lane["final_response"] = lane["final_response"] or final

    def followed(self, value: dict[str, Any]) -> None:
        """An event of the followed lane: the facts it holds that the Result has no place for."""
        facts = self.facts
        facts.setdefault("author", value["author"])
        for key in ("branch", "interrupted", "turnComplete", "longRunningToolIds"):
            if value.get(key) not in (None, []):
                facts[key] = value[key]
        actions = value.get("actions")
        if type(actions) is not dict:
            return
        if type(actions.get("stateDelta")) is dict and actions["stateDelta"]:
            facts.setdefault("stateDelta", {}).update(actions["stateDelta"])
        if actions.get("escalate"):
            facts["escalated"] = True
        target = actions.get("transferToAgent")
        if type(target) is str and target:
            self.handoffs.append({"from": value["author"], "to": target})
            if self.holder == value["author"]:
                self.holder = target

    def result(self, response: dict[str, Any]) -> None:
        ident = response.get("id")
        key = ident if type(ident) is str and ident else f"{response.get('name')} #{len(self.results)}"
        self.results[key] = {"name": response.get("name"), "response": response.get("response")}

    def report_others(self, report: Report, followed: str | None) -> None:
        if not self.others:
            return
        named = ", ".join(f"{author!r} (from frame {frame})"
                          for author, frame in list(self._first_frames.items())[:_NAMED])
        first = min(self._first_frames.values())
        report.diagnostic(
            "adk-other-lanes", first,
            f"the run holds the events of {len(self.others)} more agent(s) than {followed!r}, the one folded: "
            f"{named}; their events are listed as frames but not folded (choose one as the lane to fold it)",
            severity=Severity.INFO, lanes=list(self.others))

    def snapshot(self, lane: str | None) -> dict[str, Any] | None:
        out: dict[str, Any] = dict(self.facts)
        if lane is not None:
            out["lane"] = lane
        for key, value in (("handoffs", self.handoffs), ("tool_results", self.results), ("parts", self.parts),
                           ("other_lanes", self.others)):
            if value:
                out[key] = value
        return out or None


def export(result: Result) -> dict[str, Any]:
    """The followed agent's run as one ADK `Event` (what `/run`'s non-partial events hold, joined; google-adk's
    `Event.model_validate` takes it): the reasoning as a thought part, each function call, then the answer."""
    choice = result.choice(0)
    native = result.native if isinstance(result.native, dict) else {}
    parts: list[dict[str, Any]] = []
    if choice is not None and choice.reasoning:
        parts.append({"text": choice.reasoning, "thought": True})
    for call in choice.tool_calls if choice is not None else ():
        function_call: dict[str, Any] = {"name": call.name, "args": call.parsed if call.error is None else {}}
        if call.id is not None:
            function_call["id"] = call.id
        parts.append({"functionCall": function_call})
    if choice is not None and choice.content:
        parts.append({"text": choice.content})
    event: dict[str, Any] = {"author": native.get("author", ""), "invocationId": result.id or "",
                             "content": {"role": "model", "parts": parts}, "partial": False}
    for key, value in (("modelVersion", result.model), ("finishReason", choice.finish_reason_raw if choice else None),
                       ("usageMetadata", result.usage.raw if result.usage else None), ("branch", native.get("branch"))):
        if value is not None:
            event[key] = value
    return event


def read_events(value: object) -> dict[str, Any] | None:
    """The facts of a `/run` body (a list of ADK events) or of one event, or None when `value` is neither."""
    given = value if type(value) is list else [value]
    events: list[dict[str, Any]] = [event for event in given if type(event) is dict
                                    and type(event.get("author")) is str and type(event.get("content", {})) is dict]
    if not events or len(events) != len(given) or (type(value) is dict and "content" not in value):
        return None
    answer: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[Any, str]] = []
    ids: list[Any] = []
    finish, usage = None, None
    for event in events:
        parts = parts_of(event)
        at_calls = [at for at, part in enumerate(parts) if type(part.get("functionCall")) is dict]
        reasoning.append(joined(parts, True))
        if at_calls and type(value) is list:
            # Said before a call: not the answer (as the fold reads it); the text after the last call stays.
            reasoning.extend([*answer, joined(parts[: at_calls[-1]], False)])
            answer = [joined(parts[at_calls[-1]:], False)]
        else:
            answer.append(joined(parts, False))
        for at in at_calls:
            call = parts[at]["functionCall"]
            calls.append((call.get("name"), arguments_text(call.get("args") or {})))
            ids.append(call.get("id"))
        finish = event.get("finishReason", finish)
        usage = event.get("usageMetadata", usage)
    return {"content": "".join(answer), "reasoning": "".join(reasoning) or None, "tool_calls": calls,
            "tool_call_ids": ids, "finish_reason": finish, "usage": usage}
