"""The suite's own pytest setup: `pytester` (the plugin's tests run an inner pytest), and streamfold's
plugin (the `streamfold_server` fixture) as the package's `pytest11` entry point registers it. An install
whose metadata predates that entry point (an older `pip install -e .`) gets it registered here instead,
under the same name, so that the suite runs either way; tests/sdk/test_pytest_plugin.py checks the entry
point itself."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("streamfold"):
        from streamfold.testing import plugin

        config.pluginmanager.register(plugin, "streamfold")
