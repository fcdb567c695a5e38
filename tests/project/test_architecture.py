"""The design, held from outside: module sizes, no import circle (type-only and
function-level imports included), and the core never reaching up into the fronts."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "streamfold"
#: The core: framing -> decoding -> dialects -> merge -> result (and its trace), and the fold that runs them.
CORE = ("framing", "decoding", "_json", "_text", "dialects", "merge", "_paths", "_textbuffer", "_toolargs", "result", "trace", "findings", "_codes",
        "events", "folding", "opaque")
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every streamfold module `name` imports, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            # The deepest known module the import names (a name imported from a package may be a submodule).
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def test_no_module_is_over_the_size_limit() -> None:
    long = {name: count for name, path in _modules().items()
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_there_is_no_import_circle() -> None:
    edges = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target):], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles[:10])


def test_the_core_never_imports_a_front() -> None:
    graph = _graph()
    core = {name for name in graph
            if name.removeprefix("streamfold.").split(".")[0] in CORE}
    upward = {name: sorted(target for target in targets if target != "streamfold" and target not in core)
              for name, targets in graph.items() if name in core}
    assert not {name: targets for name, targets in upward.items() if targets}


def test_the_graph_is_read_right() -> None:
    """The checks above can fail: the reader finds imports inside functions and under TYPE_CHECKING."""
    graph = _graph()
    assert "streamfold.result" in graph["streamfold.folding._build"]
    assert "streamfold.framing._records" in graph["streamfold.framing.sse"]
    assert "streamfold.dialects" in graph["streamfold.folding.folder"]
