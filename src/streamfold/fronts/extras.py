"""The extras: what each command needs beyond the core, and what it says when that is not installed.

The core (`fold`, `Folder`, the dialects, the input readers, the store) needs nothing but the standard
library, with msgspec as its optional fast JSON decoder. The distribution `streamfold-core` installs that
alone; each front's libraries come with an extra of it (`pip install 'streamfold-core[web]'`), and the
distribution `streamfold` is the whole tool (`streamfold-core[all]`), so `pip install streamfold` gives
what it always gave. `tests/project/test_extras.py` holds this table equal to pyproject.toml's extras and
to what each front's modules import.
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "OUTSIDE_ALL", "advice", "missing", "require"]

#: extra -> (the module a front imports, the distribution that provides it), in pyproject.toml's order.
EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "cli": (("click", "click"), ("rich", "rich")),
    "web": (("starlette", "starlette"), ("uvicorn", "uvicorn"), ("h11", "h11")),
    "serve": (("uvicorn", "uvicorn"),),
    "record": (("httpx", "httpx"), ("uvicorn", "uvicorn")),
    "cassettes": (("yaml", "PyYAML"),),
    "fleet": (("pyarrow", "pyarrow"), ("duckdb", "duckdb")),
    "dask": (("distributed", "distributed"),),
    "ray": (("ray", "ray"),),
    "remote": (("fsspec", "fsspec"),),
}

#: The extras the whole tool (`all`, `pip install streamfold`) leaves out: a fleet on a cluster and inputs
#: behind URLs are for the few who run them, and Ray alone is hundreds of megabytes.
OUTSIDE_ALL = ("dask", "ray", "remote")


def missing(extra: str) -> list[str]:
    """The distributions of `extra` whose modules cannot be imported here."""
    return [distribution for module, distribution in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def advice(extra: str, what: str) -> str | None:
    """What to install for `what` (a command's name) when `extra` is not complete; None when it is."""
    absent = missing(extra)
    if not absent:
        return None
    names = absent[0] if len(absent) == 1 else f"{', '.join(absent[:-1])} and {absent[-1]}"
    return (f"{what} needs {names}, which {'is' if len(absent) == 1 else 'are'} not installed: "
            f"pip install 'streamfold-core[{extra}]' (or pip install streamfold, the whole tool)")


def require(extra: str, what: str) -> None:
    """Stop a command, with the line to install, when its extra is not complete (a usage error of the
    installation, exit status 1, instead of a traceback from deep inside the server)."""
    message = advice(extra, what)
    if message is not None:
        import click  # a command is running: the command line's own library is there

        raise click.ClickException(message)
