"""Which Python modules the page needs: the import closure of its roots over streamfold's own
sources and the runtime's standard library.

The page's worker imports streamfold's core and `web/api.py`, nothing else of streamfold's; the
runtime's standard library zip holds all of CPython's (2.5 MB, 2.4 MB compressed: a third of a
first visit). Both are cut to what can be imported from the roots: every `import` statement
counts, wherever it stands (in a function, under `try`), so a module the page only reaches on a
rare path is kept too. What is imported by a name computed at run time is declared here instead
(`WHOLE`: the dialects, which the registry imports by name; `CODECS`, the text codecs).

The standard library's sources are read with `ast` of the Python running the build, which may be
older than the runtime's (3.10 against 3.14): a module whose syntax it does not know is scanned
for its import lines instead, keeping more rather than less.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator

__all__ = ["CODECS", "NEVER_IN_A_TAB", "PAGE_ROOTS", "RUNTIME_ROOTS", "SERVER_ONLY", "WHOLE", "closure",
           "imported_names"]

#: What the worker imports itself (`adapter.py` imports `web.api`; `bytecode.py`), and the dialects' registry.
PAGE_ROOTS = ("streamfold", "streamfold.web.page.adapter", "streamfold.web.page.bytecode")

#: The text codecs, imported by name when a codec is first looked up: the Unicode ones streamfold decodes
#: with (an input's BOM names UTF-16 or UTF-32), ASCII and Latin-1, and what the runtime and the kept
#: standard library look up themselves (a zip's legacy names, a host name's IDNA). The hundred
#: single-byte tables left out (300 KB) are codecs no input of streamfold's is decoded with.
CODECS = tuple(f"encodings.{name}" for name in (
    "aliases", "utf_8", "utf_8_sig", "utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be",
    "ascii", "latin_1", "cp437", "idna", "punycode", "raw_unicode_escape", "unicode_escape"))

#: What the runtime imports as it starts and as it installs a wheel (measured: `sys.modules` after
#: `loadPyodide()` and `loadPackage()` of msgspec's wheel, Pyodide 314.0.8).
RUNTIME_ROOTS = ("site", "_pyodide", "pyodide", "pyodide.code", "pyodide.ffi", "pyodide.webloop",
                 "pyodide._package_loader", "importlib.metadata", "tarfile", "zipfile", "email", "asyncio",
                 "encodings", *CODECS, "_sysconfigdata__emscripten_wasm32-emscripten", "sysconfig")

#: Packages kept whole: their modules are imported by names built at run time (the dialects), or by the
#: runtime's C code (Pyodide's own).
WHOLE = ("streamfold.dialects", "_pyodide", "pyodide")


#: What a browser tab never runs, though something kept imports it: what only a person at a Python prompt
#: reaches (help() and its server, the REPL and its completion, the debugger, doctest and unittest), other
#: processes, a command line's options (a tab has none), FTP URLs, macOS's version files (plistlib, and
#: xml through it), and the pure-Python datetime the runtime's built-in `_datetime` stands in for.
NEVER_IN_A_TAB = ("pydoc", "_pyrepl", "rlcompleter", "pdb", "doctest", "unittest", "multiprocessing",
                  "concurrent.futures.process", "http.server", "socketserver", "webbrowser", "xmlrpc", "argparse",
                  "getopt", "ftplib", "plistlib", "_pydatetime")

#: streamfold's parts the page never runs: the fronts that need a server, a terminal or a fleet's
#: libraries (each imported only where the page cannot go: `PageApi.fleet*` without a fleet).
SERVER_ONLY = ("streamfold.fleet", "streamfold.cli", "streamfold.proxy", "streamfold.capture", "streamfold.replay",
               "streamfold.testing", "streamfold.launcher", "streamfold.__main__", "streamfold.fronts.terminal",
               "streamfold.web.app", "streamfold.web.access", "streamfold.web.limits", "streamfold.web.protocol",
               "streamfold.web.server", "streamfold.web.command", "streamfold.web.page.command",
               "streamfold.web.page.bundle", "streamfold.web.page.runtime", "streamfold.web.page.imports")

_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+\(?([\w, \t]*)|import[ \t]+([\w., \t]+))",
                          re.MULTILINE)

#: A module's name -> (its source text, whether it is a package), or None when it is not one of ours.
Sources = Callable[[str], "tuple[str, bool] | None"]


def imported_names(name: str, source: str, is_package: bool) -> set[str]:
    """Every module name `source` (module `name`) may import: each name an import statement gives, and
    each `from X import Y` as X.Y too (Y may be a submodule), relative imports resolved; not what it
    imports only when run as a script."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()

    def add(base: str, level: int, names: Iterable[str]) -> None:
        if level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        if base:
            found.add(base)
        found.update(f"{base}.{alias}" if base else alias for alias in names if alias != "*")

    try:
        tree = ast.parse(source)
    except SyntaxError:  # newer syntax than this Python's: the import lines are enough
        for match in _IMPORT_LINE.finditer(source):
            source_module, names, plain = match.groups()
            if plain is not None:
                found.update(part.split()[0] for part in plain.split(",") if part.strip())
            else:
                dots = len(source_module) - len(source_module.lstrip("."))
                add(source_module.lstrip("."), dots, [part.split()[0] for part in names.split(",") if part.strip()])
        return found
    for node in _walk_outside_main(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            add(node.module or "", node.level, [alias.name for alias in node.names])
    return found


def _walk_outside_main(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` but those under `if __name__ == "__main__":` (a module run as a script)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def closure(roots: Iterable[str], sources: Sources, known: Iterable[str], *,
            excluded: Iterable[str] = ()) -> set[str]:
    """The modules among `known` that `roots` import, directly or not, with the packages they sit in
    and every module of a `WHOLE` package; a module in `excluded` (or under it) is never followed."""
    known = set(known)
    skipped = tuple(excluded)

    def kept(module: str) -> bool:
        return module in known and not any(module == cut or module.startswith(cut + ".") for cut in skipped)

    whole = {module for module in known for package in WHOLE if module == package or module.startswith(package + ".")}
    todo = [module for module in [*roots, *whole] if kept(module)]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parent = module.rpartition(".")[0]
        if parent and kept(parent):
            todo.append(parent)
        text = sources(module)
        if text is None:
            continue
        for name in imported_names(module, *text):
            # `from package import name`: the name is a submodule or an attribute; the package stands either way.
            while name and not kept(name):
                name = name.rpartition(".")[0]
            if name:
                todo.append(name)
    return seen
