"""Two kinds of body that are well known and no stream, each named in one line:

- an API's error response, one JSON object (or Gemini's one-element array) in
  the shape the vendor answers a failed request with: OpenAI's and the
  OpenAI-compatible servers' `{"error": {"message", "type", "code"}}`,
  Anthropic's `{"type": "error", "error": {"type", "message"}}`, Google's
  `{"error": {"code", "message", "status"}}`, a bare `{"error": "..."}`
  (Ollama, TGI, many gateways), AWS's `{"message": "..."}`;
- a file of a well-known binary format, told by its first bytes (its magic
  number): a PDF, an image, an archive, an executable, a media file.

`_wrong_input.recognise` says them as findings; this module only names them.
"""

from __future__ import annotations

from typing import Any

from .._json import loads

__all__ = ["binary_format", "describe_error", "error_response"]

# An error response is small: a larger body is not parsed whole to look for one.
_MAX_ERROR_BODY = 256 * 1024
# The keys an error response may have at its top: the error, its type and code, a request id.
_BESIDE_AN_ERROR = frozenset({"error", "type", "error_type", "code", "status", "message", "Message", "__type",
                              "request_id", "requestId"})
_SHOWN_MESSAGE = 300

# (magic at offset 0, what the file is). gzip is no entry: the reader inflates it.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"PK\x03\x04", "a ZIP archive (or a file built on one: .docx, .xlsx, .jar, .whl, ...)"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"SQLite format 3\x00", "an SQLite database (a streamfold capture store is opened by its path: "
                             "`streamfold show FILE.db`, `streamfold captures --db FILE.db`)"),
    (b"\x7fELF", "an ELF executable or library"),
    (b"\xfe\xed\xfa\xce", "a Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", "a Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "a Mach-O universal binary (or a Java class file)"),
    (b"\x00asm\x01\x00\x00\x00", "a WebAssembly module"),
    (b"ID3", "an MP3 audio file"),
    (b"\xff\xfb", "an MP3 audio file"),
    (b"\xff\xf3", "an MP3 audio file"),
    (b"OggS", "an Ogg media file"),
    (b"fLaC", "a FLAC audio file"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
)


def binary_format(body: bytes) -> str | None:
    """What well-known file `body` is by its first bytes (\"a PDF document\"), or None."""
    for magic, what in _MAGIC:
        if body.startswith(magic):
            return what
    if body[4:8] == b"ftyp":
        return "an MP4 or QuickTime media file"
    if body[:4] == b"RIFF" and body[8:12] in (b"WAVE", b"WEBP", b"AVI "):
        return {b"WAVE": "a WAV audio file", b"WEBP": "a WebP image", b"AVI ": "an AVI video"}[body[8:12]]
    return None


def error_response(body: bytes) -> dict[str, Any] | None:
    """The error `body` holds when it is an API's error response, else None: `vendor` (the shape's),
    and the vendor's error `type`, `code` and `message` where it gives them."""
    head = body[:64].lstrip()
    if len(body) > _MAX_ERROR_BODY or head[:1] not in (b"{", b"["):
        return None
    try:
        value = loads(body.decode("utf-8", "replace"))
    except ValueError:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]  # Gemini answers a failed streamGenerateContent with a one-element array
    # An error response holds the error and little else (an id to quote to support): a reply that carries
    # an `error` beside its output (a Responses object cut by an error, an export) is a reply, not this.
    if not isinstance(value, dict) or set(value) - _BESIDE_AN_ERROR:
        return None
    error = value.get("error")
    if value.get("type") == "error" and isinstance(error, dict):
        return _error("Anthropic", error.get("type"), None, error.get("message"))
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        if isinstance(error.get("status"), str) and isinstance(error.get("code"), int):
            return _error("Google", error["status"], error["code"], error["message"])
        return _error("OpenAI-style", error.get("type"), error.get("code"), error["message"])
    if isinstance(error, str):
        return _error("plain", value.get("error_type"), value.get("code"), error)
    message = value.get("message", value.get("Message"))
    if isinstance(message, str) and set(value) <= {"message", "Message", "__type", "code"}:
        return _error("AWS-style", value.get("__type"), value.get("code"), message)
    return None


def describe_error(error: dict[str, Any]) -> str:
    """`error_response`'s finding in one line: "OpenAI-style error invalid_request_error / invalid_api_key: ..."."""
    named = [str(error[part]) for part in ("type", "code") if error.get(part) is not None]
    message = error.get("message")
    return f"{error['vendor']} error" + (f" {' / '.join(dict.fromkeys(named))}" if named else "") \
        + (f": {message}" if message else "")


def _error(vendor: str, kind: Any, code: Any, message: Any) -> dict[str, Any]:
    def shown(value: Any) -> str | int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else \
            value if isinstance(value, str) and value.strip() else None

    text = " ".join(message.split()) if isinstance(message, str) else None
    if text is not None and len(text) > _SHOWN_MESSAGE:
        text = text[: _SHOWN_MESSAGE - 1] + "…"
    return {"vendor": vendor, "type": shown(kind), "code": shown(code), "message": text or None}
