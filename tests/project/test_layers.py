"""The layering, read from the source with `ast`: the command line and the web
page never import each other (not even inside a function or under
TYPE_CHECKING), the services layer imports neither front nor their
libraries, and the core imports none of them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import source_graph
from source_graph import FRONT_LIBRARIES, PACKAGE, files_of, imports, inside, violations


def core_files() -> list[Path]:
    fronts = ("cli", "web", "proxy", "capture", "replay", "services", "store", "testing", "fronts", "fleet")
    return [path for path in sorted(PACKAGE.rglob("*.py"))
            if path.relative_to(PACKAGE).parts[0] not in fronts
            and path.name not in ("launcher.py", "__main__.py")]


def test_what_the_servers_share_imports_neither_front() -> None:
    """`fronts` (a socket, a uvicorn thread, the Host check, the extras a command needs) is the page's, the
    proxy's and the replay server's, so none imports another."""
    assert violations(files_of("fronts"), ("streamfold.cli", "streamfold.web", "streamfold.proxy",
                                                  "streamfold.replay", "streamfold.services",
                                                  "streamfold.launcher")) == []


def test_the_capture_store_is_front_neutral() -> None:
    """The store sits on the services layer (it folds with it) and under both fronts and the recorders."""
    assert violations(files_of("store"), ("streamfold.cli", "streamfold.web", "streamfold.launcher",
                                          *FRONT_LIBRARIES)) == []


def test_the_testing_helpers_import_no_other_front() -> None:
    """`streamfold.testing` (assert_reply, the pytest plugin) is a front of its own: it stands on the services
    layer and the store, and a client's test suite that loads it gets neither the command line nor the page."""
    assert violations(files_of("testing"), ("streamfold.cli", "streamfold.web", "streamfold.proxy",
                                            "streamfold.launcher")) == []


def test_the_fleet_imports_neither_front_and_none_but_the_page_imports_it() -> None:
    """`streamfold.fleet` stands on the services layer and the store (it reads what they read, folds as
    `show` folds); its one click module is added to the program by the launcher. Only the page (`web
    --fleet`) and the launcher may import it."""
    assert violations(files_of("fleet"), ("streamfold.cli", "streamfold.web", "streamfold.proxy",
                                          "streamfold.replay", "streamfold.capture", "streamfold.testing",
                                          "streamfold.launcher")) == []
    assert violations(files_of("cli", "proxy", "replay", "capture", "services", "store", "testing", "fronts"),
                      ("streamfold.fleet",)) == []
    assert violations(core_files(), ("streamfold.fleet",)) == []


def test_the_command_line_does_not_import_the_web_page() -> None:
    assert violations(files_of("cli"), ("streamfold.web",)) == []


def test_the_replay_server_imports_no_other_front_and_none_imports_it() -> None:
    """`streamfold serve` sits on the core, the services and the store, like the proxy; the other fronts
    (and the core: the vendors' replay hooks live in the dialects) never import it. (`streamfold.testing`
    may: its pytest fixture is to start the replay server.)"""
    assert violations(files_of("replay"), ("streamfold.cli", "streamfold.web", "streamfold.proxy",
                                           "streamfold.capture", "streamfold.testing", "streamfold.launcher")) == []
    assert violations(files_of("cli", "web", "proxy", "capture", "services", "store"), ("streamfold.replay",)) == []
    assert violations(core_files(), ("streamfold.replay",)) == []


def test_the_recording_proxy_imports_neither_the_command_line_nor_the_page() -> None:
    assert violations(files_of("proxy"), ("streamfold.cli", "streamfold.web", "streamfold.launcher")) == []


def test_the_recorders_import_no_other_front() -> None:
    """`streamfold.capture` runs inside the user's program (the in-process recorder) or mitmdump's (the addon):
    the store only, not the command line, the page, the proxy, or their libraries. Its `command.py` is the
    one click command (`streamfold capture mitmproxy-addon`)."""
    recorders = [path for path in files_of("capture") if path.name != "command.py"]
    assert violations(recorders, ("streamfold.cli", "streamfold.web", "streamfold.proxy", "streamfold.launcher",
                                  *FRONT_LIBRARIES)) == []
    assert violations(files_of("capture"), ("streamfold.cli", "streamfold.web", "streamfold.proxy",
                                            "streamfold.launcher")) == []


def test_the_mitmproxy_addon_needs_nothing_mitmdump_lacks() -> None:
    """mitmdump runs the addon in its own interpreter: besides the store (and the dialect registry, for the
    stream paths the dialects' specs declare) it may import only the standard library (mitmproxy itself
    only by name, at run time), never click or the other fronts' libraries."""
    addon = PACKAGE / "capture" / "mitmproxy_addon.py"
    outside = sorted({module.split(".")[0] for _, module in imports(addon)} - set(sys.stdlib_module_names)
                     - {"__future__", "streamfold"})
    assert outside == []
    # The registry is the core's (standard library, msgspec optional), which the store loads anyway: it folds
    # each exchange's summary with services.load.
    assert [module for _, module in imports(addon) if inside(module, "streamfold") and not inside(
        module, "streamfold.store") and not inside(module, "streamfold.dialects.registry")] == []


def test_no_other_front_and_no_layer_below_imports_the_recorder() -> None:
    assert violations(files_of("web", "proxy", "testing", "services", "store"), ("streamfold.capture",)) == []


def test_the_web_page_does_not_import_the_command_line() -> None:
    """Nor the recording proxy: `web --db` reads the store the proxy writes, never the proxy itself."""
    assert violations(files_of("web"), ("streamfold.cli", "streamfold.launcher", "streamfold.proxy")) == []


def test_the_services_layer_is_front_neutral() -> None:
    assert violations(files_of("services"), ("streamfold.cli", "streamfold.web", "streamfold.launcher",
                                             *FRONT_LIBRARIES)) == []


def test_the_core_imports_no_front_and_no_service() -> None:
    assert violations(core_files(), ("streamfold.cli", "streamfold.web", "streamfold.services", "streamfold.launcher",
                                     "streamfold.capture", *FRONT_LIBRARIES)) == []


@pytest.mark.parametrize("source, expected", [
    ("from ..web import app", "streamfold.web.app"),
    ("from ..web.app import create_app", "streamfold.web.app"),
    ("from .. import web", "streamfold.web"),
    ("import streamfold.web.server", "streamfold.web.server"),
    ("def f():\n    from ..web.server import serve\n", "streamfold.web.server"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..web import command\n", "streamfold.web.command"),
    ("import importlib\nimportlib.import_module('streamfold.web.app')\n", "streamfold.web.app"),
])
def test_the_check_sees_every_kind_of_import(tmp_path: Path, source: str, expected: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "streamfold" / "cli" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    monkeypatch.setattr(source_graph, "SOURCE", tmp_path)
    assert any(module == expected for _, module in imports(fake))
    assert violations([fake], ("streamfold.web",)) != []


def test_no_module_imports_the_agent_protocols_sdks() -> None:
    """`mcp` and `ag-ui-protocol` are test dependencies (their models check the `mcp` and `ag-ui` dialects'
    captures and exports): nothing in the package, front or core, imports them."""
    assert violations(sorted(PACKAGE.rglob("*.py")), ("mcp", "mcp_types", "ag_ui")) == []
