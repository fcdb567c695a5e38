"""The replay server as a raw ASGI app: a request to any path is answered from a capture (chosen
as `choose` says) with the planned status, headers and writes, each write sent after its delay;
`/_streamfold/...` are the control endpoints (GET): `expect[?request=ID]` (the reference of what
a request was served), `requests`, `captures`. Each served response says its request id in
`x-streamfold-request` and where its reference is in `x-streamfold-expect`.

The faults are checked against every capture when the app is made, so a fault that cannot apply
is a usage error at startup, never a failed request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from .._json import dumps_strict
from ..fronts.serving import TOKEN_PATH, admit, is_loopback_host, shorten
from .choose import CAPTURE_HEADER, choose
from .faults import Fault, FaultError, refusal
from .plan import Plan, Recording, Write, joined, plan_response
from .reference import Served, ServedLog

__all__ = ["CONTROL", "ReplayCutError", "ReplayServer"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The path prefix of the control endpoints.
CONTROL = "/_streamfold/"


class ReplayCutError(Exception):
    """Raised to the server after a `cut` fault's last write: uvicorn then closes the connection
    without ending the chunked body, so the client sees the connection break off mid-frame."""


class _QuietCuts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ReplayCutError))


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())


@dataclass(frozen=True, slots=True)
class _Planned:
    """A plan with what serving it takes: its body (for the reference) and its sends (`joined`)."""

    plan: Plan
    body: bytes
    sends: tuple[Write, ...]

    @classmethod
    def of(cls, plan: Plan) -> _Planned:
        return cls(plan, plan.body, joined(plan.writes))


class ReplayServer:
    """Serves `recordings` with `faults`, paced by `speed` ("original", "max" or a factor), random
    faults drawn from `seed` (request N of a run with one seed is served the same way every run).
    `expect_out`: a file the reference of each request is written to before its body ends
    (`{request}` in it is replaced by the request id). `host`/`port`: where it listens (for the
    Host check; set by the server once bound). Raises `FaultError` when a fault cannot apply."""

    def __init__(self, recordings: Sequence[Recording], faults: Sequence[Fault] = (), *,
                 speed: str | float = "original", seed: int = 0, host: str = "127.0.0.1", port: int | None = None,
                 expect_out: str | None = None, echo: Callable[[str], None] | None = None,
                 token: str | None = None) -> None:
        if not recordings:
            raise ValueError("the replay server needs at least one capture")
        self.recordings = list(recordings)
        self.faults = tuple(faults)
        self.speed = speed
        self.seed = seed
        self.host, self.port = host, port
        self.expect_out = expect_out
        self.echo = echo
        #: The access token every request must carry when bound off loopback (`fronts.serving.admit`): the path
        #: prefix /t/TOKEN, the X-Streamfold-Token header, or `Authorization: Bearer TOKEN` (an SDK's api_key).
        self.token = token
        self.log = ServedLog()
        #: Each capture's plan, when every request gets the same one (no random fault): made once, as a long
        #: capture takes a while to plan.
        self._plans: dict[str, _Planned] = {}
        for recording in self.recordings:
            refused = refusal(self.faults, transport=recording.transport, dialect=recording.dialect,
                              frames=len(recording.frames))
            if refused is not None:
                raise FaultError(f"capture {recording.name!r} ({recording.dialect}, {recording.transport}): {refused}")
            try:
                plan = plan_response(recording, self.faults, speed=speed, seed=seed)
            except FaultError as exc:
                raise FaultError(f"capture {recording.name!r}: {exc}") from None
            if not any(fault.random for fault in self.faults):
                self._plans[recording.name] = _Planned.of(plan)

    def plan(self, recording: Recording, request: int) -> Plan:
        """The response request `request` gets from `recording` (its random faults drawn for it)."""
        return self._planned(recording, request).plan

    def _planned(self, recording: Recording, request: int) -> _Planned:
        planned = self._plans.get(recording.name)
        if planned is None:
            planned = _Planned.of(plan_response(recording, self.faults, speed=self.speed,
                                                seed=f"{self.seed}/{request}"))
        return planned

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        admitted = admit(scope, self.token, bearer=True)
        if admitted is None:
            await _json(send, 401, {"error": {"message": "this replay server is served on the network and answers "
                                                         "only requests that carry its access token: use the URL "
                                                         "`streamfold serve` printed (http://HOST:PORT/t/TOKEN) as "
                                                         "the base URL, or send X-Streamfold-Token: TOKEN"}})
            return
        scope = admitted
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        path = raw_path.decode("latin-1")
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        # Off loopback the token admitted the request, whatever name the client reached this machine by.
        if self.token is None and self.port is not None and not is_loopback_host(headers.get("host", ""), self.host,
                                                                                  self.port):
            await _json(send, 400, {"error": {"message": f"this replay server answers requests addressed to it "
                                                         f"(127.0.0.1:{self.port}); the Host header was "
                                                         f"{headers.get('host', '')!r}"}})
            return
        if path.startswith(CONTROL) or path == CONTROL.rstrip("/"):
            await self._control(scope, path, send)
            return
        while (await receive()).get("more_body", False):  # the request body is read and not used
            pass
        query = scope.get("query_string", b"").decode("latin-1")
        recording, served_path, why = choose(self.recordings, path + (f"?{query}" if query else ""),
                                             headers.get(CAPTURE_HEADER))
        if recording is None:
            if self.echo is not None:
                self.echo(f"{shorten(scope['method'], 20)} {shorten(path)} 404: {why}")
            await _json(send, 404, {"error": {"message": f"streamfold serve: {why}",
                                              "captures": [r.name for r in self.recordings]}})
            return
        await self._serve(scope["method"], served_path, recording, receive, send)

    async def _serve(self, method: str, path: str, recording: Recording, receive: Receive, send: Send) -> None:
        request = self.log.next_id()
        planned = self._planned(recording, request)
        plan = planned.plan
        served = Served(request, recording.name, tuple(f.spec for f in self.faults), plan.status, plan.headers,
                        planned.body)
        self.log.add(served)
        extra = [("x-streamfold-request", str(request)), ("x-streamfold-capture", recording.name),
                 ("x-streamfold-expect", f"{self._prefix()}{CONTROL}expect?request={request}"),
                 ("cache-control", "no-cache")]
        await send({"type": "http.response.start", "status": plan.status,
                    "headers": [(name.encode("latin-1"), value.encode("latin-1"))
                                for name, value in (*plan.headers, *extra)]})

        async def write_all() -> None:
            for write in planned.sends:
                if write.delay > 0:
                    await asyncio.sleep(write.delay)
                served.sent += len(write.data)
                await send({"type": "http.response.body", "body": write.data, "more_body": True})

        async def disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        writing, watch = asyncio.ensure_future(write_all()), asyncio.ensure_future(disconnect())
        try:
            await asyncio.wait({writing, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
        if not writing.done():
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writing
            served.client_gone = True
            self._said(method, path, served, "the client went away")
            return
        writing.result()
        served.finished = True
        if self.expect_out is not None:  # written before the body ends: a client that saw the end finds it
            await asyncio.to_thread(self._write_expect, served)
        self._said(method, path, served, "cut" if plan.cut else "complete")
        if plan.cut:
            raise ReplayCutError(f"request {request}: cut as --fault cut says")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _prefix(self) -> str:
        """What a path of this server starts with: the token's prefix off loopback, nothing on it."""
        return f"{TOKEN_PATH}{self.token}" if self.token is not None else ""

    def _write_expect(self, served: Served) -> None:
        assert self.expect_out is not None
        target = Path(self.expect_out.replace("{request}", str(served.request)))
        target.write_text(dumps_strict(served.result(), indent=2) + "\n", encoding="utf-8")

    def _said(self, method: str, path: str, served: Served, outcome: str) -> None:
        if self.echo is not None:
            faults = " ".join(served.faults) or "no faults"
            self.echo(f"#{served.request} {shorten(method, 20)} {shorten(path.split('?')[0])} <- "
                      f"{shorten(served.capture)} {served.status} {served.sent}/{len(served.planned)} bytes {outcome} "
                      f"({faults})")

    async def _control(self, scope: Scope, path: str, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await _json(send, 405, {"error": {"message": f"{path} answers GET only"}})
            return
        name = path[len(CONTROL):].split("?")[0].strip("/")
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if name == "expect":
            wanted = query.get("request", [None])[0]
            if wanted is not None and not (wanted.isascii() and wanted.isdigit()):
                await _json(send, 400, {"error": {"message": f"request must be a request id, got {wanted!r}"}})
                return
            served = self.log.get(None if wanted is None else int(wanted))
            if served is None:
                known = [entry.request for entry in self.log.entries()]
                message = "no request has been served yet" if wanted is None else \
                    f"no request {wanted} (the last {len(known)} are kept: {known[:1]}..{known[-1:]})"
                await _json(send, 404, {"error": {"message": message}})
                return
            result = await asyncio.to_thread(served.result)
            await _json(send, 200, result, [("x-streamfold-request", str(served.request)),
                                            ("x-streamfold-capture", served.capture)])
        elif name == "requests":
            await _json(send, 200, [entry.summary() for entry in self.log.entries()])
        elif name == "captures":
            await _json(send, 200, {
                "captures": [{"index": index, "name": r.name, "dialect": r.dialect, "transport": r.transport,
                              "frames": len(r.frames), "path": r.path, "status": r.status or 200,
                              "reads": len(r.reads) if r.reads else 0} for index, r in enumerate(self.recordings)],
                "faults": [fault.spec for fault in self.faults], "speed": self.speed, "seed": self.seed})
        else:
            await _json(send, 404, {"error": {"message": f"no control endpoint {path}; there are "
                                                         f"{CONTROL}expect[?request=ID], {CONTROL}requests, "
                                                         f"{CONTROL}captures"}})


async def _json(send: Send, status: int, value: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
    data = (dumps_strict(value, indent=2) + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *((name.encode("latin-1"), value.encode("latin-1")) for name, value in headers)]})
    await send({"type": "http.response.body", "body": data, "more_body": False})
