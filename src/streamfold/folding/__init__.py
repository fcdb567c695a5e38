"""The fold: one stream's frames through decoding and its dialect into the merger, and the Result."""

from __future__ import annotations

from .folder import Folder, Phase
from .oneshot import fold

__all__ = ["Folder", "Phase", "fold"]
