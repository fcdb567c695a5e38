"""The public surface, held: what `import streamfold` gives, how its values
print, and that no public signature takes a private keyword."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import streamfold
from streamfold import Folder, Phase, TextDelta, ToolCallDone, fold

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _isort_style(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each alphabetical."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert streamfold.__all__ == sorted(streamfold.__all__, key=_isort_style)
    for name in streamfold.__all__:
        assert hasattr(streamfold, name), name


def test_exported_members_live_in_streamfold() -> None:
    for name in streamfold.__all__:
        member = getattr(streamfold, name)
        module = getattr(member, "__module__", None)
        if module is not None and (inspect.isclass(member) or inspect.isfunction(member)):
            assert module.startswith("streamfold."), (name, module)


def test_no_public_signature_takes_a_private_keyword() -> None:
    offenders = []
    for name in streamfold.__all__:
        member = getattr(streamfold, name)
        callables = [member] if callable(member) else []
        if inspect.isclass(member):
            callables += [value for key, value in vars(member).items()
                          if not key.startswith("_") and callable(value)]
        for function in callables:
            try:
                parameters = inspect.signature(function).parameters
            except (TypeError, ValueError):
                continue
            offenders += [f"{name}.{getattr(function, '__name__', '')}({parameter})"
                          for parameter in parameters if parameter.startswith("_")]
    assert not offenders


def test_values_say_they_are_streamfold_values() -> None:
    result = fold((EXAMPLES / "openai-tool-calls.sse").read_bytes())
    choice = result.choices[0]
    for value in (result, choice, choice.tool_calls[0], choice.blocks[0], result.usage, result.frames[0]):
        assert repr(value).startswith("streamfold."), repr(value)
    broken = fold((EXAMPLES / "openai-broken.sse").read_bytes())
    for finding in (*broken.errors, *broken.diagnostics):
        assert repr(finding).startswith("streamfold."), repr(finding)
    folder = Folder()
    events = folder.feed(b'data: {"object":"chat.completion.chunk",'
                         b'"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n')
    assert repr(events[0]) == "streamfold.TextDelta(frame=0, choice=0, field='content', text='Hi')"


def test_finish_returns_the_events_the_end_of_the_stream_makes() -> None:
    """A tool call still open when the stream ends is parsed at the end: its ToolCallDone and
    the end-of-stream findings come from finish(), and close() returns the Result."""
    chunk = (b'data: {"object":"chat.completion.chunk","id":"c","model":"m","choices":[{"index":0,"delta":'
             b'{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\\"a\\": 1}"}}]}}]}\n\n')
    folder = Folder()
    during = folder.feed(chunk)
    assert not any(isinstance(event, ToolCallDone) for event in during)
    at_end = folder.finish()
    done = [event for event in at_end if isinstance(event, ToolCallDone)]
    assert [(event.name, event.arguments) for event in done] == [("f", {"a": 1})]
    assert "missing-terminal" in [event.finding.code for event in at_end if hasattr(event, "finding")]
    result = folder.close()
    assert result.choices[0].tool_calls[0].parsed == {"a": 1}
    with pytest.raises(RuntimeError):
        folder.close()
    with pytest.raises(RuntimeError):
        folder.feed(b"data: [DONE]\n\n")


def test_finish_twice_is_misuse() -> None:
    folder = Folder()
    folder.finish()
    with pytest.raises(RuntimeError):
        folder.finish()


def test_the_phase_follows_the_stream() -> None:
    folder = Folder()
    assert folder.phase is Phase.SNIFF
    folder.feed(b"da")
    assert folder.phase is Phase.SNIFF
    folder.feed(b"ta: {\"ping\": 1}\n\n")
    assert folder.phase is Phase.DETECT  # no dialect claims {"ping": 1}; it waits
    folder.feed(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')
    assert folder.phase is Phase.FOLD
    folder.feed(b"data: [DONE]\n\n")
    folder.feed(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"b"}}]}\n\n')
    assert folder.phase is Phase.AFTER_TERMINAL
    result = folder.close()
    assert folder.phase is Phase.CLOSED
    assert result.choices[0].content == "a"
    assert [d.code for d in result.diagnostics] == ["frame-after-terminal"]


def test_events_false_folds_the_same_without_events() -> None:
    data = (EXAMPLES / "openai-reasoning.sse").read_bytes()
    quiet, loud = Folder(events=False), Folder()
    assert quiet.feed(data) == [] and quiet.finish() == []
    assert any(isinstance(event, TextDelta) for event in loud.feed(data))
    assert quiet.close() == loud.close()
