"""The agents of a multi-agent response (beta `openai-beta: responses_multi_agent=v1`, openai-python 3.63
`types/beta`): the root agent (`/root`) spawns sub-agents (`/root/<task>`) with hosted `multi_agent_call`
items, and every item and most events name the agent that owns them (`agent: {"agent_name": ...}`). Their
events interleave in one stream, with one `sequence_number` and one `output_index` space.

Each agent is a lane. The reply is the root's (the agent that took the request and gives the final answer);
`lane` names another to fold that one alone. An event that names no agent is the root's; the response's own
events (its lifecycle, its end, an `error`, the WebSocket's `response.inject.*` answers) belong to every lane.
The events and output items of the other lanes are not folded: each is listed once (`responses-other-agents`),
with the function calls it made, which the client has to run whichever lane it reads."""

from __future__ import annotations

from typing import Any

from ...findings import Report, Severity

__all__ = ["ROOT", "AgentLanes", "agent_name"]

#: The root agent's name (the multi-agent guide: "The agent that receives the original request is the root
#: agent and is named `/root`").
ROOT = "/root"
#: Events of the response itself, folded whichever lane is followed.
_SHARED = frozenset({"response.created", "response.in_progress", "response.queued", "response.completed",
                     "response.incomplete", "response.failed", "response.done", "error", "response.inject.created",
                     "response.inject.failed"})
#: At most this many other agents are named in the finding (all are in `native`).
_NAMED = 10


def agent_name(value: dict[str, Any]) -> str | None:
    """The agent an event or item names, or None."""
    agent = value.get("agent")
    name = agent.get("agent_name") if type(agent) is dict else None
    return name if type(name) is str and name else None


class AgentLanes:
    """Which agent's events fold, and what the others did."""

    def __init__(self) -> None:
        #: An event named an agent (or a lane was chosen): from then on every event is asked whose it is.
        self.active = False
        self.root = ROOT
        #: Agent -> the first frame of its events, for the lanes not followed.
        self.first_frames: dict[str, int] = {}
        #: Agent -> the function calls (name and call id) it made, for the lanes not followed.
        self.calls: dict[str, list[dict[str, Any]]] = {}
        #: The output indexes of the other lanes' items: an event of one that names no agent is theirs too.
        self.their_items: set[int] = set()
        #: The answers to the client's `response.inject` (WebSocket), in order.
        self.injections: list[dict[str, Any]] = []
        #: Every agent whose events came (the followed one too) -> its first frame; the followed one, once seen.
        self.seen: dict[str, int] = {}
        self.followed: str | None = None

    def follows(self, value: dict[str, Any], kind: str, lane: str | None, frame: int) -> bool:
        """Does this event fold, when `lane` (None: the root) is followed?"""
        self.active = True
        name = agent_name(value)
        if kind in _SHARED:
            if kind == "response.created" and name is not None:
                self.root = name
            return True
        item = value.get("item")
        if name is None and type(item) is dict:
            name = agent_name(item)
        index = value.get("output_index")
        index = index if type(index) is int else None  # (a list there is a wrong payload, and no key)
        if name is None and index is not None and index in self.their_items:
            return False
        owner = name or self.root
        self.seen.setdefault(owner, frame)
        if owner == (lane or self.root):
            self.followed = owner
            return True
        self.first_frames.setdefault(owner, frame)
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            if index is not None:
                self.their_items.add(index)
            if type(item) is dict and item.get("type") == "function_call" and kind == "response.output_item.done":
                self.calls.setdefault(owner, []).append({"name": item.get("name"), "call_id": item.get("call_id")})
        return False

    def injected(self, value: dict[str, Any], frame: int) -> None:
        """`response.inject.created` (WebSocket): the client's injected input was committed to the response."""
        self.injections.append({"response_id": value.get("response_id"), "committed": True})

    def inject_failed(self, value: dict[str, Any], frame: int, report: Report) -> None:
        """`response.inject.failed`: the input was not committed; the client has to send it again elsewhere."""
        error: dict[str, Any] = value["error"] if type(value.get("error")) is dict else {}
        given = value.get("input")
        count = len(given) if type(given) is list else 0
        self.injections.append({"response_id": value.get("response_id"), "committed": False,
                                "code": error.get("code")})
        report.diagnostic(
            "responses-inject-failed", frame,
            f"the server did not commit {count} injected input item(s) to response {value.get('response_id')!r} "
            f"({error.get('code')}: {error.get('message')}); an agent waiting for them waits on: the client has to "
            "send them again (in a new response that continues the completed one, for `response_already_completed`)",
            error_code=error.get("code"))

    def owns(self, item: dict[str, Any], lane: str | None) -> bool:
        """Is this output item (of the terminal `response.output`) the followed lane's?"""
        return (agent_name(item) or self.root) == (lane or self.root)

    def report_others(self, report: Report, lane: str | None) -> None:
        if not self.first_frames:
            return
        named = []
        for owner, frame in list(self.first_frames.items())[:_NAMED]:
            calls = self.calls.get(owner, [])
            ran = f", {len(calls)} function call(s): {', '.join(str(c['name']) for c in calls)}" if calls \
                else ""
            named.append(f"{owner!r} (from frame {frame}{ran})")
        report.diagnostic(
            "responses-other-agents", min(self.first_frames.values()),
            f"the response holds the events of {len(self.first_frames)} agent(s) besides {lane or self.root!r}, "
            f"the one folded: {'; '.join(named)}; their events are listed as frames but not folded (choose one "
            "as the lane to fold it)", severity=Severity.INFO, agents=list(self.first_frames))

    def snapshot(self, lane: str | None) -> dict[str, Any] | None:
        """The lane folded and the others' function calls, for `native` (frames are not kept there)."""
        if not self.active:
            return None
        out: dict[str, Any] = {"lane": lane or self.root, "others": {
            owner: {"function_calls": self.calls.get(owner, [])} for owner in self.first_frames}}
        if self.injections:
            out["injections"] = self.injections
        return out
