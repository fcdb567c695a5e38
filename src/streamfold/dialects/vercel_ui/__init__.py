"""The Vercel AI SDK UI message stream: the dialect (`fold`), the chunk shapes it claims
(`shapes`) and the `UIMessage` export and frames-table summaries (`message`)."""

from .fold import VercelUI

__all__ = ["VercelUI"]
