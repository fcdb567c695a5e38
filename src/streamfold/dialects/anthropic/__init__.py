"""Anthropic Messages: the dialect (`fold`), its fast shapes (`fast`), the native snapshot and
export (`native`) and the frames-table summaries (`summary`)."""

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import EVENT_TYPES, Anthropic
from .native import export_message, may_hold_opaque, opaque_dropped, opaque_values, read_message
from .replay import ANTHROPIC_REPLAY
from .summary import summarize

__all__ = ["SPEC", "Anthropic"]


SPEC = DialectSpec(
    "anthropic", Anthropic, replay=ANTHROPIC_REPLAY, title="Anthropic Messages (also through Vertex and Bedrock)",
    export=export_message, opaque_state=opaque_values, opaque_dropped=opaque_dropped, may_hold_opaque=may_hold_opaque,
    read_response=read_message, summary=summarize,
    discriminators={"type": EVENT_TYPES}, keyless=True,
    request_paths=("/messages",), fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "anthropic",
        ("event-type-missing", Severity.WARNING, "frames without their `event:` line (a proxy stripped them)"),
        ("event-type-mismatch", Severity.WARNING, "a frame's `event:` name differs from its data's `type`"),
        ("unknown-event-type", Severity.INFO, "an event type streamfold does not know; ignored, as the versioning "
         "policy asks"),
        ("content-block-missing-start", Severity.WARNING, "a delta or stop for a content block that never started"),
        ("delta-after-block-stop", Severity.WARNING, "a delta for a content block after its `content_block_stop`"),
        ("compaction-split", Severity.INFO, "a compaction summary split over several `compaction_delta` events "
         "(appended; the anthropic Python SDK keeps only the last)"),
        ("envelope", Severity.INFO, "the vendor's events came inside another protocol's envelope (Claude Code "
         "`stream-json` lines around Anthropic events): named, and folded as the vendor's")))
