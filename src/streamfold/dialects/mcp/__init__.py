"""MCP Streamable HTTP: JSON-RPC 2.0 messages in SSE (see `fold`)."""

from __future__ import annotations

from .fold import MCP

__all__ = ["MCP"]
