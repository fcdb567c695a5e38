"""Reading a VCR cassette into a `Capture` (see `inputs.read_capture`): each recorded interaction is
an exchange, picked and listed as a HAR's entries are (`_exchanges`).

Where most recorded real streams live: a test suite's cassettes. The formats read:

- vcrpy (kevin1024/vcrpy, and pytest-recording, pytest-vcr and vcrpy-unittest, which write through
  it): YAML by default (`vcr/serializers/yamlserializer.py`: `yaml.dump`, so keys sorted:
  `interactions:` then `version: 1`), or JSON (`jsonserializer.py`). Each interaction is
  `{request: {method, uri, body, headers: {name: [values]}}, response: {status: {code, message},
  headers: {name: [values]}, body: {string: ...}}}`. The body is kept as it came off the wire, so
  still gzip- or brotli-compressed when the response said Content-Encoding; `serializers/compat.py`
  turns it into text when it is UTF-8, else YAML writes it `!!binary` (base64). With
  `decode_compressed_response=True` the body is stored inflated and the header dropped.
- vcrpy's older httpx format (before vcrpy 4.2; `stubs/httpx_stubs.py` still reads it):
  `response: {status_code, headers, content: text, http_version}`.
- vcrpy before 1.0 (`tests/fixtures/migration/old_cassette.yaml`): a bare list of interactions, the
  request a `!!python/object:vcr.request.Request` (host, path, port, protocol), response headers a
  list of `"name: value\\r\\n"` lines.
- Ruby's VCR (vcr/vcr) and R's vcr (ropensci/vcr): `http_interactions:` with `body: {encoding,
  string}` or, for bytes kept exactly, `body: {encoding, base64_string}`; Ruby's Psych writes bytes
  that are not UTF-8 as a local `!binary` tag. Also `recorded_with:`; JSON with the same keys.
- go-vcr (dnaeon/go-vcr): `interactions:` whose `request.url` and `response.body` are plain strings,
  `response.code` the status.

Polly.js writes a HAR (`recording.har`), read by `_har.py`.

A cassette is untrusted. YAML is read with PyYAML's safe loader (its C version when there is one),
imported here only; the Python and Ruby object tags vcrpy and Psych wrote are read as the plain
mappings, lists and strings they hold, never constructed. `!!binary` is the safe loader's own. An
alias expands to a shared value, so a few hundred bytes can stand for billions of values (a "billion
laughs"): the document's expanded size is counted, each shared value once, and one past
`_MAX_VALUES` is refused, as is a value that holds itself.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import json
import re
from typing import Any

from ..findings import Severity
from ._exchanges import Kind, Recorded, capture_of, kind_of
from .capture import Capture, InputError, Note

__all__ = ["from_cassette", "looks_like_cassette"]

CASSETTE = Kind("cassette", "interaction", "interactions", "cassette", "recording-entries", "recording-malformed")
# Values a cassette may expand to (its aliases copied out), at least; a bigger file may have one a byte.
_MAX_VALUES = 2_000_000
_YAML_START = re.compile(rb"\A(?:%[^\n]*\n|#[^\n]*\n|---[ \t]*(?:#[^\n]*)?\n|\s+)*"
                         rb"(?:(?:http_)?interactions:\s*\n|version:[ \t]*\d+[ \t]*\n(?:\s*#[^\n]*\n)*"
                         rb"(?:http_)?interactions:\s*\n|- request:)")
_JSON_START = re.compile(rb'\A\s*(?:\{\s*(?:"version"\s*:\s*\d+\s*,\s*)?"(?:http_)?interactions"\s*:\s*\[|'
                         rb'\[\s*\{\s*"request"\s*:\s*\{)')


def looks_like_cassette(head: bytes) -> bool:
    """A cassette, from its first bytes: YAML or JSON that opens with its interactions."""
    return bool(_YAML_START.match(head) or _JSON_START.match(head))


def from_cassette(data: bytes, entry: str | None, *, max_inflated: int, refuse_larger: bool) -> Capture:
    document, syntax = _load(data)
    _check_size(document, max(_MAX_VALUES, len(data)))
    interactions, flavour = _interactions(document)
    if interactions is None:
        raise InputError(f"this looks like a VCR cassette but is not one: it has no list of interactions "
                         f"(found {kind_of(document)})")
    if not interactions:
        raise InputError("this cassette holds no interactions: the test recorded no request (was it run with "
                         "recording on, e.g. pytest --record-mode=once?)")
    exchanges = [_interaction(index, value) for index, value in enumerate(interactions) if isinstance(value, dict)]
    skipped = [str(index) for index, value in enumerate(interactions) if not isinstance(value, dict)]
    said = f"interactions {', '.join(skipped[:10])} are not mappings" if len(skipped) > 1 else (
        f"interaction {skipped[0]} is not a mapping" if skipped else "")
    notes = [Note("recording-malformed", f"cassette {said}: left out", Severity.WARNING)] if skipped else []
    return capture_of(exchanges, entry, CASSETTE, total=len(interactions), how=f"{flavour}, {syntax}",
                      max_inflated=max_inflated, refuse_larger=refuse_larger, notes=notes)


# -- the document -------------------------------------------------------------------------------------


def _load(data: bytes) -> tuple[Any, str]:
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            return json.loads(data, parse_int=lambda digits: int(digits) if len(digits) <= 4000 else float(digits)), \
                "JSON"
        except RecursionError:
            raise InputError("this looks like a VCR cassette but is nested too deeply to read") from None
        except ValueError:
            pass  # YAML's flow style starts so too
    try:
        yaml = importlib.import_module("yaml")  # PyYAML: only the cassette reader needs it
    except ImportError:
        raise InputError("reading a YAML cassette needs PyYAML (pip install pyyaml)") from None
    try:
        return yaml.load(data, Loader=_loader()), "YAML"  # the safe loader: see _loader
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        problem = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise InputError(f"this looks like a VCR cassette but its YAML does not read: {problem}") from None


@functools.cache
def _loader() -> Any:
    """PyYAML's safe loader, plus the tags cassettes carry, read as the plain data they hold."""
    yaml = importlib.import_module("yaml")

    class CassetteLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    def plain(loader: Any, _suffix: str, node: Any) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    # vcrpy's Python tags (`!!python/unicode`, `!!python/tuple`, pre-1.0's `!!python/object:...`), Ruby's, any local.
    for prefix in ("tag:yaml.org,2002:python/", "tag:ruby.yaml.org,2002:", "!"):
        CassetteLoader.add_multi_constructor(prefix, plain)
    CassetteLoader.add_constructor("!binary", yaml.SafeLoader.construct_yaml_binary)  # Ruby Psych's bytes
    return CassetteLoader


def _check_size(document: Any, limit: int) -> None:
    """Refuse a document whose aliases expand past `limit` values, or that holds itself. Each shared
    value is sized once (by identity), so this costs the document's own size, not its expansion."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(document, False)]
    while stack:
        value, done = stack.pop()
        if not isinstance(value, (dict, list, tuple)):
            continue
        key = id(value)
        children = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
        if done:
            open_.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for child in children)
            if sizes[key] > limit:
                raise InputError(f"this cassette's YAML aliases expand to more than {limit:,} values (a 'billion "
                                 "laughs'): refused")
            continue
        if key in sizes:
            continue
        if key in open_:
            raise InputError("this cassette's YAML holds a value that contains itself (an alias to its own "
                             "anchor): refused")
        open_.add(key)
        stack.append((value, True))
        stack.extend((child, False) for child in children if isinstance(child, (dict, list, tuple)))


def _interactions(document: Any) -> tuple[list[Any] | None, str]:
    if isinstance(document, list):
        return document, "vcrpy before 1.0"
    if not isinstance(document, dict):
        return None, ""
    if isinstance(document.get("http_interactions"), list):
        recorder = document.get("recorded_with")
        return document["http_interactions"], (recorder[:60] if isinstance(recorder, str) else "Ruby or R VCR")
    listed = document.get("interactions")
    version = document.get("version")
    if not isinstance(listed, list):
        return None, ""
    return listed, "go-vcr" if isinstance(version, int) and version >= 2 else "vcrpy"


# -- one interaction ------------------------------------------------------------------------------------


def _interaction(index: int, value: dict[Any, Any]) -> Recorded:
    found = Recorded(CASSETTE, index)
    request, response = value.get("request"), value.get("response")
    request = _object(found, request, "request")
    response = _object(found, response, "response")
    found.method = _text(request.get("method")).upper()[:20]
    found.url = _url(request)
    found.request_headers = _headers(found, request.get("headers"), "request")
    found.response_headers = _headers(found, response.get("headers"), "response")
    found.status_code = _status(found, response)
    found.request_body = _body(found, request.get("body"), "request.body")
    body = response["content"] if "content" in response and "body" not in response else response.get("body")
    found.raw = _body(found, body, "response.body")
    if found.raw is None:
        found.missing = "its response has no body"
    return found


def _object(found: Recorded, value: Any, name: str) -> dict[Any, Any]:
    if isinstance(value, dict):
        return value
    if value is not None:
        found.problems.append(f"{name} is {kind_of(value)}, not a mapping: left out")
    return {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace") if isinstance(value, bytes) else ""


def _url(request: dict[Any, Any]) -> str:
    for key in ("uri", "url"):
        if isinstance(request.get(key), (str, bytes)):
            return _text(request[key])[:2000]
    host = _text(request.get("host"))  # vcrpy before 1.0: the parts
    if not host:
        return ""
    port = request.get("port")
    protocol = _text(request.get("protocol")) or "http"
    shown_port = f":{port}" if isinstance(port, int) and port not in (80, 443) else ""
    return f"{protocol}://{host}{shown_port}{_text(request.get('path'))}"[:2000]


def _headers(found: Recorded, value: Any, side: str) -> tuple[tuple[str, str], ...]:
    """Headers as a cassette has them: {name: [values]} (vcrpy, Ruby, go-vcr), {name: value}, a list of
    `name: value` lines (vcrpy's response before 1.0) or of pairs (its request then)."""
    if value is None:
        return ()
    pairs: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        pairs = [(name, item) for name, values in value.items()
                 for item in (values if isinstance(values, (list, tuple)) else [values])]
    elif isinstance(value, (list, tuple)):
        for item in value[0] if len(value) == 1 and isinstance(value[0], list) else value:
            if isinstance(item, (str, bytes)):
                name, _, said = _text(item).partition(":")
                pairs.append((name, said.strip()))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((item[0], item[1]))
    else:
        found.problems.append(f"{side}.headers is {kind_of(value)}, not a mapping: left out")
        return ()
    headers = [(_text(name).strip(), _text(said) if isinstance(said, (str, bytes)) else str(said))
               for name, said in pairs if isinstance(name, (str, bytes)) and said is not None]
    return tuple((name, said) for name, said in headers if name)


def _status(found: Recorded, response: dict[Any, Any]) -> int | None:
    status = response.get("status")
    value = status.get("code") if isinstance(status, dict) else response.get("status_code", response.get("code"))
    if value is None and isinstance(status, (str, int)):
        value = status  # go-vcr: "200 OK"
    if isinstance(value, str) and value[:3].isascii() and value[:3].isdigit():
        value = int(value[:3])
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 999:
        return value
    if value is not None:
        found.problems.append(f"response status {str(value)[:40]!r} is not a status code: left out")
    return None


def _body(found: Recorded, value: Any, where: str) -> bytes | None:
    """A body as the recorders keep it: text, bytes (`!!binary`), `{string: ...}`, Ruby's and R's
    `{encoding, base64_string}`, vcrpy's old `BytesIO` request body (`{state: [bytes, ...]}`)."""
    if isinstance(value, dict):
        if "base64_string" in value:
            try:
                return base64.b64decode(_text(value["base64_string"]))
            except (binascii.Error, ValueError) as exc:
                found.problems.append(f"{where}.base64_string does not decode ({exc}): left out")
                return None
        state = value.get("state")
        value = value.get("string", state[0] if isinstance(state, (list, tuple)) and state else None)
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    found.problems.append(f"{where} is {kind_of(value)}, not text: left out")
    return None
