"""The real captures other projects recorded from live servers (/work/shared/realworld, outside
the repository: never copied in). Skipped, with the reason, where they are not on the machine.

Every case folds to what the vendor's own SDK computed (their check.py, fold() and Folder() fed
one byte at a time and in random chunks), and a clean capture gives no warning a person would
call a false alarm: the warnings left on them are listed here with why each is real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import streamfold
from streamfold import Severity

REALWORLD = Path(os.environ.get("STREAMFOLD_REALWORLD", "/work/shared/realworld"))
CASES = REALWORLD / "cases"
SRC = Path(__file__).resolve().parents[2] / "src"

pytestmark = pytest.mark.skipif(not (REALWORLD / "check.py").is_file() or not CASES.is_dir(),
                                reason=f"the real-world captures are not at {REALWORLD}")

#: (case, code) -> why the warning is real, not a false alarm.
REAL = {
    # The capture is the proxy-stripped shape (data-only lines): the anthropic SDKs skip such frames.
    **{(case, "event-type-missing"): "no `event:` lines" for case in (
        "anthropic_clear_thinking_context_edit", "anthropic_message_delta_input_tokens",
        "anthropic_no_event_lines_tool_no_args", "anthropic_web_fetch_20260209")},
    # GitHub Copilot changes the response id on every lifecycle event: the openai SDK raises on it.
    ("copilot_responses_rotating_item_ids", "response-id-changed"): "the openai SDK refuses the stream",
    # The fixture files end without the blank line after the last frame.
    ("anthropic_sdk_max_tokens_partial_json", "unterminated-final-frame"): "no final blank line",
    ("anthropic_sdk_tool_use_fixture", "unterminated-final-frame"): "no final blank line",
    # ...nor a line end after the last `data:` line (message_stop): the spec discards that line, as the SDK does.
    **{(case, code): "no final line end" for case in ("anthropic_sdk_max_tokens_partial_json",
                                                      "anthropic_sdk_tool_use_fixture")
       for code in ("unterminated-final-line", "missing-terminal")},
    # Cut by max_tokens inside the tool input.
    ("anthropic_sdk_max_tokens_partial_json", "tool-args-invalid"): "cut by the token limit",
}
#: Cases that are not clean on purpose (edited or hand-written: an error or a missing event in them).
NOT_CLEAN = {"anthropic_midstream_error_event", "oai_chat_midstream_server_error", "oai_resp_error_event_handwritten",
             "oai_resp_stream_failed_handwritten", "oai_resp_insufficient_quota_error"}


def test_every_real_capture_folds_as_the_vendors_sdk_does() -> None:
    run = subprocess.run([sys.executable, str(REALWORLD / "check.py"), str(CASES), "--python"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].endswith(" passed, 0 failed")


def test_no_clean_real_capture_gives_a_false_alarm() -> None:
    unexplained = []
    for path in sorted(CASES.glob("*.stream")):
        if path.stem in NOT_CLEAN:
            continue
        result = streamfold.fold(path.read_bytes())
        for diagnostic in result.diagnostics:
            if diagnostic.severity is not Severity.INFO and (path.stem, diagnostic.code) not in REAL:
                unexplained.append((path.stem, diagnostic.code, diagnostic.message))
    assert unexplained == []


def test_no_real_capture_has_an_event_streamfold_calls_unknown() -> None:
    # A vendor's real event named `unknown-event` is a false alarm too, even at info level.
    unknown = []
    for path in sorted(CASES.glob("*.stream")):
        result = streamfold.fold(path.read_bytes())
        unknown += [(path.stem, d.message) for d in result.diagnostics
                    if d.code in ("unknown-event", "unknown-event-type")]
    assert unknown == []
