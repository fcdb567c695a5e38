"""A2A's hot payload shape as msgspec Structs: an A2A 0.3 `artifact-update` in its JSON-RPC
response, for `A2A.fold_fast_run` (an agent that streams an artifact sends one such chunk a token).

Declared whole, with unknown fields refused, so any other event, a 1.0 `StreamResponse`, an
artifact with a name, description or metadata, or an update with metadata fails validation and
goes to `fold`. The artifact's `parts` stay the JSON they came as (`msgspec.Raw`): the native
snapshot keeps each part as sent, with its members in their order, so `fold_fast_run` decodes them
with the core's decoder (which checks their UTF-8, as msgspec does not when it skips them). The
Structs only choose the fast way, never the result.

Importing this module raises ImportError without msgspec; the dialect then has no fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

__all__ = ["ArtifactChunk", "decode_artifact_chunk"]


class Artifact(msgspec.Struct, forbid_unknown_fields=True):
    artifactId: str  # noqa: N815 (A2A's name)
    parts: msgspec.Raw


class ArtifactUpdate(msgspec.Struct, forbid_unknown_fields=True):
    kind: Literal["artifact-update"]
    taskId: str  # noqa: N815
    artifact: Artifact
    contextId: str | None = None  # noqa: N815
    append: bool | None = None
    lastChunk: bool | None = None  # noqa: N815


class ArtifactChunk(msgspec.Struct, forbid_unknown_fields=True):
    """The JSON-RPC response that carries an artifact update."""

    jsonrpc: Literal["2.0"]
    result: ArtifactUpdate
    id: int | str | None = None


#: Bytes to an `ArtifactChunk`; raises ValueError (msgspec's ValidationError) for any other payload.
decode_artifact_chunk: Callable[[bytes], ArtifactChunk] = msgspec.json.Decoder(ArtifactChunk).decode
