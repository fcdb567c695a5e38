"""Recorders that write into the capture store from outside `streamfold record`: the mitmproxy addon
(`mitmproxy_addon.py`, run by mitmdump, which imports it by path) and its `streamfold capture` command."""

from __future__ import annotations

__all__: list[str] = []
