"""streamfold's pytest plugin as a client's test suite gets it: an inner pytest run (`pytester`) of a short
test file using the `streamfold_server` fixture and `every_transparent_fault` (the openai SDK passes over
every transparent fault; a client that splits events on `\\n\\n` fails under `crlf`, and the failure names
the frame), the fixture used directly here, the entry point that registers it, and what importing it costs
(no uvicorn, no replay server, and `streamfold.testing` without pytest at all)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamfold.replay import FAULTS, FaultError, parse_fault
from streamfold.testing import assert_reply, every_transparent_fault, transparent_faults

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "examples" / "openai-tool-calls.sse"
SOURCE = ROOT / "src"


def entry_point() -> metadata.EntryPoint | None:
    """The installed streamfold-core's `pytest11` entry point (the code's distribution), if its metadata has one."""
    found = [ep for ep in metadata.distribution("streamfold-core").entry_points if ep.group == "pytest11"]
    return found[0] if found else None


# The inner run loads the plugin as the outer one did: by the entry point when the install has it, else by
# name (in the same process, where pytest warns that the module, imported already, cannot be rewritten).
PLUGIN_ARGS = [] if entry_point() is not None else ["-p", "streamfold.testing.plugin",
                                                     "-W", "ignore::pytest.PytestAssertRewriteWarning"]

CLIENT_TESTS = '''
import httpx2, json
from openai import OpenAI
from streamfold.testing import assert_reply, every_transparent_fault

@every_transparent_fault
def test_the_sdk_over_every_fault(streamfold_server, fault):
    server = streamfold_server({capture!r}, faults=fault)
    client = OpenAI(base_url=server.base_url_for("openai"), api_key="unused", max_retries=0)
    with client.chat.completions.stream(model="m", messages=[{{"role": "user", "content": "hi"}}]) as stream:
        reply = stream.get_final_completion()
    assert_reply(reply, server.expected)

def test_a_client_that_splits_events_on_two_newlines(streamfold_server):
    server = streamfold_server({capture!r}, faults=["crlf"])
    with httpx2.stream("POST", server.url + "/v1/chat/completions") as response:
        events = b"".join(response.iter_bytes()).split(b"\\n\\n")
    text = ""
    for event in events:
        try:
            text += json.loads(event[6:])["choices"][0]["delta"].get("content") or ""
        except ValueError:  # a keep-alive, [DONE], ...
            continue
    assert_reply(text, server.expected)
'''


def test_a_client_suite_runs_the_fixture_over_every_transparent_fault(pytester: pytest.Pytester) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("httpx2")
    pytester.makepyfile(test_client=CLIENT_TESTS.format(capture=str(TOOLS)))
    outcome = pytester.runpytest(*PLUGIN_ARGS, "-v", "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=len(transparent_faults()), failed=1)
    output = outcome.stdout.str()
    assert all(f"test_client.py::test_the_sdk_over_every_fault[{spec}] PASSED" in output
               for spec in transparent_faults())
    assert "FAILED test_client.py::test_a_client_that_splits_events_on_two_newlines" in output
    failure = output[output.index("ReplyMismatchError: "):]
    assert failure.startswith("ReplyMismatchError: the client's reply differs from streamfold's reference "
                              "(openai-chat): content differs at character 0 (frame ")
    assert "Probable cause:" in failure


def test_a_suite_that_does_not_use_it_runs_as_before(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_other="def test_one():\n    assert 1 + 1 == 2\n")
    outcome = pytester.runpytest("-W", "error", *PLUGIN_ARGS, "-q", "-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=1)


def test_the_package_declares_the_entry_point_and_this_suite_has_the_plugin(
        request: pytest.FixtureRequest) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["pytest11"] == {"streamfold": "streamfold.testing.plugin"}
    plugin = request.config.pluginmanager.get_plugin("streamfold")
    assert plugin is not None and plugin.__name__ == "streamfold.testing.plugin"


def test_the_installed_entry_point_loads_the_plugin_in_a_suite_without_conftest(tmp_path: Path) -> None:
    installed = entry_point()
    if installed is None:  # the lead's shared venv until `pip install -e .` is run again after this change
        pytest.skip("the installed streamfold's metadata predates its pytest11 entry point: pip install -e .")
    assert (installed.name, installed.value) == ("streamfold", "streamfold.testing.plugin")
    # This checkout's sources, as the outer run imports them (a relative PYTHONPATH would not hold in tmp_path).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")])}
    listed = subprocess.run([sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider", str(tmp_path)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert "streamfold_server" in listed.stdout, listed.stdout + listed.stderr


def test_the_plugin_imports_neither_the_server_nor_the_fold() -> None:
    code = ("import sys; import streamfold.testing.plugin; "
            "print(sorted(m for m in ('uvicorn', 'streamfold.replay', 'streamfold.services.check', "
            "'streamfold.testing._assert') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(SOURCE), "PATH": ""}).stdout.strip()
    assert loaded == "[]"


def test_streamfold_testing_works_without_pytest() -> None:
    code = textwrap.dedent("""
        import sys
        class NoPytest:
            def find_spec(self, name, path=None, target=None):
                if name in ("pytest", "_pytest") or name.startswith("_pytest."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, NoPytest())
        import streamfold.testing as testing
        print(len(testing.transparent_faults()), testing.every_transparent_fault)
        testing.assert_reply("Hello", b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\\n\\n')
        try:
            testing.every_transparent_fault(lambda fault: None)
        except ModuleNotFoundError as exc:
            print("decorating needs", exc.name)
        """)
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONPATH": str(SOURCE), "PATH": ""}).stdout.split("\n")
    assert shown[0] == f"{len(transparent_faults())} every_transparent_fault.for_transport(None, argname='fault')"
    assert shown[1] == "decorating needs pytest"


def test_the_transparent_faults_are_the_vocabulary_s() -> None:
    specs = transparent_faults()
    assert {parse_fault(spec).kind for spec in specs} == {kind.name for kind in FAULTS.values() if kind.transparent}
    assert all(parse_fault(spec).transparent for spec in specs)
    assert all(not kind.examples for kind in FAULTS.values() if not kind.transparent)
    for transport in ("ndjson", "json-array", "aws-eventstream", "websocket"):
        assert all(transport in FAULTS[parse_fault(spec).kind].transports for spec in transparent_faults(transport))
    assert transparent_faults("json-array") == ["chunk:1", "chunk:random", "split-utf8", "stall:1:0.05", "slow:1"]
    # A WebSocket capture is served as its JSONL of messages: it takes what every transport takes.
    assert transparent_faults("websocket") == transparent_faults("aws-eventstream")
    with pytest.raises(ValueError, match="transport must be one of"):
        transparent_faults("carrier-pigeon")


@every_transparent_fault.for_transport("ndjson", argname="spec")
def test_the_decorator_parametrises_by_transport(spec: str, request: pytest.FixtureRequest) -> None:
    assert spec in transparent_faults("ndjson") and request.node.name.endswith(f"[{spec}]")


def test_the_fixture_serves_and_keeps_each_request_s_reference(streamfold_server: Any) -> None:
    server = streamfold_server(TOOLS, faults="chunk:1")
    with pytest.raises(LookupError, match="no request has reached the replay server"):
        server.expected  # noqa: B018 - the property raises
    first = httpx.post(f"{server.base_url_for('openai')}/chat/completions", content=b"{}")
    second = httpx.post(f"{server.url}/anything", content=b"{}")
    assert first.content == second.content == TOOLS.read_bytes()
    assert [entry["request"] for entry in server.requests] == [1, 2]
    assert server.requests[0]["faults"] == ["chunk:1"] and server.requests[0]["finished"]
    assert server.expected.frames and server.expected_for(1).choices == server.expected.choices
    assert_reply(server.expected.choices[0].content, server.expected_for(int(first.headers["x-streamfold-request"])))
    assert server.base_url_for("openai") == f"{server.url}/v1"
    assert server.base_url_for("anthropic", capture="openai-tool-calls") == f"{server.url}/@openai-tool-calls"
    with pytest.raises(LookupError, match="no request 9"):
        server.expected_for(9)
    with pytest.raises(ValueError, match="not 'cohere'"):
        server.base_url_for("cohere")
    with pytest.raises(ValueError, match="no capture 'other'"):
        server.base_url_for("openai", capture="other")


def test_the_fixture_serves_bytes_and_refuses_what_cannot_be(streamfold_server: Any) -> None:
    server = streamfold_server(TOOLS.read_bytes(), faults=["keepalive:5"])
    assert httpx.get(server.url).content.count(b": keep-alive") > 3 and server.expected.complete
    with pytest.raises(FaultError, match="defined for sse streams only"):
        streamfold_server(ROOT / "tests" / "captures" / "gemini" / "f9-weather-thought-call-array.json",
                          faults="nospace")
    with pytest.raises(TypeError, match="not int"):
        streamfold_server(3)
