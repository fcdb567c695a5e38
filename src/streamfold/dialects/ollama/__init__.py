"""Ollama native `/api/chat` and `/api/generate`: the dialect (`fold`), its fast shapes (`fast`), its
replay quirks (`replay`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import Ollama
from .replay import OLLAMA_REPLAY

__all__ = ["SPEC", "Ollama"]


SPEC = DialectSpec(
    "ollama", Ollama, replay=OLLAMA_REPLAY, title="Ollama native `/api/chat` and `/api/generate`",
    keys=frozenset({"done"}), request_paths=("/api/chat", "/api/generate"), fast_path=f"{__name__}.fast")
