"""Every JSON the fronts write (the CLI, the page, the servers, the store) is strict JSON: they write it
through `_json.dumps_strict`, or say `allow_nan=False` themselves. `show --json` once printed `NaN`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "streamfold"
FRONTS = ("cli", "web", "replay", "proxy", "capture", "store", "testing")
WRITERS = {("json", "dumps"), ("json", "dump"), ("json", "JSONEncoder")}


def _lenient_writers(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in WRITERS):
            continue
        strict = any(keyword.arg == "allow_nan" and isinstance(keyword.value, ast.Constant)
                     and keyword.value.value is False for keyword in node.keywords)
        if not strict:
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_the_fronts_write_only_strict_json() -> None:
    files = [path for front in FRONTS for path in sorted((PACKAGE / front).rglob("*.py"))]
    files += [*sorted((PACKAGE / "fronts").rglob("*.py")), PACKAGE / "launcher.py"]
    assert len(files) > 40
    lenient = [where for path in files for where in _lenient_writers(path)]
    assert not lenient, f"json.dumps without allow_nan=False (use _json.dumps_strict): {lenient}"


def test_the_check_sees_a_lenient_writer(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text("import json\nA = json.dumps({})\nB = json.dumps({}, allow_nan=False)\n", encoding="utf-8")
    assert _lenient_writers(source, tmp_path) == ["x.py:2"]
