"""The suite's own pytest setup: `pytester` (the plugin's tests run an inner pytest), and streamfold's
plugin (the `streamfold_server` fixture) as the package's `pytest11` entry point registers it. An install
whose metadata predates that entry point (an older `pip install -e .`) gets it registered here instead,
under the same name, so that the suite runs either way; tests/sdk/test_pytest_plugin.py checks the entry
point itself.

Hypothesis draws the same inputs on every run (derandomized, no example database kept between runs), so
the suite cannot go red by chance: a red run is a change's doing. Timing-based checks are off (no
deadline, no too-slow health check), since a loaded CI machine is not a slow fold. New inputs come only
through the opt-in long mode, `STREAMFOLD_FUZZ_LONG=1` (tests/mutations.py says how to run it).
"""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

LONG_FUZZ = bool(os.environ.get("STREAMFOLD_FUZZ_LONG"))
settings.register_profile("streamfold", derandomize=not LONG_FUZZ, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("streamfold")

pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("streamfold"):
        from streamfold.testing import plugin

        config.pluginmanager.register(plugin, "streamfold")


#: Tests whose outcome does not depend on the Python they run on: lint, types, what reads the source as text,
#: and the command line's wording asked of one `streamfold` process a case. CI runs them on one Python (its
#: time goes to what can differ between them).
_ONCE = ("tests/project/test_lint.py", "tests/project/test_typing.py", "tests/project/test_javascript_lint.py",
         "tests/project/test_layers.py", "tests/project/test_architecture.py", "tests/fronts/test_not_streams.py",
         "tests/fronts/test_cli_usage.py")
#: The fronts' tests that run real servers, proxies and `streamfold` processes talking over sockets and
#: pipes, mostly waiting on them: CI runs them on one Python, where the rest of the fronts' tests run on all.
_SERVERS = ("tests/dialects/test_vercel_node.py", *(f"tests/fronts/test_{name}.py" for name in (
    "capture_inproc", "cassettes", "clocks_and_stops", "mitmproxy_addon", "proxy", "proxy_concurrency", "proxy_console", "replay_server",
    "tail", "tail_inputs", "tail_live", "web_server_limits", "web_store")))


#: The share of each Hypothesis test's declared examples the suite draws: half by default (the suite's time
#: on two cores is CI's ten minutes; `STREAMFOLD_HYPOTHESIS_SHARE=1` draws them all, the long mode new ones),
#: a tenth on CI's other Pythons (what differs between Pythons shows on any input, not on the 150th).
_SHARE = float(os.environ.get("STREAMFOLD_HYPOTHESIS_SHARE", "1" if LONG_FUZZ else "0.5"))


def _fewer_examples(item: pytest.Item) -> None:
    test = getattr(item, "obj", None)
    test = getattr(test, "__func__", test)  # a method's function holds the settings
    chosen = getattr(test, "_hypothesis_internal_use_settings", None)
    if isinstance(chosen, settings):
        test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
            chosen, max_examples=max(10, int(chosen.max_examples * _SHARE)))


#: The tests CI's two other Pythons run (.ci/run): three in ten, none twice, picked in a cycle within each module
#: (`side_one` for 3.10, the slower interpreter, one in ten; `side_two` for 3.13, two in ten; the rest run on
#: 3.11 alone), so that every module's code meets both and what differs between Pythons shows. All of them on
#: both, then three in five of them, took CI past its ten minutes on a machine half as fast.
_SIDE_CYCLE = ("side_one", "side_two", None, "side_two", None, None, None, None, None, None)


def _where(item: pytest.Item, root: pathlib.Path) -> str:
    return item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks what CI runs on one Python only (.ci/run): `browser` (drives Chromium), `sdk` (the vendors'
    SDKs as clients, tests/sdk), `server` (real servers and processes) and `once` (lint and types); and
    `side_one` and `side_two`, three in ten of the rest, each run by one of the other two Pythons (`_SIDE_CYCLE`)."""
    root = config.rootpath
    for item in items:
        where = _where(item, root)
        if "browser" in getattr(item, "fixturenames", ()) or "chromium" in where or "browser" in where:
            item.add_marker(pytest.mark.browser)
        if where.startswith("tests/sdk/"):
            item.add_marker(pytest.mark.sdk)
        if where in _ONCE:
            item.add_marker(pytest.mark.once)
        if where in _SERVERS:
            item.add_marker(pytest.mark.server)
        if _SHARE != 1:
            _fewer_examples(item)
    per_module: dict[str, int] = {}
    for item in items:
        if any(item.get_closest_marker(name) for name in ("browser", "sdk", "server", "once")):
            continue
        where = _where(item, root)
        position = per_module[where] = per_module.get(where, -1) + 1
        side = _SIDE_CYCLE[position % len(_SIDE_CYCLE)]
        if side is not None:
            item.add_marker(getattr(pytest.mark, side))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker more than the CPUs this process may use. A third of the suite's time is spent waiting
    on browsers, servers and `streamfold` processes, when a worker leaves its CPU idle."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cpus + 1
