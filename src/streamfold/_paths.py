"""Where the merger keeps each value: the canonical paths as types, so a misspelt field is a type
error, not a silent private path that the result builder never reads. (`merge` re-exports them.)"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["BlockPath", "ChoiceField", "ChoicePath", "DialectPath", "Path", "ToolCallPath", "ToolField", "ToolKey",
           "ToolPath", "TopField", "TopPath"]

TopField: TypeAlias = Literal["id", "model", "created", "usage"]
ChoiceField: TypeAlias = Literal["role", "content", "reasoning", "refusal", "finish_reason", "error"]
ToolField: TypeAlias = Literal["id", "name", "arguments"]
#: A tool call's key within its choice: the order a dialect first saw it in, or the vendor's index.
ToolKey: TypeAlias = int

TopPath: TypeAlias = tuple[TopField]
ChoicePath: TypeAlias = tuple[int, ChoiceField]
ToolCallPath: TypeAlias = tuple[int, Literal["tool"], ToolKey]
ToolPath: TypeAlias = tuple[int, Literal["tool"], ToolKey, ToolField]
BlockPath: TypeAlias = tuple[int, Literal["block"], int]
#: A value a dialect keeps for its own native snapshot; the result builder never reads it.
DialectPath: TypeAlias = tuple[Literal["dialect"], str]
Path: TypeAlias = TopPath | ChoicePath | ToolPath | BlockPath | DialectPath
