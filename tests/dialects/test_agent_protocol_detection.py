"""Detection of the agent protocols (vercel-ui, vercel-data, a2a, claude-stream-json), payload by
payload: every payload of their captures is claimed by its own dialect and by no other, and no
payload of any other capture is claimed by one of them. (Whole captures are held to their folder's
dialect by tests/folding/test_every_layer.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from streamfold import PayloadKind, fold
from streamfold.dialects import DIALECTS, SPECS

CAPTURES = Path(__file__).resolve().parents[1] / "captures"
OURS = {"vercel-ui": "vercel-ui", "vercel-data": "vercel-data", "a2a": "a2a", "claude-stream-json": "claude-stream-json"}


def _payloads(path: Path) -> list[object]:
    result = fold(path.read_bytes())
    return [result.payload(frame.index).value for frame in result.frames
            if result.frame_kinds[frame.index] is PayloadKind.JSON]


@pytest.mark.parametrize("folder", sorted(OURS))
def test_each_payload_is_claimed_by_its_own_dialect_only(folder: str) -> None:
    own = DIALECTS[OURS[folder]]
    for path in sorted((CAPTURES / folder).iterdir()):
        if path.name.endswith((".json", ".md")):
            continue
        for value in _payloads(path):
            claimers = [spec.name for spec in SPECS if spec.claims(value)]
            if isinstance(value, dict) and "error" in value and "jsonrpc" in value:
                # A JSON-RPC error is any JSON-RPC protocol's (MCP claims it): the A2A stream is known by then.
                assert folder == "a2a" and own.name not in claimers, (path.name, claimers)
                continue
            assert claimers == [own.name], (path.name, value, claimers)


def test_no_other_payload_is_claimed_by_an_agent_protocol() -> None:
    ours = [DIALECTS[name] for name in OURS.values()]
    for path in sorted(CAPTURES.rglob("*")):
        if not path.is_file() or path.parent.name in OURS or path.name.endswith((".json", ".md")):
            continue
        for value in _payloads(path):
            assert not [d.name for d in ours if d.claims(value)], (path, value)
