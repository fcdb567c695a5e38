"""`streamfold record`: a recording reverse proxy. Every request is forwarded to
one `--target`, the response is passed back read by read as it arrives, and
each exchange is written into the capture store (`streamfold.store`).

A front like the web page: the core never imports it, and it imports neither
the command line nor the page (`streamfold.launcher` adds its command).
"""

from __future__ import annotations

__all__: list[str] = []
