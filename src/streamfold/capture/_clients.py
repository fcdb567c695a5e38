"""Ready-made recording clients: an `httpx2.Client` (what the openai and
anthropic SDKs take as `http_client=`) or an `httpx.Client`, sync or async,
whose transports record every exchange into the capture store.

The client is built exactly as the library builds it from the keywords given
(`timeout=`, `limits=`, `proxy=`, `verify=`, `http2=`, `mounts=`, `transport=`,
proxies from the environment...), then each transport it chose, the default
one and every mounted one, is wrapped in a recording transport (`record`,
which does the same to a client you already have). Building the transports
here instead would lose what the client derives from its keywords and the
environment (a client given `transport=` ignores HTTP_PROXY). The libraries are imported when a client is asked for:
httpx2 is not a dependency of streamfold.
"""

from __future__ import annotations

import importlib
import inspect
import os
from typing import TYPE_CHECKING, Any, TypeVar

from ..store import CaptureStore
from ._async import AsyncRecordingTransport
from ._stores import shared_store
from ._sync import RecordingTransport

if TYPE_CHECKING:
    import httpx
    import httpx2

__all__ = ["async_http_client", "async_httpx_client", "http_client", "httpx_client", "record"]

_INSTALL = {"httpx2": "pip install httpx2 (the openai and anthropic SDKs bring it)", "httpx": "pip install httpx"}


def _library(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"streamfold.capture needs the {name} package for this client: {_INSTALL[name]}",
                          name=name) from exc


def _store(db: str | os.PathLike[str] | None, keep_secrets: bool, store: CaptureStore | None) -> CaptureStore:
    if store is None:
        return shared_store(db, keep_secrets=keep_secrets)
    if db is not None:
        raise ValueError("give the capture store either as db= (a path) or as store=, not both")
    if not isinstance(store, CaptureStore):
        raise TypeError(f"store= takes a streamfold.store.CaptureStore, got {type(store).__name__}")
    if keep_secrets and not store.keep_secrets:
        raise ValueError("keep_secrets=True asks a store of its own; this store was opened redacting")
    return store


_ClientT = TypeVar("_ClientT")


def record(client: _ClientT, db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
           store: CaptureStore | None = None) -> _ClientT:
    """Make a client you already have record every exchange (from now on) into the capture store at
    `db` or into `store`, and return it: an httpx2 or httpx client, sync or async, e.g. the SDK's own
    `OpenAI(http_client=streamfold.capture.record(openai.DefaultHttpxClient()))`. Its transports (the
    default one and every mounted one) are wrapped in place; a transport already recording is left as
    it is. Raises `TypeError` for an object that is no httpx2 or httpx client."""
    # `_transport` and `_mounts` are where httpx and httpx2 keep the transports the client chose;
    # a version that moves them must fail here, loudly, rather than send unrecorded.
    found: Any = client
    if not hasattr(found, "_transport") or not isinstance(getattr(found, "_mounts", None), dict):
        raise TypeError(f"streamfold.capture.record takes an httpx2 or httpx client, got {type(client).__name__} "
                        "(for another client, wrap its transport in RecordingTransport)")
    recorder = _store(db, keep_secrets, store)
    kind = AsyncRecordingTransport if inspect.iscoroutinefunction(getattr(found, "send", None)) else RecordingTransport

    def wrap(transport: Any) -> Any:
        if transport is None or isinstance(transport, (RecordingTransport, AsyncRecordingTransport)):
            return transport
        return kind(transport, recorder)

    found._transport = wrap(found._transport)
    found._mounts = {pattern: wrap(transport) for pattern, transport in found._mounts.items()}
    return client


def http_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                store: CaptureStore | None = None, **client_kwargs: Any) -> httpx2.Client:
    """An `httpx2.Client` that records every exchange into the capture store at `db` (`$STREAMFOLD_DB`,
    else ./streamfold.sqlite), or into `store`, while its caller reads the response unchanged:

        client = OpenAI(http_client=streamfold.capture.http_client())

    `client_kwargs` go to `httpx2.Client`. Stores opened by path are shared within the process and
    closed at exit. Raises `StoreError` when `db` cannot be a store, `ImportError` without httpx2."""
    library = _library("httpx2")  # before the store: without it, no file is made
    client = library.Client(**client_kwargs)
    return record(client, store=_store(db, keep_secrets, store))  # type: ignore[no-any-return]


def async_http_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                      store: CaptureStore | None = None, **client_kwargs: Any) -> httpx2.AsyncClient:
    """`http_client` for async SDK clients: an `httpx2.AsyncClient`, as in
    `AsyncOpenAI(http_client=streamfold.capture.async_http_client())`."""
    library = _library("httpx2")  # before the store: without it, no file is made
    client = library.AsyncClient(**client_kwargs)
    return record(client, store=_store(db, keep_secrets, store))  # type: ignore[no-any-return]


def httpx_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                 store: CaptureStore | None = None, **client_kwargs: Any) -> httpx.Client:
    """`http_client` for code built on plain `httpx` (google-genai's `HttpOptions(httpx_client=...)`,
    your own calls): an `httpx.Client` that records every exchange."""
    library = _library("httpx")  # before the store: without it, no file is made
    client = library.Client(**client_kwargs)
    return record(client, store=_store(db, keep_secrets, store))  # type: ignore[no-any-return]


def async_httpx_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                       store: CaptureStore | None = None, **client_kwargs: Any) -> httpx.AsyncClient:
    """`httpx_client`, async: an `httpx.AsyncClient` that records every exchange."""
    library = _library("httpx")  # before the store: without it, no file is made
    client = library.AsyncClient(**client_kwargs)
    return record(client, store=_store(db, keep_secrets, store))  # type: ignore[no-any-return]
