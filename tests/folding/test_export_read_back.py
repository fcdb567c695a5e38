"""`streamfold export` read back as `streamfold show` reads a non-streaming reply tells what the fold
told: for every capture (tests/captures/, examples/) of every dialect that exports, the export is
serialised, loaded by the path `show` takes (`services.load`: a reply folded as a chunk, or read by its
dialect's `read_response`), and its choice 0 must hold the fold's tool calls (id, name, arguments),
content, reasoning, finish reason and usage. (A stream cut, or ended by an in-stream error, has a
finish reason no non-streaming reply can hold: there the read-back must only not claim a clean end.)"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from streamfold import Result
from streamfold.dialects import DIALECTS, SPECS
from streamfold.services import load
from streamfold.services.diff import read_response

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(path for folder in (ROOT / "tests" / "captures", ROOT / "examples") for path in folder.rglob("*")
                  if path.is_file() and not path.name.endswith((".expect.json", ".md")))
EXPORTING = sorted(spec.name for spec in SPECS if spec.exports)


@cache
def _folds() -> dict[str, list[tuple[str, Result]]]:
    """The captures that fold to a reply, by dialect."""
    found: dict[str, list[tuple[str, Result]]] = defaultdict(list)
    for path in CAPTURES:
        try:
            result = load(path.read_bytes()).result
        except ValueError:  # (InputError: an input that holds no stream, say a HAR without one)
            continue
        if result.choice(0) is not None:
            found[result.dialect].append((str(path.relative_to(ROOT)), result))
    return found


def _facts(result: Result) -> dict[str, Any]:
    """What choice 0 says."""
    choice = result.choice(0)
    assert choice is not None
    usage = result.usage
    return {
        "content": choice.content, "reasoning": choice.reasoning or None,
        # The arguments as a client uses them: parsed, or their text when they do not parse.
        "tool_calls": [(call.id, call.name, ("text", call.arguments) if call.error else ("parsed", call.parsed))
                       for call in choice.tool_calls],
        "usage": None if usage is None else (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens,
                                             usage.cache_read_tokens, usage.total_tokens),
        "finish_reason": choice.finish_reason}


def _finish_allowed(folded: Result, dialect: str, told: str | None) -> bool:
    """A fold that ended cleanly: the read-back tells its finish reason. One cut, or ended by an error the
    server sent in the stream: a non-streaming reply has no place for either (a request that fails gets
    an HTTP error, not a reply), so the read-back may tell anything but a clean ending the fold did not
    have, unless the vendor's own last finish reason (`finish_reason_raw`) said it."""
    choice = folded.choice(0)
    assert choice is not None
    if folded.complete or told == choice.finish_reason:
        return told == choice.finish_reason
    raw = choice.finish_reason_raw
    said = None if raw is None else DIALECTS[dialect]().normalise_finish(raw, bool(choice.tool_calls))
    return told == said or told not in ("stop", "length", "tool_calls", "content_filter")


@pytest.mark.parametrize("dialect", EXPORTING)
def test_an_export_read_back_as_show_reads_it_tells_what_the_fold_did(dialect: str) -> None:
    folds = _folds()[dialect]
    assert folds, f"no capture of the {dialect} dialect folds to a reply"
    wrong = []
    for path, folded in folds:
        exported = folded.export()
        body = json.dumps(exported, ensure_ascii=False, allow_nan=False).encode()
        back = load(body).result
        assert back.dialect == dialect, path
        want, got = _facts(folded), _facts(back)
        if "finish_reason" not in read_response(json.loads(body)):
            del want["finish_reason"], got["finish_reason"]  # the reply has no finish reason to tell (a UIMessage)
        elif _finish_allowed(folded, dialect, got["finish_reason"]):
            got["finish_reason"] = want["finish_reason"]
        if got != want:
            wrong.append(f"{path}: " + "; ".join(f"{key} {want[key]!r} became {got[key]!r}"
                                                  for key in want if got[key] != want[key]))
    assert not wrong, "\n".join(wrong)
