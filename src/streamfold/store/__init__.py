"""The capture store: one SQLite file that the recorders write exchanges into
(request, response head, every body read with its arrival time, how it ended,
a folded summary) and every front reads (`PATH.sqlite#ID`). See docs/store.md.

Above the services layer (it folds with `services.load`); the core never
imports it.
"""

from __future__ import annotations

from .bulk import exchange_rows, exchange_tables, iter_exchanges
from .reader import DEFAULT_DB, StoredExchange, default_db, get_exchange, list_exchanges, parse_ref, read_stored
from .redact import redact_headers, redact_url
from .rows import DamagedCaptureError
from .schema import SCHEMA_VERSION, StoreError
from .summary import OUTCOMES, SUMMARIZED_BY, Summary
from .writer import CaptureStore, Exchange

__all__ = ["DEFAULT_DB", "OUTCOMES", "SCHEMA_VERSION", "SUMMARIZED_BY", "CaptureStore", "DamagedCaptureError",
           "Exchange", "StoreError", "StoredExchange", "Summary", "default_db", "exchange_rows", "exchange_tables",
           "get_exchange", "iter_exchanges", "list_exchanges", "parse_ref", "read_stored", "redact_headers",
           "redact_url"]
