"""A binary stream (AWS event-stream) has no lines: everywhere a person reads where a finding or
a frame is, it says "message N, byte X", never "line 0". Text streams keep "frame N, line L"."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from eventstream_helpers import event, message
from streamfold import fold
from streamfold.cli import cli
from streamfold.findings import location
from streamfold.services.check import Divergence

CAPTURES = Path(__file__).resolve().parents[1] / "captures"


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["--color", "never", *args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def damaged_stream(tmp_path: Path) -> Path:
    good = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
    bad = bytearray(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " there"}}))
    bad[-1] ^= 0xFF  # a damaged message CRC: a located error
    data = event("messageStart", {"role": "assistant"}) + good + bytes(bad) + event("messageStop", {"stopReason": "end_turn"})
    path = tmp_path / "damaged.bin"
    path.write_bytes(data)
    return path


def test_location_words_a_binary_place_as_message_and_byte() -> None:
    assert location(3, 668, 0, "aws-eventstream") == "message 3, byte 668"
    assert location(3, 668, 12, "sse") == "frame 3, line 12"
    assert location(None, None, None, "aws-eventstream") == ""


def test_show_places_a_binary_finding_by_message_and_byte(tmp_path: Path) -> None:
    path = damaged_stream(tmp_path)
    result = fold(path.read_bytes())
    (error,) = result.errors
    out = run("show", str(path))
    assert f"crc-mismatch (message 2, byte {error.offset})" in out
    assert "line 0" not in out


def test_show_of_a_text_stream_still_says_frame_and_line() -> None:
    out = run("show", str(CAPTURES.parent.parent / "examples" / "openai-broken.sse"))
    assert "invalid-json (frame 17, line " in out


def test_the_frames_table_of_a_binary_stream_has_no_line_column(tmp_path: Path) -> None:
    header = run("frames", str(damaged_stream(tmp_path))).splitlines()[0].split()
    assert header[:2] == ["#", "offset"] and "line" not in header
    assert run("frames", str(CAPTURES.parent.parent / "examples" / "openai-broken.sse")).split()[:3] == [
        "#", "line", "offset"]


def test_blame_in_a_binary_stream_names_the_message_and_shows_its_payload(tmp_path: Path) -> None:
    out = run("blame", str(damaged_stream(tmp_path)), "--offset", "0")
    assert out.splitlines()[0].startswith("character 0 'H' of choice 0 content came from message 1, byte offset ")
    assert "line" not in out.splitlines()[0]
    assert out.splitlines()[2] == '{"contentBlockIndex": 0, "delta": {"text": "Hi"}}'
    assert ":event-type" not in out


def test_a_check_divergence_in_a_binary_stream_is_placed_by_message_and_byte() -> None:
    divergence = Divergence("content", 4, "x", "y", 2, 0, "a cause", 410, "aws-eventstream")
    assert "(message 2, byte 410)" in divergence.message()
    assert "(frame 2, line 7)" in Divergence("content", 4, "x", "y", 2, 7, "a cause").message()


def test_a_binary_exception_message_is_placed_by_message_and_byte(tmp_path: Path) -> None:
    data = event("messageStart", {"role": "assistant"}) + message(
        {":message-type": "exception", ":exception-type": "throttlingException",
         ":content-type": "application/json"}, {"message": "slow down"})
    path = tmp_path / "throttled.bin"
    path.write_bytes(data)
    out = run("show", str(path))
    assert "in-stream-error (message 1, byte " in out and "line" not in out.split("in-stream-error")[1].split(":")[0]
