"""The vendors' own streaming accumulators, run on a capture's bytes exactly as their SDKs run
them, minus HTTP: what a correct client builds, for the tests that hold it to the reference."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")
from anthropic._streaming import Stream  # noqa: E402
from anthropic.lib.streaming import MessageStream  # noqa: E402
from anthropic.types import RawMessageStreamEvent  # noqa: E402


def anthropic_message(data: bytes) -> Any:
    """The `Message` that `client.messages.stream(...).get_final_message()` returns for `data`."""
    client = anthropic.Anthropic(api_key="sk-ant-test-no-network", base_url="http://127.0.0.1:9")
    response = httpx2.Response(200, content=data, request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages"))
    stream = MessageStream(Stream(cast_to=RawMessageStreamEvent, response=response, client=client),
                           output_format=anthropic.NOT_GIVEN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about shapes the SDK types do not know
        list(stream)
        return stream.get_final_message()
