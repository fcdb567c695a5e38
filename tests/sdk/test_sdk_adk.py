"""Google ADK's `/run_sse` read by google-adk itself, in a virtualenv of its own (google-adk pins an older
opentelemetry than the suite's lock): its own client, `AdkWebServerClient.run_agent` (the HTTP client of
ADK's conformance tests, which validates every `data:` line as an `Event` and raises on the endpoint's
error line), talking HTTP to `streamfold serve` on 127.0.0.1, and `Event.model_validate_json` on every frame.
What the SDK's events say (the final responses, the function calls, the lanes, the error) must be what the
fold says; and every field of the SDK's `Event`, its `actions` and a content part must be one the dialect
names (`streamfold.dialects.adk.fields`), read from the SDK at test time; and each capture's export is an
`Event` to `Event.model_validate`, holding the fold's answer and calls.

The interpreter is $STREAMFOLD_ADK_PYTHON (.ci/run makes it from requirements/adk.txt); without it these
tests skip and say how to make one.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.adk import fields
from streamfold.testing import start_server

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "tests" / "captures" / "adk").glob("*.sse"))
ADK = os.environ.get("STREAMFOLD_ADK_PYTHON")
pytestmark = pytest.mark.skipif(
    not ADK, reason="no google-adk interpreter: python3 -m venv .venv-adk && .venv-adk/bin/pip install -r "
    "requirements/adk.txt, then STREAMFOLD_ADK_PYTHON=$PWD/.venv-adk/bin/python")

#: Run by the ADK interpreter (once: importing google-adk takes seconds): per capture (served under /@NAME),
#: and for the faulted one, every event ADK's client yields with its `is_final_response()`, or the error it
#: raised after them; every frame validated by `Event`; the SDK's fields.
CLIENT = """
import asyncio, json, sys
from google.adk.cli.adk_web_server import RunAgentRequest
from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.version import __version__
from google.genai import types

base, faulted, exports, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

async def run(url):
    seen, error = [], None
    async with AdkWebServerClient(base_url=url) as client:
        request = RunAgentRequest(app_name="app", user_id="user-1", session_id="s", streaming=True,
                                  new_message=types.UserContent(parts=[types.Part(text="Hi")]))
        try:
            async for event in client.run_agent(request):
                seen.append([event.model_dump(mode="json", by_alias=True, exclude_none=True), event.is_final_response()])
        except RuntimeError as exc:
            error = str(exc)
    return {"events": seen, "error": error}

def validated(path):
    count = 0
    for block in open(path, encoding="utf-8").read().split("\\n\\n"):
        data = block[len("data: "):] if block.startswith("data: ") else None
        if data and '"error_details"' not in data:
            Event.model_validate_json(data)
            count += 1
    return count

names = [path.rsplit("/", 1)[-1][: -len(".sse")] for path in paths]
print(json.dumps({
    "version": __version__,
    "runs": {name: asyncio.run(run(f"{base}/@{name}")) for name in names},
    "faulted": asyncio.run(run(faulted)),
    "validated": {name: validated(path) for name, path in zip(names, paths)},
    "exports": {name: Event.model_validate(value).model_dump(mode="json", by_alias=True, exclude_none=True)
                for name, value in json.load(open(exports, encoding="utf-8")).items()},
    "fields": {"event": [f.alias or n for n, f in Event.model_fields.items()],
               "actions": [f.alias or n for n, f in EventActions.model_fields.items()],
               "part": [f.alias or n for n, f in types.Part.model_fields.items()]}}))
"""


#: The capture the replay server breaks with an error line, after its third event.
FAULTED = ROOT / "tests" / "captures" / "adk" / "tool-loop.sse"


@cache
def _read() -> dict[str, Any]:
    exports = {path.stem: fold(path.read_bytes()).export() for path in CAPTURES}
    with tempfile.TemporaryDirectory() as folder, start_server(*CAPTURES) as server, \
            start_server(FAULTED, faults=["error-event:3"]) as faulted:
        exported = Path(folder) / "exports.json"
        exported.write_text(json.dumps(exports), encoding="utf-8")
        done = subprocess.run([str(ADK), "-c", CLIENT, server.url, faulted.url, str(exported), *map(str, CAPTURES)],
                              capture_output=True, text=True, timeout=120)
        read: dict[str, Any] = json.loads(done.stdout) if done.returncode == 0 else {"stderr": done.stderr}
        read["expected"] = faulted.expected
    assert "stderr" not in read, read.get("stderr")
    return read


def _texts(event: dict[str, Any], thought: bool) -> str:
    parts = (event.get("content") or {}).get("parts") or []
    return "".join(part.get("text", "") for part in parts if bool(part.get("thought")) is thought)


def _calls(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [part["functionCall"] for part in (event.get("content") or {}).get("parts") or [] if "functionCall" in part]


def _holders(events: list[tuple[dict[str, Any], bool]], first: str) -> list[tuple[dict[str, Any], bool]]:
    """The events of the agent holding the conversation: `first`, then each one it hands off to."""
    holder, held = first, []
    for event, final in events:
        if event["author"] == holder:
            held.append((event, final))
            holder = (event.get("actions") or {}).get("transferToAgent") or holder
    return held


def _what_adk_says(held: list[tuple[dict[str, Any], bool]]) -> dict[str, Any]:
    """The reply as ADK's events tell it: the text of the final responses (`is_final_response()`) that no
    function call follows, the thoughts and the rest of the text, the calls (of non-partial events)."""
    lane = [(event, final) for event, final in held if not event.get("partial")]
    content, reasoning, calls = [], [], []
    for at, (event, final) in enumerate(lane):
        later_call = any(_calls(after) for after, _ in lane[at + 1:])
        answer = _texts(event, False) if final and not later_call and not _calls(event) else ""
        content.append(answer)
        reasoning.append(_texts(event, True) + (_texts(event, False) if not answer else ""))
        calls.extend((call.get("id"), call["name"], call.get("args")) for call in _calls(event))
    return {"content": "".join(content), "reasoning": "".join(reasoning) or None, "calls": calls}


def test_every_field_of_the_sdks_event_is_folded_or_named() -> None:
    read = _read()
    for kind, named in (("event", fields.EVENT), ("actions", fields.ACTIONS), ("part", fields.PART)):
        sdk = {name if kind != "part" else _camel(name) for name in read["fields"][kind]}
        assert sdk <= set(named), f"google-adk {read['version']}: {kind} fields not named: {sorted(sdk - set(named))}"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_adks_own_client_reads_each_capture_as_the_fold_does(path: Path) -> None:
    read = _read()
    run = read["runs"][path.stem]
    result = fold(path.read_bytes())
    choice = result.choice(0)
    assert choice is not None and result.dialect == "adk"
    events = [(event, final) for event, final in run["events"]]
    assert len(events) == read["validated"][path.stem] > 0  # every event frame is an `Event` to the SDK
    native = result.native if isinstance(result.native, dict) else {}
    held = _holders(events, native["author"])
    said = _what_adk_says(held)
    if "adk-no-aggregate" in {d.code for d in result.diagnostics}:
        # Cut before the aggregate: ADK's client has only partials, which the fold keeps as streamed.
        tail = [event for event, _ in held][-2:]
        assert all(event.get("partial") for event in tail)
        assert choice.content.endswith("".join(_texts(event, False) for event in tail))
    else:
        assert choice.content == said["content"]
        assert choice.reasoning == said["reasoning"]
    assert [(call.id, call.name, call.parsed) for call in choice.tool_calls] == said["calls"]
    assert set(native.get("other_lanes", {})) == {event["author"] for event, _ in events} - {
        event["author"] for event, _ in held}
    failed = [error for error in result.errors if "run failed" in error.message]
    assert (run["error"] is not None) == bool(failed)
    if failed:
        assert run["error"] in failed[0].message


def test_the_error_line_the_replay_server_puts_in_is_the_clients_error() -> None:
    read = _read()
    run = read["faulted"]
    assert run["error"] is not None and "ServerError" in run["error"] and len(run["events"]) == 3
    assert [error.code for error in read["expected"].errors] == ["in-stream-error"]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda path: path.stem)
def test_the_export_is_an_event_to_the_sdk_with_the_folds_reply(path: Path) -> None:
    event = _read()["exports"][path.stem]
    choice = fold(path.read_bytes()).choices[0]
    parts = event["content"]["parts"]
    assert "".join(p.get("text", "") for p in parts if not p.get("thought")) == choice.content
    assert [p["functionCall"]["name"] for p in parts if "functionCall" in p] == [c.name for c in choice.tool_calls]

