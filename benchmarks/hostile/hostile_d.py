"""Hostile inputs of the fronts (issue 20, part 3, group D): compressed bodies that inflate far past
their size. Each case's size is how many MiB its body inflates to; the input itself is about a
thousandth of that (deflate's best ratio), so "peak/input" is huge by design: what matters is that the
peak stops growing at the inflate limit (256 MiB by default) instead of following the bomb.

  d-har-gzip    a HAR whose base64 body is gzip: a short OpenAI reply, then one comment line of
                spaces, then the reply's end. Read and folded as `streamfold show` does (`services.load`).
  d-store-gzip  the same body stored as a `Content-Encoding: gzip` exchange in a real capture store
                file: read back and folded as `streamfold show DB#1` does.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import tempfile
import zlib

_MIB = 1 << 20
_HEAD = (b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
         b'"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}\n\n: ')
_TAIL = (b'\n\ndata: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
         b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def gzip_bomb(mib: int) -> bytes:
    """A gzip body of `mib` MiB of spaces between `_HEAD` and `_TAIL`, built from one compressed MiB
    repeated: after a full flush deflate starts afresh, so each identical MiB compresses to identical bytes
    (compressing the whole would take seconds a MiB on a busy machine)."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = b" " * _MIB
    head = raw.compress(_HEAD) + raw.flush(zlib.Z_FULL_FLUSH)
    repeated = raw.compress(block) + raw.flush(zlib.Z_FULL_FLUSH)
    again = raw.compress(block) + raw.flush(zlib.Z_FULL_FLUSH)
    assert again == repeated
    tail = raw.compress(_TAIL) + raw.flush(zlib.Z_FINISH)
    crc = zlib.crc32(_HEAD)
    for _ in range(mib):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(_TAIL, crc)
    size = len(_HEAD) + mib * _MIB + len(_TAIL)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + head + repeated * mib + tail + struct.pack("<II", crc, size & 0xFFFFFFFF)


def har_gzip(mib: int) -> bytes:
    entry = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": []},
             "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                          "content": {"mimeType": "text/event-stream", "encoding": "base64",
                                      "text": base64.b64encode(gzip_bomb(mib)).decode("ascii")}}}
    return json.dumps({"log": {"version": "1.2", "entries": [entry]}}).encode()


def store_gzip(mib: int) -> bytes:
    """The bytes of a capture store holding one exchange whose body is `gzip_bomb(mib)`, sent as 64 KiB reads."""
    from streamfold.store import CaptureStore

    body = gzip_bomb(mib)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bomb.sqlite")
        with CaptureStore.open(path, summarize=False) as store:
            exchange = store.begin("POST", "https://api.openai.com/v1/chat/completions")
            exchange.response(200, [("content-type", "text/event-stream"), ("content-encoding", "gzip")])
            for at in range(0, len(body), 65536):
                exchange.read(body[at:at + 65536])
            exchange.end("complete")
        with open(path, "rb") as handle:
            return handle.read()


_LOAD = "import streamfold.services\nresult = streamfold.services.load(data).result"
_STORED = ("from streamfold.services.load import fold_capture\n"
           "from streamfold.store import read_stored\n"
           "result = fold_capture(read_stored(path, 1)).result")

CASES = {
    "d-har-gzip": (har_gzip, "MiB", {"small": [64, 256, 1024], "default": [64, 256, 1024],
                                     "large": [256, 1024, 4096]}, _LOAD),
    "d-store-gzip": (store_gzip, "MiB", {"small": [64, 256, 1024], "default": [64, 256, 1024],
                                         "large": [256, 1024, 4096]}, _STORED),
}
