"""Dialects as declared specs (streamfold.dialects.spec, .registry): no payload of any capture is claimed
by two specs, so detection needs no order of dialects; the registry's table finds the one that claims
it; each spec's declarations (discriminators, keys, `keyless`) cover every payload it claims; and what
is generated from the specs (the request-path table, the addon's stream paths, the codes) holds."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from streamfold import PayloadKind, fold
from streamfold._codes import CODES
from streamfold.capture.mitmproxy_addon import STREAM_PATHS
from streamfold.dialects import DIALECTS, SPECS, DialectSpec, detect, spec_of
from streamfold.dialects.registry import request_path_dialect

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = Path(os.environ.get("STREAMFOLD_REALWORLD", "/work/shared/realworld")) / "cases"


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(path for path in folder.glob(pattern)
                  if path.is_file() and not path.name.endswith((".json", ".md", ".tsv", ".py")))


OURS = _files(ROOT / "tests" / "captures", "**/*") + _files(ROOT / "examples", "*")


def _payloads(data: bytes) -> list[object]:
    result = fold(data)
    return [result.payload(frame.index).value for frame in result.frames
            if result.frame_kinds[frame.index] is PayloadKind.JSON]


def _declared(spec: DialectSpec, value: object) -> bool:
    """Does one of the spec's discriminators or keys name this payload?"""
    if type(value) is not dict:
        return False
    for key, values in spec.discriminators.items():
        tag = value.get(key)
        if type(tag) is str and any(tag == v or (v.endswith("*") and tag.startswith(v[:-1])) for v in values):
            return True
    return any(key in value for key in spec.keys)


def _check_capture(path: Path) -> int:
    """Every payload is claimed by one spec at the most, detection finds that one, and the spec declared
    the payload's key or takes shapes without one; returns how many payloads were claimed."""
    claimed = 0
    for value in _payloads(path.read_bytes()):
        claimers = [spec for spec in SPECS if spec.claims(value)]
        assert len(claimers) <= 1, (path.name, value, [spec.name for spec in claimers])
        found = detect(value)
        if not claimers:
            assert found is None, (path.name, value, found)
            continue
        (spec,) = claimers
        claimed += 1
        assert found is spec.fold, (path.name, value, found)
        assert spec.keyless or _declared(spec, value), (path.name, spec.name, value)
    return claimed


@pytest.mark.parametrize("path", OURS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_payload_of_our_captures_is_claimed_by_exactly_one_spec(path: Path) -> None:
    claimed = _check_capture(path)
    result = fold(path.read_bytes())
    if result.dialect != "unknown" and result.transport != "aws-eventstream":
        # The dialect a capture folds as came from a payload one spec (and no other) claimed.
        assert claimed, path


def test_every_payload_of_the_real_world_captures_is_claimed_by_exactly_one_spec() -> None:
    if not REALWORLD.is_dir():
        pytest.skip(f"the real-world captures ({REALWORLD}) are not on this machine; tests/captures holds the rule")
    paths = _files(REALWORLD, "*")
    assert paths
    for path in paths:
        _check_capture(path)


def test_the_registry_holds_every_dialect_once_with_its_fold_class() -> None:
    assert [spec.name for spec in SPECS][-1] == "unknown"
    assert len({spec.name for spec in SPECS}) == len(SPECS) == len(DIALECTS)
    for spec in SPECS:
        assert DIALECTS[spec.name] is spec.fold and spec.fold.name == spec.name
        assert spec.title, spec.name
        for info in spec.codes:
            assert CODES[info.code] is info and info.vendor == spec.name


def test_a_spec_is_a_frozen_value_that_refuses_what_would_go_unnoticed() -> None:
    spec = SPECS[0]
    with pytest.raises(AttributeError):
        spec.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match="request_paths is a string"):
        DialectSpec("openai-chat", DIALECTS["openai-chat"], request_paths="/chat/completions")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whose name is 'anthropic'"):
        DialectSpec("openai-chat", DIALECTS["anthropic"])


@pytest.mark.parametrize(("path", "dialect"), [
    ("/v1/chat/completions", "openai-chat"), ("/openai/deployments/d/chat/completions", "openai-chat"),
    ("/v1/completions", "openai-completions"), ("/completion", "llama-cpp"), ("/v1/messages", "anthropic"),
    ("/v1/responses", "openai-responses"), ("/v1beta/models/g:streamGenerateContent", "gemini"),
    ("/api/chat", "ollama"), ("/api/generate", "ollama"), ("/api/v1/chat", "lmstudio"), ("/v2/chat", "cohere"),
    ("/model/m/converse-stream", "bedrock"), ("/generate_stream", "tgi"), ("/client/v4/ai/run/@cf/m", "cloudflare"),
    ("/v1/realtime", "openai-realtime"), ("/v1beta/interactions", "gemini-interactions"), ("/v1/chat", "cohere-v1"),
    ("/v1/complete", "anthropic-completions"), ("/v1/sessions/sesn_1/events/stream", "anthropic-agents"),
    ("/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", "gemini-live"),
    ("/run_sse", "adk"),
    ("/v1/conversations", "mistral-conversations"), ("/v1/conversations/conv_1/restart", "mistral-conversations"),
    ("/threads/t1/runs/stream", "langgraph"), ("/runs/stream", "langgraph"), ("/threads/t1/runs/wait", "langgraph"),
])
def test_the_request_path_table_comes_from_the_specs(path: str, dialect: str) -> None:
    found = request_path_dialect(path)
    assert found is not None and found.name == dialect
    assert request_path_dialect("/health") is None


def test_the_addon_records_the_stream_paths_every_spec_declares() -> None:
    declared = {marker for spec in SPECS for marker in spec.stream_paths}
    assert set(STREAM_PATHS) == declared
    assert {":streamGenerateContent", "/converse-stream", "/invoke-with-response-stream"} <= declared


def test_every_declared_fast_path_is_a_module_next_to_its_dialect() -> None:
    pytest.importorskip("msgspec")
    declared = {spec.name: spec.fast_path for spec in SPECS if spec.fast_path is not None}
    assert set(declared) == {"openai-chat", "openai-responses", "anthropic", "gemini", "cohere", "ollama", "mcp",
                             "bedrock", "openai-realtime", "ag-ui", "vercel-ui", "a2a"}
    for name, module in declared.items():
        assert module.startswith(DIALECTS[name].__module__.rsplit(".", 1)[0] + "."), (name, module)
        importlib.import_module(module)


def test_a_spec_says_whether_it_exports_and_reads_replies_back() -> None:
    by_name = {spec.name: spec for spec in SPECS}
    assert by_name["openai-chat"].exports and by_name["openai-chat"].reads_responses
    assert not by_name["unknown"].exports and not by_name["unknown"].reads_responses
    assert not by_name["vercel-data"].exports
    with pytest.raises(NotImplementedError, match="not available for the vercel-data dialect"):
        by_name["vercel-data"].export(fold(b'0:"Hi"\n'))


def test_legacy_completions_chunks_are_summarised_as_chat_chunks_are() -> None:
    """openai-completions was a subclass of openai-chat and took its frame summaries; its spec names them."""
    chunk = {"object": "text_completion", "choices": [{"text": "hi", "index": 0, "finish_reason": "stop"}]}
    assert spec_of("openai-completions").summary(chunk) == spec_of("openai-chat").summary(chunk) == "finish stop"
