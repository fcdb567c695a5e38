"""Every command example of README.md and docs/ is run, so none can drift from what streamfold does.

The rules (docs/about.md says them to the reader):
- a ```console block runs as one bash script in a temporary directory holding a copy of examples/ and of
  tests/inputs/ (the input formats' samples, which a clone has too): each
  line starting with `$ ` is a command (a trailing backslash continues it), the lines under it what it
  prints, stdout and stderr together. Each command must exit 0; its output must match, with whitespace
  collapsed (the terminal's width wraps lines), rules of any width equal, the temporary directory, ports
  and times normalised, and `...` standing for any text;
- a ```python block after `<!-- runnable: python -->` runs under Python (a ```text block right after it
  is what it prints), one after `<!-- runnable: pytest -->` under pytest;
- a shell block (sh, bash, shell, console) after `<!-- not-runnable: REASON -->` is not run, and counted;
  any other shell block fails the test, so nothing is skipped silently;
- every `examples/…` or `tests/…` path in a code block exists.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from streamfold.testing import transparent_faults

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELLS = {"console", "sh", "bash", "shell", "zsh"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.MULTILINE | re.DOTALL)
MARK = re.compile(r"<!-- (?P<kind>runnable|not-runnable): *(?P<what>.*?) *-->\s*$")
PATH = re.compile(r"(?<![\w./-])((?:examples|tests)/[\w./-]*\w)")

pytestmark = pytest.mark.once


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    mark: str | None  # "not-runnable: REASON", "runnable: python", "runnable: pytest" or None
    output: str | None  # the ```text block right after a runnable python block

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found: list[Block] = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        after = text[match.end():].lstrip("\n")
        output = FENCE.match(after) if after.startswith("```text") else None
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group("lang"), match.group("body"),
                           f"{mark['kind']}: {mark['what']}" if mark else None,
                           output.group("body") if output else None))
    return found


def once_each(found: list[Block]) -> list[Block]:
    """The blocks, a block whose text an earlier one has (README repeats a page's example) left out: it
    would run the very same commands again (the pytest example is 11 runs of the openai SDK)."""
    first: dict[tuple[str, str | None, str, str | None], Block] = {}
    for block in found:
        first.setdefault((block.lang, block.mark, block.body, block.output), block)
    return list(first.values())


ALL = [block for page in PAGES for block in blocks(page)]
CONSOLE = once_each([block for block in ALL if block.lang == "console" and not block.mark])
PYTHON = once_each([block for block in ALL if block.mark in ("runnable: python", "runnable: pytest")])
NOT_RUNNABLE = [block for block in ALL if block.mark and block.mark.startswith("not-runnable")]


def normalise(text: str, workdir: Path) -> str:
    text = text.replace(str(workdir), ".").replace(str(ROOT), "ROOT")
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?", "TIME", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(ms|µs|s)\b", "DURATION", text)
    text = re.sub(r"(127\.0\.0\.1|localhost):\d+", r"\1:PORT", text)
    text = re.sub(r"─{2,}", "──", text)
    return " ".join(text.split())


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected`, where each `...` of `expected` stands for any text."""
    parts = [part.strip() for part in expected.split("...")]
    if len(parts) == 1:
        return actual == expected
    if not actual.startswith(parts[0]):
        return False
    position = len(parts[0])
    for part in parts[1:-1]:
        found = actual.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return actual.endswith(parts[-1]) and len(actual) - len(parts[-1]) >= position


def commands(body: str) -> list[tuple[str, str]]:
    """The block's (command, expected output) pairs."""
    pairs: list[tuple[str, list[str]]] = []
    continuing = False
    for line in body.splitlines():
        if continuing:
            pairs[-1] = (pairs[-1][0] + "\n" + line, pairs[-1][1])
        elif line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
        else:
            raise AssertionError(f"a console block must begin with a `$ ` command line, not {line!r}")
        continuing = line.endswith("\\")
    return [(command, "\n".join(output)) for command, output in pairs]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tests" / "inputs", tmp_path / "tests" / "inputs")
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    program = bin_dir / "streamfold"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m streamfold "$@"\n')
    program.chmod(0o755)
    return tmp_path


def environment(workdir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("STREAMFOLD_", "PYTEST_", "COV_")) and key not in ("NO_COLOR", "FORCE_COLOR")}
    src = str(ROOT / "src")
    env.update(PATH=f"{workdir / '.bin'}{os.pathsep}{env.get('PATH', '')}", HOME=str(workdir), TERM="dumb",
               LC_ALL="C.UTF-8", COLUMNS="80",
               PYTHONPATH=os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")])))
    return env


def run(argv: list[str], workdir: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run in a session of its own, and end whatever it left running in the background."""
    process = subprocess.Popen(argv, cwd=workdir, env=environment(workdir), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(argv, process.returncode, output, None)


@pytest.mark.parametrize("block", CONSOLE, ids=lambda block: block.where)
def test_console_example(block: Block, workdir: Path) -> None:
    pairs = commands(block.body)
    script = "".join(f"{command}\nprintf '\\n@@streamfold-doc {index} %s@@\\n' $?\n"
                     for index, (command, _) in enumerate(pairs))
    done = run(["bash", "-c", script], workdir)
    pieces = re.split(r"\n?@@streamfold-doc (\d+) (\d+)@@\n", done.stdout)
    statuses = dict(zip(pieces[1::3], pieces[2::3]))
    outputs = pieces[0::3]
    for index, (command, expected) in enumerate(pairs):
        assert str(index) in statuses, f"{block.where}: `{command}` did not finish:\n{done.stdout}"
        output = outputs[index]
        assert statuses[str(index)] == "0", f"{block.where}: `{command}` exited {statuses[str(index)]}:\n{output}"
        want, got = normalise(expected, workdir), normalise(output, workdir)
        assert matches(want, got), f"{block.where}: `{command}` printed\n{output}\n--- the page shows\n{expected}"


@pytest.mark.parametrize("block", PYTHON, ids=lambda block: block.where)
def test_python_example(block: Block, workdir: Path) -> None:
    if block.mark == "runnable: pytest":
        pytest.importorskip("openai")
        (workdir / "test_doc_example.py").write_text(block.body)
        done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_doc_example.py"], workdir)
        assert done.returncode == 0, f"{block.where}:\n{done.stdout}"
        passed = re.search(r"^(\d+) passed in ", done.stdout, re.MULTILINE)
        assert passed, done.stdout
        if "@every_transparent_fault" in block.body:  # one run per transparent fault, none skipped
            assert int(passed.group(1)) == len(transparent_faults()), done.stdout
    else:
        (workdir / "doc_example.py").write_text(block.body)
        done = run([sys.executable, "doc_example.py"], workdir)
        assert done.returncode == 0, f"{block.where}:\n{done.stdout}"
        if block.output is not None:
            assert normalise(done.stdout, workdir) == normalise(block.output, workdir), done.stdout


def test_every_shell_block_is_run_or_marked_not_runnable() -> None:
    unmarked = [block.where for block in ALL if block.lang in SHELLS - {"console"} and not block.mark]
    assert not unmarked, ("shell blocks that are neither run (```console with `$ ` lines) nor marked "
                          f"<!-- not-runnable: REASON -->: {unmarked}")
    reasons = [block.mark for block in NOT_RUNNABLE]
    assert all(mark and mark.split(":", 1)[1].strip() for mark in reasons), "a not-runnable mark gives no reason"
    # What is run and what is not, in numbers: a change that turns examples off shows here.
    print(f"\ndoc examples: {len(CONSOLE)} console blocks run, {len(PYTHON)} Python blocks run, "
          f"{len(NOT_RUNNABLE)} blocks marked not runnable")
    assert len(CONSOLE) >= 30 and len(NOT_RUNNABLE) <= len(CONSOLE)


def test_the_readme_runs_an_example_of_each_job() -> None:
    readme = [block for block in ALL if block.page.name == "README.md"]
    run_text = "\n".join(block.body for block in readme if block in CONSOLE)
    for command in ("streamfold show", "streamfold record", "streamfold serve"):
        assert command in run_text, f"README runs no `{command}` example"


def test_paths_in_examples_exist() -> None:
    # A path under node_modules is made by `npm ci` (the JavaScript lint test runs it), not kept in the tree:
    # whether it exists depended on which test ran first.
    missing = [(block.where, path) for block in ALL for path in PATH.findall(block.body)
               if "node_modules/" not in path and not (ROOT / path).exists()]
    assert not missing, f"code blocks name files that do not exist: {missing}"
