"""Every source file compiles on every Python the package claims: since 3.13 a string literal is
encoded to UTF-8 at compile time, so one holding a lone surrogate (a `"\\ud800"` escape left
unescaped in a docstring) makes `import streamfold` raise UnicodeEncodeError there."""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src").rglob("*.py"))


def _lone_surrogates(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node.value.encode("utf-8")
            except UnicodeEncodeError as exc:
                found.append(f"{path.name}:{node.lineno}: {exc.reason} at {exc.start}")
    return found


def test_no_string_literal_holds_a_lone_surrogate() -> None:
    assert len(SOURCES) > 100
    found = [line for path in SOURCES for line in _lone_surrogates(path)]
    assert not found, "string literals that UTF-8 cannot encode (write the escape as \\\\ud800):\n" + "\n".join(found)


def test_the_check_finds_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""a lone \\ud800 escape"""\nX = "fine"\n', encoding="utf-8")
    assert len(_lone_surrogates(bad)) == 1


def test_a_trailing_comma_is_reported_alike_on_every_python() -> None:
    # Python 3.13 reworded it and moved its position to the comma; a Result must not depend on the Python.
    from streamfold._json import loads

    cases = {"[1,]": ("Illegal trailing comma before end of array", 2),
             '{"a":1 , }': ("Illegal trailing comma before end of object", 7),
             '{"a":[1,\n ],}': ("Illegal trailing comma before end of array", 7),
             "[,]": ("Expecting value", 1), '{"a":1,,}': ("Expecting property name enclosed in double quotes", 7)}
    for text, (message, position) in cases.items():
        try:
            loads(text)
        except json.JSONDecodeError as exc:
            assert (exc.msg, exc.pos) == (message, position), text
        else:
            raise AssertionError(f"{text!r} decoded")
