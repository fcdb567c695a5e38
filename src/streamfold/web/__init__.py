"""The local web page: `streamfold web [FILE]` serves it on 127.0.0.1.

The page (plain HTML, CSS and JavaScript in `static/`, no build step) shows
the pipeline stage by stage: raw bytes, events, JSON per frame, the merged
result. Every computation is the Python core, reached through the local
server (`app.py`); nothing is sent anywhere else.
"""

from __future__ import annotations

from .app import DEFAULT_MAX_SIZE, create_app
from .server import serve, start_in_thread

__all__ = ["DEFAULT_MAX_SIZE", "create_app", "serve", "start_in_thread"]
