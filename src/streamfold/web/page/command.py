"""`streamfold page build DIR`: the page as static files, runnable without a server (see `bundle.py`).
The `streamfold` program (`streamfold.launcher`) adds the `page` group to the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..._sizes import format_size
from .bundle import MANIFEST, BuildError, build_files, write_build
from .runtime import RuntimeUnavailableError, cache_dir, load_runtime

__all__ = ["page"]

EXIT_FAILED = 1


@click.group()
def page() -> None:
    """The page without a server: a folder of static files any host can serve.

    \b
    Examples:
      streamfold page build site
    """


@page.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--runtime", "runtime_dir", default=None, metavar="DIR", type=click.Path(file_okay=False, exists=True),
              help="Build offline from this directory: an unpacked npm pyodide package (npm pack pyodide@VERSION; its "
                   "files or its package/ folder) and msgspec's wheel for it. Without it, both are downloaded once "
                   "from the npm registry and PyPI into the cache and checked against their pinned hashes.")
def build(directory: Path, runtime_dir: str | None) -> None:
    """Write the page to DIR as static files: the page, its Web Worker, the Python runtime (Pyodide),
    msgspec's wheel and streamfold's core, all served from DIR's own origin.

    Any static host serves DIR (GitHub Pages, or locally: python -m http.server -d DIR).
    Streams opened in it never leave the browser tab. Two builds of the same streamfold write the
    same bytes.

    \b
    Examples:
      streamfold page build site
      streamfold page build site --runtime ~/pyodide-runtime
    """
    try:
        runtime = load_runtime(runtime_dir)
        manifest = write_build(directory, build_files(runtime))
    except (RuntimeUnavailableError, BuildError) as exc:
        click.echo(f"streamfold: {exc}", err=True)
        sys.exit(EXIT_FAILED)
    except OSError as exc:
        click.echo(f"streamfold: cannot write the page to {directory}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_FAILED)
    files = manifest["files"]
    assert isinstance(files, dict)
    size = sum((directory / path).stat().st_size for path in files)
    source = runtime_dir or f"{cache_dir()}"
    click.echo(f"wrote {len(files)} files ({format_size(size)}) to {directory} (runtime from {source}; "
               f"what is in it: {directory / MANIFEST}); serve it with: python -m http.server -d {directory}")
