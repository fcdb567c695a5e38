"""Testing a streaming client against streamfold's reference: `assert_reply` holds
what the client built to the reference fold of what it was served.

    from streamfold.testing import assert_reply
    assert_reply(final_message, "capture.sse")
"""

from __future__ import annotations

from ._assert import ReplyMismatchError, assert_reply, reference

__all__ = ["ReplyMismatchError", "assert_reply", "reference"]
