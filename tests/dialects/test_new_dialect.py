"""A new dialect is its own package and nothing else: the template of docs/new-dialect.md, written into a
temporary directory with a `*.dist-info` whose entry_points.txt registers it under `streamfold.dialects`,
is picked by detection, `fold`, the CLI (`show --json`), the web page's meta and fold, `serve`'s request
paths, the findings registry, the fuzz helper and the every-layer helper (`tr_fold`), with no file of
streamfold edited. The checks run in child processes, whose importlib.metadata sees the temporary
directory on their path (the registry reads the entry points once, when streamfold is imported)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "new-dialect.md"
TOY_STREAM = b"".join(json.dumps(line).encode() + b"\n" for line in (
    {"type": "toy.delta", "text": "Hello"}, {"type": "toy.delta", "text": ""}, {"type": "toy.delta", "text": ", toy"},
    {"type": "toy.end"}))


def _block(language: str) -> str:
    (found,) = re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    return str(found)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the toy dialect package and its distribution's metadata, as pip would install it."""
    folder = tmp_path_factory.mktemp("site")
    (folder / "streamfold_toy").mkdir()
    (folder / "streamfold_toy" / "__init__.py").write_text(_block("python"), encoding="utf-8")
    info = folder / "streamfold_toy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: streamfold-toy\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(_block("ini"), encoding="utf-8")
    (folder / "toy.ndjson").write_bytes(TOY_STREAM)
    return folder


def _run(site: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    paths = [str(site)] if site is not None else []
    paths += [str(ROOT / "tests"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300, check=False)


IN_PROCESS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from hypothesis import given
    from starlette.testclient import TestClient
    from feeding import tr_fold
    from mutations import FUZZ, check_result, mutated
    from streamfold import fold
    from streamfold._codes import CODES
    from streamfold.dialects import DIALECTS, detect
    from streamfold.dialects.registry import request_path_dialect
    from streamfold.web.app import create_app

    data = Path(sys.argv[1]).read_bytes()
    found = detect({"type": "toy.delta", "text": "x"})
    result = tr_fold(data)  # every chunking of the bytes folds to the same Result
    check_result(result)

    @FUZZ
    @given(mutated({"toy.ndjson": data}))
    def fuzz(mutant):
        check_result(fold(mutant))

    fuzz()
    client = TestClient(create_app(), base_url="http://127.0.0.1")
    meta = client.get("/api/meta").json()
    page = client.post("/api/fold", content=data).json()
    print(json.dumps({
        "detected": found.name if found else None, "known": "toy" in DIALECTS, "dialect": result.dialect,
        "content": result.choices[0].content, "finish": result.choices[0].finish_reason, "complete": result.complete,
        "codes": [d.code for d in result.diagnostics], "registered": CODES["toy-empty-delta"].vendor,
        "export": result.export(), "path": request_path_dialect("/toy/stream").name,
        "meta": "toy" in meta["dialects"], "page": [page["result"]["dialect"], page["export"], len(page["frames"])],
    }))
""")


def test_the_toy_dialect_is_picked_by_the_core_the_page_and_the_test_helpers(site: Path) -> None:
    done = _run(site, "-c", IN_PROCESS, str(site / "toy.ndjson"))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "detected": "toy", "known": True, "dialect": "toy", "content": "Hello, toy", "finish": "stop",
        "complete": True, "codes": ["toy-empty-delta"], "registered": "toy", "export": {"toy": "Hello, toy"},
        "path": "toy", "meta": True, "page": ["toy", {"toy": "Hello, toy"}, 4]}


def test_the_cli_names_the_toy_dialect_and_takes_it_by_name(site: Path) -> None:
    shown = _run(site, "-m", "streamfold", "show", "--json", str(site / "toy.ndjson"))
    assert json.loads(shown.stdout)["dialect"] == "toy", shown.stderr
    forced = _run(site, "-m", "streamfold", "show", "--json", "--dialect", "toy", str(site / "toy.ndjson"))
    assert json.loads(forced.stdout)["choices"][0]["content"] == "Hello, toy", forced.stderr


def test_without_its_entry_point_no_dialect_claims_the_toy_stream(site: Path) -> None:
    shown = _run(None, "-m", "streamfold", "show", "--json", str(site / "toy.ndjson"))
    assert json.loads(shown.stdout)["dialect"] == "unknown"


def test_a_broken_entry_point_is_named_and_left_out(tmp_path: Path) -> None:
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[streamfold.dialects]\nbroken = no_such_module:SPEC\n", encoding="utf-8")
    done = _run(tmp_path, "-c", "from streamfold.dialects import DIALECTS; print(len(DIALECTS))")
    assert done.returncode == 0 and int(done.stdout) >= 22
    assert "no_such_module:SPEC" in done.stderr


PLUGINS = textwrap.dedent('''
    from streamfold.dialects.spec import DialectSpec, vendor_codes
    from streamfold.findings import Severity
    from streamfold_toy import Toy

    class Claimed(Toy):
        name = "claimed"

    class Clashing(Toy):
        name = "clashing"

    # Its claims given in the spec, not by the fold class (whose inherited claims would take toy lines).
    CLAIMED = DialectSpec("claimed", Claimed, discriminators={"type": frozenset({"claimed.delta"})},
                          claims=lambda value: type(value) is dict and value.get("type") == "claimed.delta")
    # A code the core already has, with another meaning: the plugin is left out, streamfold goes on.
    CLASHING = DialectSpec("clashing", Clashing, discriminators={"type": frozenset({"clashing.delta"})},
                           codes=vendor_codes("clashing", ("missing-terminal", Severity.INFO, "not the core's")))
''')


def test_a_spec_s_own_claims_decide_and_a_plugin_whose_codes_clash_is_left_out(site: Path, tmp_path: Path) -> None:
    (tmp_path / "more_plugins.py").write_text(PLUGINS, encoding="utf-8")
    info = tmp_path / "more_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: more-plugins\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[streamfold.dialects]\nclaimed = more_plugins:CLAIMED\n"
                                           "clashing = more_plugins:CLASHING\n", encoding="utf-8")
    probe = ("import json; from streamfold._codes import CODES; from streamfold.dialects import DIALECTS, detect; "
             "found = detect({'type': 'claimed.delta'}); print(json.dumps([found and found.name, "
             "'clashing' in DIALECTS, CODES['missing-terminal'].vendor]))")
    done = _run(site, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {probe}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["claimed", False, None]
    assert "'clashing' is left out: its finding codes missing-terminal are another's" in done.stderr
