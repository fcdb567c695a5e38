"""What the recording proxy's tests share besides the upstream itself: any ASGI app served by
uvicorn on 127.0.0.1 in a thread, and `streamfold record` run as a real subprocess of this
checkout's sources."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import uvicorn

import streamfold
from streamfold.fronts.serving import bind

SOURCES = str(Path(streamfold.__file__).resolve().parents[1])


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn (h11) on a free port of 127.0.0.1 until the block ends; yields its URL."""
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off", ws="none", http="h11"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the upstream did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def as_in_the_foreground() -> None:
    """A child's SIGINT as a foreground process has it (Ctrl-C stops it): a suite started in the background
    by a script (`pytest &`, as .ci/run runs its other Pythons) passes on SIGINT ignored, and Python then
    installs no KeyboardInterrupt, so a test's Ctrl-C would stop nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def record_process(target: str, db: str, stdout: int | IO[bytes], *extra: str) -> subprocess.Popen[bytes]:
    """`python -m streamfold record --target TARGET --port 0 --db DB` with this checkout first on the path."""
    # Not PYTHONUNBUFFERED: the lines must reach a pipe as they are printed without it.
    env = {**os.environ, "PYTHONPATH": SOURCES + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("STREAMFOLD_DB", None)
    return subprocess.Popen([sys.executable, "-m", "streamfold", "record", "--target", target, "--port", "0",
                             "--db", db, *extra], stdout=stdout, stderr=subprocess.PIPE, env=env,
                            preexec_fn=as_in_the_foreground if os.name == "posix" else None)


def stop(process: subprocess.Popen[bytes]) -> str:
    """Stop `streamfold record` as Ctrl+C does; what it wrote to stderr."""
    if process.poll() is None:
        process.send_signal(2)  # SIGINT: uvicorn's graceful stop
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    assert process.stderr is not None
    err = process.stderr.read().decode("utf-8", "replace")
    process.stderr.close()
    if process.stdout is not None:
        process.stdout.close()
    return err


def read_line(fd: int, seconds: float = 15.0) -> str:
    """The first line of a pipe (without its end), read byte by byte: nothing more is taken out of it."""
    data = b""
    deadline = time.monotonic() + seconds
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line in {seconds}s (so far {data!r})"
        byte = os.read(fd, 1)
        assert byte, f"the process closed its output (so far {data!r})"
        data += byte
    return data.decode("utf-8").rstrip("\r\n")
