"""Ready-made recording clients: an `httpx2.Client` (what the openai and
anthropic SDKs take as `http_client=`) or an `httpx.Client`, sync or async,
whose transports record every exchange into the capture store.

The client is built exactly as the library builds it from the keywords given
(`timeout=`, `limits=`, `proxy=`, `verify=`, `http2=`, `mounts=`, `transport=`,
proxies from the environment...), then each transport it chose, the default
one and every mounted one, is wrapped in a recording transport. Building the
transports here instead would lose what the client derives from its keywords
and the environment. The libraries are imported when a client is asked for:
httpx2 is not a dependency of streamfold.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..store import CaptureStore
from ._async import AsyncRecordingTransport
from ._stores import shared_store
from ._sync import RecordingTransport

if TYPE_CHECKING:
    import httpx
    import httpx2

__all__ = ["async_http_client", "async_httpx_client", "http_client", "httpx_client"]

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


def _wrap_transports(client: Any, wrap: Callable[[Any], Any]) -> Any:
    # `_transport` and `_mounts` are where httpx and httpx2 keep the transports the client chose;
    # a version that moves them must fail here, loudly, rather than send unrecorded.
    if not hasattr(client, "_transport") or not isinstance(getattr(client, "_mounts", None), dict):
        raise RuntimeError(f"streamfold.capture does not know where {type(client).__module__} keeps a client's "
                           "transports; wrap your own transport in RecordingTransport instead")
    client._transport = wrap(client._transport)
    client._mounts = {pattern: None if transport is None else wrap(transport)
                      for pattern, transport in client._mounts.items()}
    return client


def http_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                store: CaptureStore | None = None, **client_kwargs: Any) -> httpx2.Client:
    """An `httpx2.Client` that records every exchange into the capture store at `db` (`$STREAMFOLD_DB`,
    else ./streamfold.sqlite), or into `store`, while its caller reads the response unchanged:

        client = OpenAI(http_client=streamfold.capture.http_client())

    `client_kwargs` go to `httpx2.Client`. Stores opened by path are shared within the process and
    closed at exit. Raises `StoreError` when `db` cannot be a store, `ImportError` without httpx2."""
    library = _library("httpx2")
    recorder = _store(db, keep_secrets, store)
    client = library.Client(**client_kwargs)
    return _wrap_transports(client, lambda inner: RecordingTransport(inner, recorder))  # type: ignore[no-any-return]


def async_http_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                      store: CaptureStore | None = None, **client_kwargs: Any) -> httpx2.AsyncClient:
    """`http_client` for async SDK clients: an `httpx2.AsyncClient`, as in
    `AsyncOpenAI(http_client=streamfold.capture.async_http_client())`."""
    library = _library("httpx2")
    recorder = _store(db, keep_secrets, store)
    client = library.AsyncClient(**client_kwargs)
    return _wrap_transports(client,  # type: ignore[no-any-return]
                            lambda inner: AsyncRecordingTransport(inner, recorder))


def httpx_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                 store: CaptureStore | None = None, **client_kwargs: Any) -> httpx.Client:
    """`http_client` for code built on plain `httpx` (google-genai's `HttpOptions(httpx_client=...)`,
    your own calls): an `httpx.Client` that records every exchange."""
    library = _library("httpx")
    recorder = _store(db, keep_secrets, store)
    client = library.Client(**client_kwargs)
    return _wrap_transports(client, lambda inner: RecordingTransport(inner, recorder))  # type: ignore[no-any-return]


def async_httpx_client(db: str | os.PathLike[str] | None = None, *, keep_secrets: bool = False,
                       store: CaptureStore | None = None, **client_kwargs: Any) -> httpx.AsyncClient:
    """`httpx_client`, async: an `httpx.AsyncClient` that records every exchange."""
    library = _library("httpx")
    recorder = _store(db, keep_secrets, store)
    client = library.AsyncClient(**client_kwargs)
    return _wrap_transports(client,  # type: ignore[no-any-return]
                            lambda inner: AsyncRecordingTransport(inner, recorder))
