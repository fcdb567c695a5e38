"""AWS Bedrock: `ConverseStream` and `InvokeModelWithResponseStream` (reference §4.7, B1, F10)."""

from .fold import Bedrock

__all__ = ["Bedrock"]
