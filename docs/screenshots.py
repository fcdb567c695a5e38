"""Make the README's two pictures from the real tools, so they show what a fresh clone shows:

    python docs/screenshots.py            # writes docs/img/page.png and docs/img/show.svg
    python docs/screenshots.py OUTDIR     # elsewhere (tests/project/test_docs.py does)

- docs/img/show.svg: `streamfold --color always show examples/openai-tool-calls.sse` run as a
  subprocess at 80 columns, its ANSI output rendered by rich's own SVG export;
- docs/img/page.png: `streamfold web examples/openai-tool-calls.sse` started as a subprocess, the page
  opened in Debian's Chromium (/usr/bin/chromium, driven by Playwright as tests/fronts/conftest.py does;
  never `playwright install`), a frame of the tool calls selected, the window photographed.

Run it from the repository root with streamfold importable (an installed checkout, or PYTHONPATH=src).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
SAMPLE = "examples/openai-tool-calls.sse"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def streamfold(*args: str) -> list[str]:
    return [sys.executable, "-m", "streamfold", *args]


def show_svg(out: Path) -> Path:
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm-256color"}
    ansi = subprocess.run(streamfold("--color", "always", "show", SAMPLE), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True).stdout
    with open(os.devnull, "w") as nowhere:
        console = Console(record=True, width=80, force_terminal=True, color_system="truecolor", file=nowhere)
        console.print(Text.from_ansi(ansi.rstrip("\n")))
    target = out / "show.svg"
    console.save_svg(str(target), title=f"streamfold show {SAMPLE}")
    return target


def page_png(out: Path) -> Path:
    from playwright.sync_api import sync_playwright

    server = subprocess.Popen(streamfold("web", SAMPLE), cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()  # "streamfold web: http://127.0.0.1:PORT/  (Ctrl+C to stop)"
        url = first.split()[2]
        target = out / "page.png"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 820})
            page.goto(url)
            page.get_by_text("get_weather").first.wait_for()
            page.keyboard.press("j")  # select a frame, so the four panes show their links
            page.wait_for_timeout(300)
            page.screenshot(path=str(target))
            browser.close()
        return target
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    out.mkdir(exist_ok=True)
    for made in (show_svg(out), page_png(out)):
        print(f"{made}: {made.stat().st_size} bytes")
