"""The fold: one stream's frames through decoding and its dialect into the merger, and the Result."""

from __future__ import annotations

from ._journal import Events
from .folder import Folder, Phase
from .oneshot import fold

__all__ = ["Events", "Folder", "Phase", "fold"]
