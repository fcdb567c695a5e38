"""The package's import graph read from the source with `ast` (tests/project/test_layers.py,
test_extras.py): every module a file imports, anywhere in it, relative imports resolved."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SOURCE / "streamfold"
FRONT_LIBRARIES = ("click", "rich", "starlette", "uvicorn")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every module `path` imports, anywhere in the file. For `from X import Y`
    both X and X.Y are given (Y may be a module); relative imports are resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and (getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) in
                   ("import_module", "__import__"))):
            # importlib.import_module("streamfold.web.app"), or relative with a package argument
            target = node.args[0].value
            if target.startswith("."):
                level = len(target) - len(target.lstrip("."))
                base = package.split(".")
                target = ".".join([*base[: len(base) - (level - 1)], *filter(None, [target.lstrip(".")])])
            yield node.lineno, target


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [f"{path.relative_to(SOURCE)}:{line} imports {module}"
            for path in files for line, module in imports(path)
            if any(inside(module, package) for package in forbidden)]


def files_of(*packages: str) -> list[Path]:
    found = [path for package in packages for path in sorted((PACKAGE / package).rglob("*.py"))]
    assert found, packages
    return found
