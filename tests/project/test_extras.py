"""The core installs alone: `import streamfold` and `fold()` (and the input readers and the store) work in an
interpreter that has none of the fronts' libraries; each front's libraries are declared once, as an extra of
`streamfold-core`, equal to what its modules import and to `streamfold.fronts.extras`, which the commands read
to say what to install; the distribution `streamfold` is the whole tool."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from source_graph import PACKAGE, SOURCE, files_of, imports
from streamfold.fronts.extras import EXTRAS, OUTSIDE_ALL

ROOT = SOURCE.parent
FRONT_MODULES = {module for pairs in EXTRAS.values() for module, _ in pairs}
#: Imported by the package, on purpose in no extra: the user's own libraries, loaded only when the user asks
#: for what needs them (each module says so where it imports them).
USERS_OWN = {
    "httpx2": "the in-process recorder's client for the SDKs that use it (streamfold.capture.http_client)",
    "pytest": "the pytest plugin, loaded by the user's pytest",
    "brotli": "an optional decoder of brotli bodies (services/_inflate.py says when it is missing)",
}
#: front package -> the extras whose modules it may import.
FRONTS = {"cli": ("cli",), "web": ("cli", "web"), "replay": ("cli", "serve"), "proxy": ("cli", "record"),
          "capture": ("cli", "record"), "testing": ("serve",), "services": ("cassettes",), "store": (),
          "fronts": ("cli", "serve"), "fleet": ("cli", "fleet", "dask", "ray", "remote")}


def _third_party(paths: list[Path]) -> set[str]:
    return {module.split(".")[0] for path in paths for _, module in imports(path)} \
        - set(sys.stdlib_module_names) - {"__future__", "streamfold"}


def _tables() -> tuple[dict[str, object], dict[str, object]]:
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs tomllib (Python 3.11+)")
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())
    whole = tomllib.loads((ROOT / "packaging" / "streamfold" / "pyproject.toml").read_text())
    return core, whole


def _names(requirements: list[str]) -> list[str]:
    return [re.split(r"[\s<>=!;\[]", requirement, maxsplit=1)[0] for requirement in requirements]


def test_the_core_imports_nothing_but_msgspec_and_the_standard_library() -> None:
    core = [path for path in sorted(PACKAGE.rglob("*.py"))
            if path.relative_to(PACKAGE).parts[0] not in FRONTS
            and path.name not in ("launcher.py", "__main__.py")]
    assert len(core) > 50
    assert _third_party(core) == {"msgspec"}


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_each_front_imports_only_what_its_extras_declare(front: str) -> None:
    allowed = {module for extra in FRONTS[front] for module, _ in EXTRAS[extra]} | {"msgspec"} | set(USERS_OWN)
    found = _third_party(files_of(front))
    assert found <= allowed, f"{front} imports {sorted(found - allowed)}, in none of its extras {FRONTS[front]}"


def test_every_extra_module_is_imported_by_some_front() -> None:
    found = _third_party([path for front in FRONTS for path in files_of(front)])
    assert found >= FRONT_MODULES


def test_pyproject_declares_the_extras_the_commands_name() -> None:
    core, _ = _tables()
    project = core["project"]
    assert project["name"] == "streamfold-core"
    assert _names(project["dependencies"]) == ["msgspec"]
    extras = project["optional-dependencies"]
    for extra, pairs in EXTRAS.items():
        # A requirement for some Pythons only is a library's own helper there (pytz for DuckDB 1.x), not a
        # module the command imports.
        declared = [name for name in _names([item for item in extras[extra] if ";" not in item])
                    if name != "streamfold-core"]
        assert declared == [distribution for _, distribution in pairs], extra
    # A front's extra brings the command line its command runs in.
    for extra in ("web", "serve", "record"):
        assert "streamfold-core[cli]" in extras[extra]
    whole_tool = [extra for extra in EXTRAS if extra not in OUTSIDE_ALL]
    assert extras["all"] == [f"streamfold-core[{','.join(whole_tool)}]"]
    assert "streamfold-core[all]" in extras["test"]
    assert "streamfold-core[remote]" in extras["test"]
    assert "streamfold-core[dask,ray]; python_version == '3.11'" in extras["test"]


def test_the_distribution_streamfold_is_the_whole_tool_at_the_core_s_version() -> None:
    core, whole = _tables()
    assert whole["project"]["name"] == "streamfold"
    assert whole["project"]["version"] == core["project"]["version"]
    assert whole["project"]["dependencies"] == [f"streamfold-core[all]=={core['project']['version']}"]
    assert whole["tool"]["setuptools"]["packages"] == []


_CORE_RUN = """
import json, sys
import streamfold
from streamfold.services import load
from streamfold.store import CaptureStore
out = {}
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    out[path] = streamfold.fold(data).to_dict() if path.endswith(".sse") else load(data).result.to_dict()
store = CaptureStore.open(sys.argv[1])
store.close()
fronts = ("click", "rich", "starlette", "uvicorn", "httpx", "yaml")
print(json.dumps({"results": out, "fast": streamfold.FAST_DECODER,
                  "loaded": sorted(name for name in sys.modules if name.split(".")[0] in fronts)}))
"""


def _bare_python(tmp_path: Path) -> Path:
    """An interpreter with the standard library alone: a virtual environment without pip, or anything else."""
    where = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(where)
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.mark.parametrize("with_msgspec", [False, True], ids=["standard-library-only", "with-msgspec"])
def test_the_core_folds_in_an_interpreter_without_the_fronts_libraries(tmp_path: Path, with_msgspec: bool) -> None:
    python = _bare_python(tmp_path)
    path = [str(SOURCE)]
    if with_msgspec:
        msgspec = pytest.importorskip("msgspec")
        shutil.copytree(Path(msgspec.__file__).parent, tmp_path / "site" / "msgspec")
        path.append(str(tmp_path / "site"))
    inputs = [*sorted(map(str, (ROOT / "examples").glob("*.sse"))), str(ROOT / "tests" / "inputs" / "chrome-export.har"),
              str(ROOT / "tests" / "inputs" / "curl-v.txt")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONNOUSERSITE": "1"}
    run = subprocess.run([str(python), "-c", _CORE_RUN, str(tmp_path / "store.sqlite"), *inputs],
                         capture_output=True, text=True, env=environment, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert found["loaded"] == []
    assert found["fast"] == ("msgspec" if with_msgspec else "json")
    import streamfold
    from streamfold.services import load

    for name, result in found["results"].items():
        data = Path(name).read_bytes()
        expected = streamfold.fold(data) if name.endswith(".sse") else load(data).result
        assert result == json.loads(json.dumps(expected.to_dict())), name
    assert (tmp_path / "store.sqlite").exists()


def test_the_command_line_without_its_libraries_says_what_to_install(tmp_path: Path) -> None:
    python = _bare_python(tmp_path)
    run = subprocess.run([str(python), "-m", "streamfold", "show", str(ROOT / "examples" / "openai-broken.sse")],
                         capture_output=True, text=True, timeout=60, check=False,
                         env={**os.environ, "PYTHONPATH": str(SOURCE), "PYTHONNOUSERSITE": "1"})
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.strip() == ("streamfold: streamfold's command line needs click and rich, which are not "
                                  "installed: pip install 'streamfold-core[cli]' (or pip install streamfold, "
                                  "the whole tool)")


@pytest.mark.parametrize("command, extra, absent", [
    (["serve", "examples/openai-broken.sse"], "serve", "uvicorn, which is"),
    (["web", "examples/openai-broken.sse"], "web", "starlette, uvicorn and h11, which are"),
    (["record", "--target", "http://127.0.0.1:9"], "record", "httpx and uvicorn, which are"),
])
def test_a_command_without_its_extra_says_what_to_install(tmp_path: Path, command: list[str], extra: str,
                                                         absent: str) -> None:
    """The command line's libraries alone (click and rich, copied beside the source): `show` works, and a
    server's command stops at once with the line to install, not a traceback from inside the server."""
    python = _bare_python(tmp_path)
    site = tmp_path / "site"
    for name in ("click", "rich", "pygments", "markdown_it", "mdurl", "msgspec"):
        module = pytest.importorskip(name)
        shutil.copytree(Path(module.__file__).parent, site / name)
    if sys.version_info < (3, 11):
        shutil.copy(pytest.importorskip("typing_extensions").__file__, site)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), str(site)]), "PYTHONNOUSERSITE": "1"}
    shown = subprocess.run([str(python), "-m", "streamfold", "show", "-q", "examples/openai-broken.sse"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60, check=False, env=environment)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout
    run = subprocess.run([str(python), "-m", "streamfold", *command], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=False, env=environment)
    assert run.returncode == 1, run.stderr
    assert run.stderr.strip() == (f"Error: streamfold {command[0]} needs {absent} not installed: pip install "
                                  f"'streamfold-core[{extra}]' (or pip install streamfold, the whole tool)")
