"""The Vercel AI SDK UI message stream: the dialect (`fold`), the chunk shapes it claims
(`shapes`) and the `UIMessage` export and frames-table summaries (`message`)."""

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import VercelUI
from .message import export_message, read_message, summarize_chunk
from .replay import VERCEL_UI_REPLAY
from .shapes import DATA_PREFIX, SHAPES

__all__ = ["SPEC", "VercelUI"]


SPEC = DialectSpec(
    "vercel-ui", VercelUI, title="Vercel AI SDK UI message stream (ai 5 to 7)",
    export=export_message, read_response=read_message, summary=summarize_chunk, replay=VERCEL_UI_REPLAY,
    discriminators={"type": frozenset({*SHAPES, DATA_PREFIX + "*"})}, fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "vercel-ui",
        ("part-missing-start", Severity.WARNING, "a delta or tool chunk for a part no start chunk opened (the ai "
         "SDK's reader throws there); folded"),
        ("tool-error", Severity.WARNING, "a tool call's input was rejected or the tool failed (`tool-input-error`, "
         "`tool-output-error`)")))
