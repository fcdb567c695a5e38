"""`streamfold show` on what is not a stream: a short output that says what it is, exit 0, and
exit 1 with `--strict` when nothing was folded. And the round trip `export` then `show`, for every
dialect with an export."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from streamfold import fold
from streamfold.cli import cli
from streamfold.dialects import SPECS
from streamfold.result import Result

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "inputs"
CAPTURES = ROOT / "tests" / "captures"
BODY = (INPUTS / "raw-body.sse").read_bytes()
NGINX_502 = b"<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>\n"
SHORT = 20


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def _latin1() -> bytes:
    chunk = '{"choices":[{"index":0,"delta":{"content":"café "}}]}'.encode("latin-1")
    return b"".join(b"data: " + chunk + b"\n\n" for _ in range(12_000)) + b"data: [DONE]\n\n"


KINDS = {
    "empty": (b"", "empty-input", 1),
    "whitespace": (b"\n\n  \n", "empty-input", 1),
    "html": (NGINX_502, "html-page", 1),
    "curl-i-html": ((INPUTS / "curl-i-502-html.txt").read_bytes(), "html-page", 1),
    "binary": (random.Random(3).randbytes(102_400), "not-text", 1),
    "utf16": (b"\xff\xfe" + BODY.decode().encode("utf-16-le"), "text-encoding", 0),
    "utf32-be-no-bom": (BODY.decode().encode("utf-32-be"), "text-encoding", 0),
    "chat-completion": ((INPUTS / "chat-completion.json").read_bytes(), "not-a-stream", 0),
    "sdk-repr": ((INPUTS / "sdk-repr-openai.txt").read_bytes(), "sdk-repr", 0),
    "devtools": ((INPUTS / "devtools-eventstream.tsv").read_bytes(), "input-devtools", 0),
    "unknown-dialect": (b'data: {"hello": 1}\n\ndata: {"hello": 2}\n\n', "unknown-dialect", 1),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_show_says_what_the_input_is_in_a_short_output(kind: str, tmp_path: Path) -> None:
    data, code, strict_exit = KINDS[kind]
    path = tmp_path / "input"
    path.write_bytes(data)
    status, out = run("show", str(path))
    assert status == 0 and code in out
    assert len(out.splitlines()) <= SHORT, out
    assert run("--strict", "show", str(path))[0] == strict_exit


def test_the_latin1_stream_shows_three_findings_and_the_count_of_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "latin1.sse"
    path.write_bytes(_latin1())
    status, out = run("show", str(path))
    findings = out[out.index("findings"):].splitlines()
    assert status == 0 and len(findings) <= 10, findings
    assert sum(line.startswith("warning invalid-utf8 (frame ") for line in findings) == 3
    assert "… and 11,997 more invalid-utf8 findings (12,000 in all; --json lists the first 100)" in out
    assert "findings-collapsed" not in out  # its count is the line above


def test_a_few_findings_of_one_code_are_all_shown(tmp_path: Path) -> None:
    path = tmp_path / "three.sse"
    path.write_bytes(b"".join(b'data: {"choices":[{"index":0,"delta":{"content":"\xe9"}}]}\n\n' for _ in range(3)))
    out = run("show", str(path))[1]
    assert out.count("warning invalid-utf8") == 3 and "more invalid-utf8" not in out


def test_html_and_binary_json_results_carry_one_finding_and_no_frames(tmp_path: Path) -> None:
    for data, code in ((NGINX_502, "html-page"), (random.Random(3).randbytes(50_000), "not-text")):
        path = tmp_path / code
        path.write_bytes(data)
        out = json.loads(run("show", "--json", str(path))[1])
        assert [d["code"] for d in out["diagnostics"]] == [code] and out["frames"]["total"] == 0


@pytest.mark.parametrize("command", ["frames", "export"])
@pytest.mark.parametrize("kind", ["empty", "html", "binary"])
def test_frames_and_export_say_why_there_is_nothing(command: str, kind: str, tmp_path: Path) -> None:
    """No rows and no object: what the input is, said where they would have been (stderr)."""
    data = KINDS[kind][0]
    path = tmp_path / "input"
    path.write_bytes(data)
    result = CliRunner().invoke(cli, [command, str(path)], env={"COLUMNS": "100", "NO_COLOR": "1"})
    said = {"empty": "nothing to fold", "html": 'HTML page (title "502 Bad Gateway")', "binary": "not text"}[kind]
    assert said in result.stderr and result.stdout.strip() == ""
    assert len(result.stderr.splitlines()) <= 3


# -- export, then show: the non-streaming object reads back as the same reply ----------------------


def _exports(path: Path) -> bool:
    result = fold(path.read_bytes())
    try:
        result.export()
    except NotImplementedError:
        return False
    calls = [call for choice in result.choices for call in choice.tool_calls]
    # A failed or cut stream's export is no reply a server sends; nor is a broken call's.
    return result.complete and not result.errors and all(call.error is None for call in calls)


EXPORTED = sorted(p for p in CAPTURES.rglob("*") if p.is_file() and not p.name.endswith((".expect.json", ".md"))
                  and _exports(p))


def test_every_dialect_with_an_export_has_a_capture_here() -> None:
    with_export = {spec.name for spec in SPECS if spec.exports}
    assert with_export <= {fold(p.read_bytes()).dialect for p in EXPORTED}


def _facts(result: Result) -> list[object]:
    choice = result.choice(0)
    assert choice is not None
    return [choice.content, choice.reasoning or None, [(call.name, call.parsed) for call in choice.tool_calls]]


def _usage(result: Result) -> dict[str, object]:
    usage = result.usage
    return {} if usage is None else {key: value for key, value in usage.to_dict().items()
                                     if key != "raw" and value is not None}


@pytest.mark.parametrize("path", EXPORTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_show_reads_an_exported_object_back_as_the_streams_reply(path: Path, tmp_path: Path) -> None:
    exported = tmp_path / "reply.json"
    status, out = run("export", str(path))
    assert status == 0
    exported.write_text(out)
    status, shown = run("show", "--json", str(exported))
    back, original = Result.from_dict(json.loads(shown)), fold(path.read_bytes())
    assert status == 0 and back.dialect == original.dialect
    codes = [d.code for d in back.diagnostics]
    # The reply's own findings (a blocked prompt, a continuation) are the stream's too.
    assert codes[0] == "not-a-stream" and set(codes[1:]) <= {d.code for d in original.diagnostics}
    assert _facts(back) == _facts(original)
    # What the reply tells of the usage is the stream's (TGI's /generate details have no input_length).
    assert _usage(back).items() <= _usage(original).items()
    assert bool(_usage(back)) == bool(_usage(original))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_web_page_says_the_same_as_show(kind: str) -> None:
    from starlette.testclient import TestClient

    from streamfold.web.app import create_app

    data, code, _ = KINDS[kind]
    response = TestClient(create_app(), base_url="http://127.0.0.1").post("/api/fold", content=data)
    assert response.status_code == 200
    assert code in [d["code"] for d in response.json()["result"]["diagnostics"]]
