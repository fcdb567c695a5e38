"""What a client of `streamfold serve` sees at the level of HTTP chunks (each send of the server is one
chunk, whatever TCP does to them): at `--speed max` the writes nothing separates go out together, and every
boundary a fault puts (chunk, split-utf8, stall) and every recorded delay still splits the body exactly where
the plan says. Read with h11 over a plain socket, which tells where each chunk starts."""

from __future__ import annotations

import itertools
import re
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import h11
import pytest

from replay_helpers import CAPTURES, recording
from store_helpers import record
from streamfold.replay import ReplayServer, Write, parse_fault
from streamfold.replay.plan import joined
from streamfold.replay.server import start_in_thread
from streamfold.store import CaptureStore

CHINESE = CAPTURES / "openai" / "u1-moonshot-usage-in-choice.sse"
_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def chunks_served(source: Path | str, *specs: str, speed: str | float = "max") -> tuple[list[bytes], list[float]]:
    """The body of one request to a server of `source` with `specs`, as the HTTP chunks it came in, and
    when the first byte of each arrived (seconds after the request was sent)."""
    app = ReplayServer([recording(source)], [parse_fault(spec) for spec in specs], speed=speed, seed=5)
    with start_in_thread(app) as running:
        address = urlsplit(running.url)
        connection = h11.Connection(h11.CLIENT)
        chunks: list[bytearray] = []
        arrivals: list[float] = []
        with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
            # Before the request is sent: the server cannot start anything earlier (taken after, a pause of
            # this thread between the two made a 50 ms stall arrive 49 ms "after the request").
            sent = time.monotonic()
            sock.sendall(connection.send(h11.Request(method="GET", target="/v1/chat/completions",
                                                     headers=[("host", address.netloc)])))
            sock.sendall(connection.send(h11.EndOfMessage()))
            while not isinstance(event := connection.next_event(), h11.EndOfMessage):
                if event is h11.NEED_DATA:
                    connection.receive_data(sock.recv(1 << 16))
                elif isinstance(event, h11.Response):
                    assert event.status_code == 200
                elif isinstance(event, h11.Data):
                    if event.chunk_start:
                        chunks.append(bytearray())
                        arrivals.append(time.monotonic() - sent)
                    chunks[-1] += event.data
    return [bytes(chunk) for chunk in chunks], arrivals


def starts(chunks: list[bytes]) -> set[int]:
    return set(itertools.accumulate((len(chunk) for chunk in chunks[:-1]), initial=0))


def test_at_max_speed_a_capture_goes_out_in_one_send() -> None:
    chunks, _ = chunks_served(CHINESE)
    assert chunks == [CHINESE.read_bytes()]  # its 27 frames, planned a write each, in one chunk


@pytest.mark.parametrize("specs", [["chunk:1"], ["chunk:random", "split-utf8"]])
def test_chunk_faults_split_the_body_exactly_as_planned(specs: list[str]) -> None:
    app = ReplayServer([recording(CHINESE)], [parse_fault(spec) for spec in specs], speed="max", seed=5)
    planned = app.plan(app.recordings[0], 1)
    chunks, _ = chunks_served(CHINESE, *specs)
    assert chunks == [write.data for write in planned.writes] and len(chunks) > 100


def test_split_utf8_still_splits_every_multibyte_character_between_two_sends() -> None:
    chunks, _ = chunks_served(CHINESE, "split-utf8")
    body, edges = b"".join(chunks), starts(chunks)
    characters = [found.span() for found in _MULTIBYTE.finditer(body)]
    assert body == CHINESE.read_bytes() and len(characters) > 20
    assert all(any(start < edge < end for edge in edges) for start, end in characters)
    # and only there: the frames between two of them go out together
    assert len(chunks) == len({start + 1 for start, _ in characters}) + 1


def test_a_stall_splits_the_body_at_its_frame_and_waits() -> None:
    chunks, arrivals = chunks_served(CHINESE, "stall:3:0.05")
    assert starts(chunks) == {0, recording(CHINESE).frames[3].offset}
    assert arrivals[1] >= 0.05  # the server waited before it, however late this client read the first


def test_the_recorded_pace_splits_the_body_at_every_delayed_read(tmp_path: Path) -> None:
    store = CaptureStore.open(str(tmp_path / "paced.sqlite"))
    number = record(store, CHINESE.read_bytes(), seed=1, url="https://api.moonshot.ai/v1/chat/completions")
    store.close()
    source = f"{tmp_path / 'paced.sqlite'}#{number}"
    reads = recording(source).reads
    assert reads is not None and len(reads) > 3
    chunks, _ = chunks_served(source, speed=20.0)
    delayed = {offset for (offset, at), (_, before) in zip(reads[1:], reads) if at > before}
    assert b"".join(chunks) == CHINESE.read_bytes() and delayed and delayed <= starts(chunks)
    assert starts(chunks) <= {offset for offset, _ in reads}


def test_joined_sends_keep_every_delay_and_fault_split_and_stay_under_the_limit() -> None:
    writes = [Write(b"a" * 100, 0.0)] * 25 + [Write(b"b", 0.5), Write(b"c", 0.0), Write(b"d", 0.0, fault_split=True)]
    sends = joined(writes, most=1000)
    assert [(len(send.data), send.delay) for send in sends] == [(1000, 0.0), (1000, 0.0), (500, 0.0), (2, 0.5),
                                                                  (1, 0.0)]
    assert b"".join(send.data for send in sends) == b"".join(write.data for write in writes)
    assert sends[-1].fault_split and joined(writes[:1]) == (writes[0],)
