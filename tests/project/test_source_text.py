"""Every source file compiles on every Python the package claims: since 3.13 a string literal is
encoded to UTF-8 at compile time, so one holding a lone surrogate (a `"\\ud800"` escape left
unescaped in a docstring) makes `import streamfold` raise UnicodeEncodeError there."""

from __future__ import annotations

import ast
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
