"""LangChain's merge of message chunks (`langchain_core.messages.ai.add_ai_message_chunks` and the
`merge_dicts` / `merge_lists` it calls), as JSON values, without raising: the merged message of a
LangGraph stream is the one `AIMessageChunk` addition gives (tests/sdk/test_sdk_langgraph.py holds
them equal on every capture).

- `content`: strings concatenate; a list merges by each block's `index` (blocks of one index merged as
  dicts), a string then a list puts the string first;
- `tool_call_chunks`: merged by `index` when their ids agree (None or "" agrees with any), else kept apart;
- `additional_kwargs`, `response_metadata`: merged as dicts (strings concatenate, but an equal `id`,
  `output_version` or `model_provider` is kept once; numbers add, but `index`, `created` and `timestamp`
  are the last);
- `usage_metadata`: summed, key by key (nested details too);
- `id`: the provider's id when any chunk has one, else the first `lc_run-` one.

Where LangChain raises (a key whose value changes its JSON type), the earlier value is kept and the
caller is told (`MergeConflictError`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LC_PREFIXES", "MergeConflictError", "merge_chunk", "merge_dicts", "merge_lists"]

#: Ids LangChain makes itself (`lc_run-` for a run's chunks, `lc_` otherwise): a provider's id wins over them.
LC_PREFIXES = ("lc_run-", "lc_")
_KEPT_ONCE = frozenset({"id", "output_version", "model_provider"})
_LAST_WINS = frozenset({"index", "created", "timestamp"})
#: The JSON types an `AIMessageChunk`'s merged fields may have (absent is None).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "content": (str, list, type(None)), "additional_kwargs": (dict, type(None)),
    "response_metadata": (dict, type(None)), "tool_call_chunks": (list, type(None)),
    "usage_metadata": (dict, type(None))}


class MergeConflictError(ValueError):
    """Two chunks disagree on a key's JSON type: LangChain raises; the fold keeps the first."""


def merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    merged = dict(left)
    for key, value in right.items():
        if key not in merged or (value is not None and merged[key] is None):
            merged[key] = value
        elif value is None:
            continue
        elif type(merged[key]) is not type(value):
            raise MergeConflictError(f"`{key}` was {type(merged[key]).__name__}, then {type(value).__name__}")
        elif type(value) is str:
            if (key == "index" and merged[key].startswith("lc_")) or (key in _KEPT_ONCE and merged[key] == value):
                continue
            merged[key] += value
        elif type(value) is dict:
            merged[key] = merge_dicts(merged[key], value)
        elif type(value) is list:
            merged[key] = merge_lists(merged[key], value)
        elif merged[key] == value:
            continue
        elif type(value) is int:
            merged[key] = value if key in _LAST_WINS else merged[key] + value
        else:
            raise MergeConflictError(f"`{key}` holds {type(value).__name__}s that differ")
    return merged


def _indexed(element: object) -> bool:
    if type(element) is not dict or "index" not in element:
        return False
    index = element["index"]
    return type(index) is int or (type(index) is str and index.startswith("lc_"))


def merge_lists(left: list[Any], right: list[Any]) -> list[Any]:
    merged = list(left)
    for element in right:
        if not _indexed(element):
            merged.append(element)
            continue
        position = next((at for at, earlier in enumerate(merged) if _indexed(earlier)
                         and earlier["index"] == element["index"]
                         and (earlier.get("id") in (None, "") or element.get("id") in (None, "")
                              or earlier.get("id") == element.get("id"))), None)
        if position is None:
            merged.append(element)
        else:
            merged[position] = merge_dicts(merged[position], {k: v for k, v in element.items() if k != "type"})
    return merged


def merge_content(left: Any, right: Any) -> Any:
    if type(left) is str:
        return left + right if type(right) is str else [left, *right] if type(right) is list else left
    if type(right) is list:
        return merge_lists(left, right)
    if left and type(left[-1]) is str and type(right) is str:
        return [*left[:-1], left[-1] + right]
    return [*left, right] if right != "" and left else left


def _add_usage(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    out = dict(left)
    for key, value in right.items():
        if type(value) is dict and type(out.get(key)) is dict:
            out[key] = _add_usage(out[key], value)
        elif type(value) is int and type(out.get(key)) is int:
            out[key] += value
        elif key not in out:
            out[key] = value
    return out


def _rank(chunk_id: object) -> int:
    """LangChain's preference among a message's ids: a provider's (2), `lc_run-` (1), other `lc_` (0)."""
    if type(chunk_id) is not str or not chunk_id:
        return -1
    if not chunk_id.startswith(LC_PREFIXES):
        return 2
    return 1 if chunk_id.startswith("lc_run-") else 0


def merge_chunk(merged: dict[str, Any], chunk: dict[str, Any]) -> dict[str, Any]:
    """`merged` (a message as merged so far) plus one more chunk, as `AIMessageChunk.__add__` adds them. A
    chunk LangChain would not take as an `AIMessageChunk` (a field of another JSON type) is a conflict."""
    for key, kinds in _FIELD_TYPES.items():
        if type(chunk.get(key)) not in kinds:
            raise MergeConflictError(f"`{key}` is {type(chunk.get(key)).__name__}")
    if not all(type(call) is dict for call in chunk.get("tool_call_chunks") or ()):
        raise MergeConflictError("a tool call chunk is no object")
    out = dict(merged)
    out["content"] = merge_content(merged.get("content", ""), chunk.get("content", ""))
    for key in ("additional_kwargs", "response_metadata"):
        out[key] = merge_dicts(merged.get(key) or {}, chunk.get(key) or {})
    calls = merge_lists(merged.get("tool_call_chunks") or [], chunk.get("tool_call_chunks") or [])
    out["tool_call_chunks"] = [{"name": call.get("name"), "args": call.get("args"), "id": call.get("id"),
                                "index": call.get("index"), "type": "tool_call_chunk"} for call in calls]
    left, right = merged.get("usage_metadata"), chunk.get("usage_metadata")
    if type(left) is dict and type(right) is dict:
        out["usage_metadata"] = _add_usage(left, right)
    elif type(right) is dict:
        out["usage_metadata"] = right
    if _rank(chunk.get("id")) > _rank(merged.get("id")):
        out["id"] = chunk["id"]
    if chunk.get("chunk_position") == "last":
        out["chunk_position"] = "last"
    return out
