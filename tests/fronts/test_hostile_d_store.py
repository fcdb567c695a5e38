"""Issue 20, part 3: a capture store with one damaged byte in its schema table (the sqlite_master
records on the file's first page). SQLite's error message quotes the damaged name, and the sqlite3
module decodes that message as UTF-8: a byte that is not UTF-8 there used to escape as a
UnicodeDecodeError from every reader and from `streamfold captures`. It is the one-line StoreError
the other damaged files give."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from store_helpers import BODIES, record
from streamfold.cli import cli
from streamfold.store import CaptureStore, StoreError, get_exchange, list_exchanges, read_stored

PAGE = 4096  # the store's page size (SQLite's default): page 1 holds the file header and sqlite_master


def damaged_store(tmp_path: Path, name: bytes) -> Path:
    """A real store with one byte of `name`, where sqlite_master holds it, replaced by 0xFF."""
    db = tmp_path / "damaged.sqlite"
    with CaptureStore.open(str(db)) as store:
        record(store, BODIES[0].read_bytes())
    data = bytearray(db.read_bytes())
    where = data.find(name, 100, PAGE)  # past the 100-byte file header, inside page 1
    assert where > 0, f"{name!r} is not on the schema page"
    data[where + 1] = 0xFF
    db.write_bytes(bytes(data))
    return db


# The table's name inside its CREATE statement, and the index's name (its own record's name column).
@pytest.mark.parametrize("name", [b"TABLE exchanges", b"exchanges_newest"])
def test_a_damaged_byte_in_the_schema_table_is_a_store_error_for_every_reader(tmp_path: Path, name: bytes) -> None:
    db = str(damaged_store(tmp_path, name))
    for reading in (lambda: list_exchanges(db), lambda: get_exchange(db), lambda: read_stored(db, 1),
                    lambda: CaptureStore.open(db)):
        with pytest.raises(StoreError) as caught:
            reading()
        message = str(caught.value)
        assert "is not a capture store streamfold can read: " in message and len(message.splitlines()) == 1
        message.encode("utf-8")  # what it shows is text
        if sys.version_info >= (3, 11):  # SQLite's own words, the damaged byte shown as U+FFFD
            assert "malformed database schema" in message and "\ufffd" in message
        else:  # 3.10's sqlite3 drops a message it cannot decode
            assert "the file is damaged" in message


@pytest.mark.parametrize("args", [["captures", "--db", "{db}"], ["show", "{db}"], ["show", "{db}#1"],
                                  ["captures", "export", "{db}#1"]])
def test_the_commands_say_it_in_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    db = str(damaged_store(tmp_path, b"exchanges_newest"))
    done = CliRunner().invoke(cli, [arg.replace("{db}", db) for arg in args], env={"NO_COLOR": "1"})
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("streamfold: ") and "is not a capture store streamfold can read: " in line


def test_the_undamaged_store_still_reads(tmp_path: Path) -> None:
    """The same store before the byte was changed: what the damage test compares with."""
    db = str(tmp_path / "whole.sqlite")
    with CaptureStore.open(db) as store:
        record(store, BODIES[0].read_bytes())
    assert [row["id"] for row in list_exchanges(db)] == [1]
    assert read_stored(db, 1).body == BODIES[0].read_bytes()
