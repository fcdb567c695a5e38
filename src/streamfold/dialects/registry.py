"""The registry of dialects: the built-in specs and those other packages register under the entry-point
group `streamfold.dialects` (each entry point names a `DialectSpec`, `package.module:SPEC`). Everything
that lists dialects reads it: detection, `--dialect`, the docs, the request-path table of `serve`
and the mitmproxy addon, the finding codes.

Detection is a table (`spec.py` says how a spec declares what identifies its payloads): a payload's
declared values and keys offer it to the specs that declared them, whose `claims` decides; a payload
no declaration names is offered to the specs whose `claims` takes shapes without a key.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points

from .._codes import CODES, register_codes
from ..framing.hints import register_line_format
from ..result import register_exporter
from ._base import Dialect
from .spec import DialectSpec

__all__ = ["ENTRY_POINT_GROUP", "SPECS", "detect", "dialect_table", "request_path_dialect", "spec_of", "stream_paths"]

ENTRY_POINT_GROUP = "streamfold.dialects"

#: The built-in dialects' modules, each exporting `SPEC`; also the order `read_response` asks them in
#: (a non-streaming body is read by the first whose reader takes it).
_BUILT_IN = ("bedrock", "vercel_ui", "openai_chat", "openai_completions", "openai_realtime", "openai_responses",
             "anthropic", "anthropic_completions", "anthropic_agents", "gemini", "gemini_interactions", "gemini_live",
             "cohere", "cohere_v1", "tgi", "llama_cpp", "lmstudio", "ollama", "cloudflare", "a2a", "mcp", "ag_ui",
             "claude_stream_json", "vercel_data", "adk", "mistral_conversations", "langgraph")

log = logging.getLogger("streamfold")


def _plugins() -> list[DialectSpec]:
    """The specs other packages register; one that fails to load is logged and left out."""
    found = []
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name):
        try:
            spec = entry.load()
        except Exception:  # a broken plugin must not stop streamfold: it is named and skipped
            log.warning("streamfold: the dialect entry point %r did not load", entry.value, exc_info=True)
            continue
        if isinstance(spec, DialectSpec):
            found.append(spec)
        else:
            log.warning("streamfold: the dialect entry point %r is no DialectSpec", entry.value)
    return found


def _load() -> tuple[DialectSpec, ...]:
    built_in = [importlib.import_module(f"{__package__}.{module}").SPEC for module in _BUILT_IN]
    unknown = importlib.import_module(f"{__package__}.unknown").SPEC
    specs: dict[str, DialectSpec] = {}
    codes = dict(CODES)
    for spec in (*built_in, *_plugins(), unknown):
        if spec.name in specs:
            log.warning("streamfold: a second dialect is named %r; the first is kept", spec.name)
            continue
        taken = [info.code for info in spec.codes if codes.get(info.code, info) != info]
        if taken:  # (a built-in's codes never clash: tests/dialects/test_dialect_specs.py)
            log.warning("streamfold: the dialect %r is left out: its finding codes %s are another's",
                        spec.name, ", ".join(taken))
            continue
        specs[spec.name] = spec
        codes.update((info.code, info) for info in spec.codes)
    return tuple(specs.values())


#: Every dialect, `unknown` last.
SPECS: tuple[DialectSpec, ...] = _load()

_BY_NAME: dict[str | type[Dialect], DialectSpec] = {
    **{spec.name: spec for spec in SPECS}, **{spec.fold: spec for spec in SPECS}}

for _spec in SPECS:
    register_exporter(_spec.name, _spec.export)
    register_codes(_spec.codes)
    if _spec.line_format is not None:
        register_line_format(_spec.line_format)


def spec_of(dialect: str | type[Dialect]) -> DialectSpec:
    """The spec of a dialect, by its name or its fold class (KeyError for neither)."""
    return _BY_NAME[dialect]


_Claim = tuple[Callable[[object], bool], type[Dialect]]  # a spec's `claims`, and the dialect it names


def _index(specs: Iterable[DialectSpec]) -> tuple[
        tuple[tuple[str, dict[str, tuple[_Claim, ...]], tuple[tuple[str, _Claim], ...]], ...],
        tuple[tuple[str, tuple[_Claim, ...]], ...], tuple[_Claim, ...]]:
    """The detection table: per discriminating key, its exact values and its prefixes, each with the
    claims of the specs that declared it; the keys only some specs have; the specs asked last."""
    values: dict[str, dict[str, tuple[_Claim, ...]]] = {}
    prefixes: dict[str, list[tuple[str, _Claim]]] = {}
    keys: dict[str, tuple[_Claim, ...]] = {}
    for spec in specs:
        claim = (spec.claims, spec.fold)
        for key, declared in spec.discriminators.items():
            for value in sorted(declared):
                if value.endswith("*"):
                    prefixes.setdefault(key, []).append((value[:-1], claim))
                else:
                    table = values.setdefault(key, {})
                    table[value] = (*table.get(value, ()), claim)
        for key in sorted(spec.keys):
            keys[key] = (*keys.get(key, ()), claim)
    by_value = tuple((key, values.get(key, {}), tuple(prefixes.get(key, ()))) for key in {**values, **prefixes})
    keyless = tuple((spec.claims, spec.fold) for spec in specs if spec.keyless)
    return by_value, tuple(keys.items()), keyless


_BY_VALUE, _BY_KEY, _KEYLESS = _index(SPECS)


def detect(value: object) -> type[Dialect] | None:
    """The dialect whose spec claims a decoded payload, or None."""
    if type(value) is dict:
        for key, exact, prefixed in _BY_VALUE:
            tag = value.get(key)
            if type(tag) is str:
                for claims, dialect in exact.get(tag, ()):
                    if claims(value):
                        return dialect
                for prefix, (claims, dialect) in prefixed:
                    if tag.startswith(prefix) and claims(value):
                        return dialect
        for key, found in _BY_KEY:
            if key in value:
                for claims, dialect in found:
                    if claims(value):
                        return dialect
    for claims, dialect in _KEYLESS:
        if claims(value):
            return dialect
    return None


def request_path_dialect(path: str) -> DialectSpec | None:
    """The dialect whose API serves a request path: the spec with the longest request-path marker the
    path ends with or holds (`/v1/chat/completions` holds `/completions` too, and is openai-chat's); of
    two as long, the one the path ends with (`/v1/completions` holds Anthropic's `/v1/complete`)."""
    found = [((len(marker), path.endswith(marker)), spec) for spec in SPECS for marker in spec.request_paths
             if marker in path]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def stream_paths() -> tuple[str, ...]:
    """The URL path endings of every dialect's streaming endpoints that take no `"stream": true`."""
    return tuple(marker for spec in SPECS for marker in spec.stream_paths)


def dialect_table() -> str:
    """The table of dialects of docs/dialects.md, as markdown: each dialect, what it is, the request paths
    `serve` answers with it, its transport when that alone decides it, and its own finding codes."""
    def cell(items: Iterable[str]) -> str:
        return ", ".join(f"`{item}`" for item in items) or "–"

    rows = [f"| [`{spec.name}`](#{spec.name}) | {spec.title} | {cell(spec.request_paths)} | {cell(spec.transports)} "
            f"| {cell(info.code for info in spec.codes)} |\n" for spec in SPECS if spec.name != "unknown"]
    return ("| dialect | what it is | request paths | decided by transport | its own finding codes |\n"
            "|---|---|---|---|---|\n" + "".join(rows))
