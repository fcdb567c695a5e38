"""AWS Bedrock: `ConverseStream` and `InvokeModelWithResponseStream` (reference §4.7, B1, F10)."""

from ...findings import Severity
from ..spec import DialectSpec, vendor_codes
from .fold import CONVERSE_EVENTS, Bedrock
from .native import export_converse, opaque_values, read_converse

__all__ = ["SPEC", "Bedrock"]


SPEC = DialectSpec(
    "bedrock", Bedrock, title="AWS Bedrock `ConverseStream` and `InvokeModelWithResponseStream`",
    transports=("aws-eventstream",),
    export=export_converse, opaque_state=opaque_values, read_response=read_converse,
    keys=CONVERSE_EVENTS, request_paths=("/converse-stream", "/invoke-with-response-stream"),
    stream_paths=("/converse-stream", "/invoke-with-response-stream"), fast_path=f"{__name__}.fast",
    codes=vendor_codes(
        "bedrock",
        ("block-not-closed", Severity.INFO, "a content block that never got its `contentBlockStop`")))
