"""The agent protocols' dialects (`mcp`, `ag-ui`) steal no other dialect's stream: neither claims any
payload of any other capture, and every capture still folds to its folder's dialect
(tests/folding/test_every_layer.py holds the second half for all captures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamfold import fold
from streamfold.dialects.ag_ui import AGUI
from streamfold.dialects.mcp import MCP

ROOT = Path(__file__).resolve().parents[2]
OTHERS = sorted([*(path for path in (ROOT / "tests" / "captures").rglob("*")
                   if path.is_file() and not path.name.endswith((".json", ".md"))
                   and path.parent.name not in ("mcp", "ag-ui")),
                 *(ROOT / "examples").glob("*.sse")])


def payloads(path: Path) -> list[Any]:
    folded = fold(path.read_bytes())
    return [folded.payload(index).value for index, kind in enumerate(folded.frame_kinds) if kind.value == "json"]


@pytest.mark.parametrize("path", OTHERS, ids=lambda path: str(path.relative_to(ROOT)))
def test_neither_agent_protocol_claims_another_dialects_payload(path: Path) -> None:
    for value in payloads(path):
        if path.parent.name == "a2a" and isinstance(value, dict) and "error" in value:
            continue  # a JSON-RPC error response is any JSON-RPC protocol's; the A2A stream is known by then
        assert not MCP.claims(value) and not AGUI.claims(value), value
