"""Cloudflare Workers AI native (`/ai/run/{model}`, `stream: true`): the dialect (`fold`) and its spec."""

from __future__ import annotations

from ..spec import DialectSpec
from .fold import Cloudflare

__all__ = ["SPEC", "Cloudflare"]


SPEC = DialectSpec(
    "cloudflare", Cloudflare, title="Cloudflare Workers AI `/ai/run/`",
    keys=frozenset({"response"}), request_paths=("/ai/run/",))
