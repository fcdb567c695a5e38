"""Global options: --color, NO_COLOR, --quiet, --strict; completion; help examples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold.launcher import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "80", **(env or {})})
    return result.exit_code, result.stdout


def test_color_always_never_and_no_color() -> None:
    path = str(EXAMPLES / "openai-tool-calls.sse")
    assert "\x1b[" in invoke("--color", "always", "show", path)[1]
    assert "\x1b[" not in invoke("--color", "never", "show", path)[1]
    assert "\x1b[" not in invoke("show", path, env={"NO_COLOR": "1"})[1]


def test_quiet_prints_only_the_reply() -> None:
    code, out = invoke("-q", "show", str(EXAMPLES / "openai-reasoning.sse"))
    assert code == 0 and out.startswith("The sky looks blue")
    assert "usage" not in out and "Rayleigh" not in out and "openai-chat" not in out


def test_strict_fails_a_stream_with_errors() -> None:
    assert invoke("--strict", "show", str(EXAMPLES / "openai-broken.sse"))[0] == 1
    assert invoke("--strict", "show", str(EXAMPLES / "openai-plain-text.sse"))[0] == 0
    assert invoke("show", str(EXAMPLES / "openai-broken.sse"))[0] == 0


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(shell: str) -> None:
    code, out = invoke("completion", shell)
    assert code == 0 and "_STREAMFOLD_COMPLETE" in out


def test_every_command_has_an_example_in_its_help() -> None:
    for name in cli.commands:
        code, out = invoke(name, "--help")
        assert code == 0 and "Examples:" in out and "streamfold " in out.split("Examples:")[1], name


def test_help_documents_exit_codes() -> None:
    out = invoke("--help")[1]
    assert "Exit codes:" in out and "2  a usage error or unreadable input" in out


def test_completion_works_in_a_real_shell_environment() -> None:
    done = subprocess.run([sys.executable, "-m", "streamfold"], env={"_STREAMFOLD_COMPLETE": "bash_complete",
                          "COMP_WORDS": "streamfold sh", "COMP_CWORD": "1", "PATH": ""}, capture_output=True, text=True)
    assert "show" in done.stdout


def test_a_big_input_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    import os
    import pty

    chunk = (b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word "}}],'
             b'"padding":"' + b"x" * 200 + b'"}\n\n')
    big = tmp_path / "big.sse"
    big.write_bytes(chunk * (5 * 1024 * 1024 // len(chunk) + 1) + b"data: [DONE]\n\n")
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "streamfold", "-q", "show", str(big)], stdout=subprocess.DEVNULL,
                              stderr=terminal, timeout=120, env={**os.environ, "COLUMNS": "100"})
        os.close(terminal)
        seen = b""
        while True:
            try:
                piece = os.read(controller, 65536)
            except OSError:
                break
            if not piece:
                break
            seen += piece
    finally:
        os.close(controller)
    assert done.returncode == 0
    assert b"folding" in seen  # drawn on the terminal, then cleared (transient)
    quiet_pipe = subprocess.run([sys.executable, "-m", "streamfold", "show", str(big)], capture_output=True, timeout=120)
    assert b"folding" not in quiet_pipe.stderr  # never into a pipe
