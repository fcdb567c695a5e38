"""`streamfold page build` refusing: a runtime that cannot be had is said in one line (exit 1), the
command run as a person runs it; a folder that is not the build's own is never written over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamfold.web.page.bundle import MANIFEST, BuildError, write_build
from streamfold.web.page.runtime import PYODIDE


def page_build(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    # A proxy on a closed port: every download fails as it does off the network, and the cache is empty.
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "HTTPS_PROXY": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, "-m", "streamfold", "page", "build", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


def test_a_runtime_that_cannot_be_fetched_is_one_line(tmp_path: Path) -> None:
    done = page_build(str(tmp_path / "site"), cache=tmp_path / "cache")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"streamfold: cannot fetch {PYODIDE.name} from {PYODIDE.url} (")
    assert "--runtime DIR" in done.stderr
    assert not (tmp_path / "site").exists()


def test_a_runtime_directory_without_the_runtime_is_one_line(tmp_path: Path) -> None:
    given = tmp_path / "runtime"
    given.mkdir()
    done = page_build(str(tmp_path / "site"), "--runtime", str(given), cache=tmp_path / "cache")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"--runtime {given}: no pyodide.mjs in it" in done.stderr and "npm pack pyodide@" in done.stderr


def test_a_file_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    given = tmp_path / "runtime"
    given.mkdir()
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json",
                 "msgspec-0.23.0-cp314-cp314-pyemscripten_2026_0_wasm32.whl"):
        (given / name).write_bytes(b"not the runtime")
    done = page_build(str(tmp_path / "site"), "--runtime", str(given), cache=tmp_path / "cache")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "is not the pinned file (sha256 " in done.stderr


def test_a_folder_holding_other_files_is_not_written_over(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match=r"holds no earlier page build .*: give an empty or a new folder"):
        write_build(site, {"index.html": b"page"})
    assert sorted(path.name for path in site.iterdir()) == ["notes.txt"]


def test_an_earlier_build_is_replaced_and_a_stray_file_beside_it_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_build(site, {"index.html": b"one", "runtime/old.zip": b"old"})
    write_build(site, {"index.html": b"two", "static/page.js": b"js"})
    assert sorted(str(path.relative_to(site)) for path in site.rglob("*") if path.is_file()) == sorted([
        MANIFEST, "index.html", "static/page.js"])
    (site / "mine.txt").write_text("mine")
    with pytest.raises(BuildError, match=r"files the last page build did not write \(mine.txt\)"):
        write_build(site, {"index.html": b"three"})
    assert (site / "index.html").read_bytes() == b"two"


def test_the_bytecode_the_worker_keeps_is_every_module_unchecked(tmp_path: Path) -> None:
    import io
    import shutil
    import zipfile

    import streamfold
    from streamfold.web.page.bytecode import compiled

    shutil.copytree(Path(streamfold.__file__).parent, tmp_path / "streamfold",
                    ignore=shutil.ignore_patterns("__pycache__"))
    sources = sorted(tmp_path.rglob("*.py"))
    with zipfile.ZipFile(io.BytesIO(compiled(str(tmp_path)))) as archive:
        names = archive.namelist()
        # PEP 552: flags 0b01, a hash-based .pyc never checked against its source.
        assert all(int.from_bytes(archive.read(name)[4:8], "little") == 0b01 for name in names)
    assert len(names) == len(sources) and all("/__pycache__/" in name for name in names)
