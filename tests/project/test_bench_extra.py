"""The `[bench]` extra installs every peer benchmarks/bench_fold.py compares against:
a peer it cannot import shows as "not importable" instead of a row."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Top-level module -> the distributions it needs installed (httpx-sse imports httpx but does not require it).
NEEDS = {"openai": {"openai"}, "httpx_sse": {"httpx-sse", "httpx"}, "orjson": {"orjson"}, "msgspec": {"msgspec"}}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def test_bench_extra_installs_every_peer_bench_fold_imports() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = _names(project["dependencies"]) | _names(project["optional-dependencies"]["bench"])
    tree = ast.parse((ROOT / "benchmarks" / "bench_fold.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    third_party = imported - set(sys.stdlib_module_names) - {"streamfold", "__future__"}
    assert third_party <= set(NEEDS), f"bench_fold.py imports {sorted(third_party - set(NEEDS))}: add them to NEEDS"
    for module in sorted(third_party):
        assert NEEDS[module] <= installed, f"{module} needs {sorted(NEEDS[module] - installed)} in the [bench] extra"
