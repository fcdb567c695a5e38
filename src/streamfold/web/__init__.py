"""The local web page: `streamfold web [FILE]` serves it on 127.0.0.1.

The page (plain HTML, CSS and JavaScript modules in `static/`, no build step) shows
the pipeline stage by stage: raw bytes, events, JSON per frame, the merged
result. Every computation is the Python core: the page's operations
(`api.py`, plain functions over the services layer) served by the local
server (`app.py`); nothing is sent anywhere else.

The names below are imported on first use: the `streamfold` program loads
this package for its `web` command (`command.py`), and the other commands
should not pay for starlette and uvicorn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import DEFAULT_MAX_SIZE
    from .app import create_app
    from .server import serve, start_in_thread

__all__ = ["DEFAULT_MAX_SIZE", "create_app", "serve", "start_in_thread"]

_FROM = {"DEFAULT_MAX_SIZE": ".api", "create_app": ".app", "serve": ".server", "start_in_thread": ".server"}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
