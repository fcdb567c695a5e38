"""Records the ADK captures (tests/captures/adk/*.sse) from google-adk itself: `adk api_server`'s FastAPI app
(`get_fast_api_app`), run in this process, answers `POST /run_sse` with `streaming: true` for agents whose
model is ADK's own `Gemini` class talking to a scripted Gemini server on 127.0.0.1 (each model call gets the
next scripted `streamGenerateContent?alt=sse` body). So every byte of a capture is ADK's: its partial events,
its aggregates, its tool execution, its transfer and its error frame, as the endpoint frames them.

Run by the ADK interpreter (requirements/adk.txt), not by the suite:

    /work/venv-adk/bin/python tests/sdk/adk_recorder.py tests/captures/adk
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

MODEL = "gemini-2.5-flash"
USAGE = {"promptTokenCount": 21, "candidatesTokenCount": 9, "totalTokenCount": 30}


def chunk(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> dict[str, Any]:
    """One `GenerateContentResponse` of a Gemini stream."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": "resp-1"}
    if usage:
        out["usageMetadata"] = usage
    return out


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"text": value, **extra}


#: Per capture: the agent module's source (its `root_agent`), then each model call's chunks, in order
#: (a string instead of chunks: that HTTP status with Gemini's error body).
SCENARIOS: dict[str, tuple[str, list[list[dict[str, Any]] | int]]] = {
    "text-with-thoughts": ("""
        root_agent = LlmAgent(name="greeter", model=model(), instruction="Greet the user.")
        """, [[chunk(text("The user says hello; ", thought=True)), chunk(text("answer briefly.", thought=True)),
               chunk(text("Hello! ")), chunk(text("How can I help ")),
               chunk(text("you today?"), finish="STOP", usage=USAGE)]]),
    "tool-loop": ("""
        def get_weather(city: str) -> dict:
            \"\"\"The weather in a city.\"\"\"
            return {"city": city, "sky": "sunny", "celsius": 21}

        root_agent = LlmAgent(name="weather_agent", model=model(), instruction="Answer with the tool.",
                              tools=[get_weather])
        """, [[chunk(text("Let me look ")), chunk(text("that up.")),
               chunk({"functionCall": {"id": "call-weather-1", "name": "get_weather", "args": {"city": "Paris"}}},
                     finish="STOP", usage=USAGE)],
              [chunk(text("It is sunny in Paris, ")), chunk(text("21 °C."), finish="STOP", usage=USAGE)]]),
    # ADK's older aggregation (ADK_DISABLE_PROGRESSIVE_SSE_STREAMING): the text's aggregate comes alone, as a
    # final-looking event, and the function call after it in an event of its own.
    "tool-loop-legacy-aggregation": ("""
        def get_weather(city: str) -> dict:
            \"\"\"The weather in a city.\"\"\"
            return {"city": city, "sky": "cloudy", "celsius": 12}

        root_agent = LlmAgent(name="weather_agent", model=model(), instruction="Answer with the tool.",
                              tools=[get_weather])
        """, [[chunk(text("Checking ")), chunk(text("Lyon.")),
               chunk({"functionCall": {"id": "call-weather-3", "name": "get_weather", "args": {"city": "Lyon"}}},
                     finish="STOP", usage=USAGE)],
              [chunk(text("Cloudy in Lyon, ")), chunk(text("12 °C."), finish="STOP", usage=USAGE)]]),
    "transfer-to-sub-agent": ("""
        billing = LlmAgent(name="billing_agent", model=model(), instruction="Answer billing questions.",
                           description="Billing.")
        root_agent = LlmAgent(name="coordinator", model=model(), instruction="Route the user.",
                              sub_agents=[billing])
        """, [[chunk(text("Billing can answer that.")),
               chunk({"functionCall": {"id": "call-transfer-1", "name": "transfer_to_agent",
                                       "args": {"agent_name": "billing_agent"}}}, finish="STOP", usage=USAGE)],
              [chunk(text("Your last invoice ")), chunk(text("was paid on 3 May."), finish="STOP", usage=USAGE)]]),
    "parallel-branches": ("""
        a = LlmAgent(name="poet", model=model(), instruction="Write a line.")
        b = LlmAgent(name="critic", model=model(), instruction="Judge.")
        root_agent = SequentialAgent(name="pipeline", sub_agents=[ParallelAgent(name="fanout", sub_agents=[a, b])])
        """, [[chunk(text("Roses ")), chunk(text("are red."), finish="STOP", usage=USAGE)],
              [chunk(text("Fine ")), chunk(text("verse."), finish="STOP", usage=USAGE)]]),
    "max-tokens": ("""
        root_agent = LlmAgent(name="writer", model=model(), instruction="Write.")
        """, [[chunk(text("Once upon ")), chunk(text("a time"), finish="MAX_TOKENS", usage=USAGE)]]),
    "model-error-mid-run": ("""
        def get_weather(city: str) -> dict:
            \"\"\"The weather in a city.\"\"\"
            return {"city": city, "sky": "rain"}

        root_agent = LlmAgent(name="weather_agent", model=model(), instruction="Answer with the tool.",
                              tools=[get_weather])
        """, [[chunk({"functionCall": {"id": "call-weather-2", "name": "get_weather", "args": {"city": "Oslo"}}},
                     finish="STOP", usage=USAGE)], 400]),
}

AGENT_HEADER = f"""
import os
from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent
from google.adk.models import Gemini
from google.genai import types

def model():
    return Gemini(model="{MODEL}", base_url=os.environ["SCRIPTED_GEMINI_URL"],
                  retry_options=types.HttpRetryOptions(attempts=1))
"""


class ScriptedGemini(BaseHTTPRequestHandler):
    """Answers each model call with the next scripted stream."""

    script: ClassVar[list[list[dict[str, Any]] | int]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        answer = self.script.pop(0)
        if isinstance(answer, int):
            body = json.dumps({"error": {"code": answer, "message": "Request contains an invalid argument.",
                                         "status": "INVALID_ARGUMENT"}}).encode()
            self.send_response(answer)
            self.send_header("content-type", "application/json")
        else:
            body = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in answer)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def scripted_gemini() -> Iterator[str]:
    """One server for every capture (google-genai keeps its HTTP clients between agents)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedGemini)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def record(name: str, source: str, script: list[list[dict[str, Any]] | int]) -> bytes:
    from fastapi.testclient import TestClient
    from google.adk.cli.fast_api import get_fast_api_app

    ScriptedGemini.script = list(script)
    with tempfile.TemporaryDirectory() as agents:
        app_name = name.replace("-", "_")  # a module of its own: ADK's loader keeps the modules it loaded
        package = Path(agents) / app_name
        package.mkdir()
        (package / "__init__.py").write_text("from . import agent\n")
        (package / "agent.py").write_text(AGENT_HEADER + textwrap.dedent(source))
        app = get_fast_api_app(agents_dir=agents, web=False, auto_create_session=True)
        with TestClient(app) as client:
            answer = client.post("/run_sse", json={
                "appName": app_name, "userId": "user-1", "sessionId": f"session-{name}", "streaming": True,
                "newMessage": {"role": "user", "parts": [{"text": "Hi"}]}})
            assert answer.status_code == 200, answer.text
            return answer.content


def main(out: Path) -> None:
    os.environ.setdefault("GOOGLE_API_KEY", "test-key")
    os.environ.setdefault("GOOGLE_GENAI_USE_VERTEXAI", "0")
    with scripted_gemini() as url:
        os.environ["SCRIPTED_GEMINI_URL"] = url
        for name, (source, script) in SCENARIOS.items():
            legacy = "ADK_DISABLE_PROGRESSIVE_SSE_STREAMING"
            if name.endswith("-legacy-aggregation"):
                os.environ[legacy] = "1"
            body = record(name, source, script)
            os.environ.pop(legacy, None)
            (out / f"{name}.sse").write_bytes(body)
            print(name, len(body), "bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
