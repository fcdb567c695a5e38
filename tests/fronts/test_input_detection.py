"""Telling an input's format: the quick checks `read_capture` makes first (a substring every match of a line
pattern holds, a tab every DevTools row has, a NUL every wide encoding has) decide exactly as the plain rules
they stand before, run with the checks switched off, on the suite's inputs and captures and on text made of
the formats' pieces."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamfold.services import _devtools, _encodings, _readers

TESTS = Path(__file__).resolve().parents[1]
CORPUS = sorted(path for folder in ("inputs", "captures") for path in (TESTS / folder).rglob("*") if path.is_file())


@contextlib.contextmanager
def plain_rules() -> Iterator[None]:
    """Every quick check says "maybe": each rule behind it runs on every input."""
    with mock.patch.object(_readers, "_may_match", lambda head, marks: True), \
            mock.patch.object(_devtools, "_may_hold_rows", lambda body: True), \
            mock.patch.object(_encodings, "_may_be_wide", lambda sample: True):
        yield


def told(data: bytes) -> tuple[str, bool, object]:
    return _readers.detect(data), _devtools.looks_like_devtools(data), _encodings._by_nuls(data)


def assert_told_alike(data: bytes) -> None:
    quick = told(data)
    with plain_rules():
        assert told(data) == quick


def test_the_corpus_is_told_as_the_plain_rules_tell_it() -> None:
    kinds = set()
    for path in CORPUS:
        data = path.read_bytes()
        assert_told_alike(data)
        assert_told_alike(data.replace(b"\r\n", b"\n"))
        kinds.add(_readers.detect(data))
    # The corpus has every format the quick checks stand before (and stream bodies, which they tell at once).
    assert {"curl-trace", "curl-verbose", "log", "devtools", "raw"} <= kinds


@pytest.mark.parametrize("lines", [
    [b"== Info: a", b"== Info: b"], [b"=> Send a", b"=> Send b"], [b"<= Recv a", b"<= Recv b"],
    [b"12:00:01.5 <= Recv a", b"12:00:01.5 == Info: b"], [b"< a", b"< b", b"< c"], [b"> a", b"> b", b"> c"],
    [b"* a", b"* b", b"* c"], [b"a\tb\t12:00:01", b"c\td\t12:00:02"],
])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_each_line_start_alone_is_told(lines: list[bytes], ending: bytes) -> None:
    data = ending.join(lines) + ending
    with plain_rules():
        assert _readers.detect(data) != "raw"
    assert_told_alike(data)


@pytest.mark.parametrize("data", ["a b\n".encode("utf-16-le"), "a b\n".encode("utf-16-be"),
                                  "ab\n".encode("utf-32-le"), "ab\n".encode("utf-32-be")])
def test_wide_text_without_a_mark_is_told(data: bytes) -> None:
    assert _encodings._by_nuls(data * 4) is not None
    assert_told_alike(data * 4)


PIECES = [
    b"== Info: Connected\n", b"=> Send header, 80 bytes\n", b"<= Recv data, 12 bytes\n", b"12:00:01.123456 ",
    b"< HTTP/1.1 200 OK\n", b"> GET /v1 HTTP/1.1\n", b"* Trying 127.0.0.1\n", b"<", b">", b"*", b" ", b"\n", b"\r\n",
    b"HTTP/1.1 200 OK\r\n", b"data: {\"a\":1}\n\n", b"event: ping\n", b"message\t{\"id\":1}\t14:20:01.123\n",
    b"Type\tData\tTime\n", b"\t", b"14:20:01", b"2026-12-07 12:00:00,123 INFO chunk\n", b"INFO:httpx:chunk\n",
    b"\x00", b"a\x00", b"a\x00\x00\x00", b"\x00a", b"\xff\xfe", b"{", b"==", b"=> Send", b"<= Recv",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join))
def test_text_of_the_formats_pieces_is_told_as_the_plain_rules_tell_it(data: bytes) -> None:
    assert_told_alike(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_are_told_as_the_plain_rules_tell_them(data: bytes) -> None:
    assert_told_alike(data)
