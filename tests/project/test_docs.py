"""The docs site builds in strict mode (a broken link or anchor, a page missing from the nav, an API object
that does not resolve, a command or dialect without its page all fail the build), and what docs/hooks.py
fills from the code is on the built pages. README.md is not part of the site: its links are checked here."""

from __future__ import annotations

import doctest
import html
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamfold._codes import CODES
from streamfold.dialects import DIALECTS

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install -c requirements/test.txt '.[test]' brings it")
    target = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(target)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    # Measured at about 10 s on 2 busy cores; a build that slows past this is worth knowing about.
    assert time.monotonic() - started < 60, f"mkdocs build took {time.monotonic() - started:.0f} s"
    return target


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_the_findings_page_lists_every_registered_code(site: Path) -> None:
    text = page(site, "findings")
    missing = [code for code in CODES if f"<code>{code}</code>" not in text]
    assert not missing, f"codes missing from the built findings page: {missing}"


def test_the_json_contract_names_every_registered_dialect(site: Path) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", "", page(site, "json")))
    enum = re.search(r'"dialect": "(.*?)"', text)
    assert enum, "no dialect line in the built JSON contract"
    assert set(enum.group(1).split(" | ")) == set(DIALECTS) | {"unknown"}


def test_every_command_page_holds_its_help(site: Path) -> None:
    for command in ("show", "frames", "export", "tail", "blame", "check", "diff", "web", "record", "serve",
                    "captures", "capture", "completion"):
        assert f"Usage: streamfold {command} " in page(site, f"commands/{command}"), command
    assert "Usage: streamfold captures export " in page(site, "commands/captures")


def test_the_api_pages_render_the_docstrings(site: Path) -> None:
    api, testing = page(site, "api"), page(site, "testing")
    for name in ("streamfold.fold", "streamfold.Folder", "streamfold.Result", "streamfold.services.load"):
        assert f'id="{name}"' in api, name
    assert "Fold a whole capture at once" in api
    for name in ("assert_reply", "start_server", "StreamfoldServer", "every_transparent_fault"):
        assert f'id="streamfold.testing.{name}"' in testing, name


@pytest.mark.browser
def test_the_screenshot_script_makes_both_pictures(tmp_path: Path) -> None:
    if importlib.util.find_spec("playwright") is None or not Path("/usr/bin/chromium").exists():
        pytest.skip("docs/screenshots.py drives /usr/bin/chromium through playwright; one of them is missing")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "docs/screenshots.py", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "get_weather" in (tmp_path / "show.svg").read_text(encoding="utf-8")
    assert (tmp_path / "page.png").read_bytes().startswith(b"\x89PNG") and (tmp_path / "page.png").stat().st_size > 50_000


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [target for target in LINK.findall(readme) if "://" not in target]
    assert targets, "README links into the docs"
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_docstring_examples_the_api_page_shows_run() -> None:
    from streamfold.folding import folder

    failures, tried = doctest.testmod(folder)
    assert tried and not failures
