"""The streamed fields of built-in tool items in a Responses stream: a custom
tool's free-form input, an MCP call's arguments, the code interpreter's code,
an apply_patch operation's diff, a shell call's commands and output, image
generation partials (R5).

None of these is a function call the client runs from `tool_calls` (a custom
tool's input is free text, not JSON; the others are OpenAI's built-in tools),
so they stay out of the Result's tool calls, like Anthropic's server tools: the
item is a block of its own type, and the export holds it as the non-streaming
`Response.output` would. The rule for each is the one of every Responses
string (reference §4.2): the deltas APPEND into the item's field, the `.done`
event REPLACEs it, and the final item (`output_item.done`, the terminal
`response.output`) is the vendor's last word. The openai SDK's
ResponseStreamState (openai 3.57 `lib/streaming/responses/_responses.py`)
accumulates none of these deltas: it takes the item from `output_item.done`,
so the fold only matters for an item whose final form never came (a cut
stream), and a final item that disagrees with its deltas is reported.
"""

from __future__ import annotations

from typing import Any

from .._base import compact_json
from .events import ResponsesEvents
from .items import Item

__all__ = ["MAX_INDEX_GAP", "STREAMED_EVENTS", "BuiltinTools", "IndexedList", "Streamed", "field_value", "set_field"]

#: A field of an item: keys and list indexes from the item down (`("operation", "diff")`).
FieldPath = tuple[str | int, ...]

#: How far past the end of a list field (a shell call's `action.commands`, a shell output's `output`) a
#: `command_index` may point; the export fills the gap with nulls. An index further out (`command_index:
#: 4294967295`) is no position a real stream reaches by leaving a gap: its command goes at the list's end
#: instead (and a finding says so), so the slots an event makes stay bounded by this, whatever the index says.
MAX_INDEX_GAP = 16

#: Event type -> (the item type it streams into, its field, the event's key holding the piece or the final value,
#: True for a `.done` that REPLACEs). Sources: openai 3.57 `types/responses/response_*_event.py`; the apply_patch
#: events are not in the SDK's union yet: OpenRouter's SDK reference ("Incremental chunk of operation.diff for an
#: apply_patch_call. Matches OpenAI's streaming shape", ApplyPatchCallOperationDiffDeltaEvent / DoneEvent) and a
#: recorded gpt-5.1 stream (realworld case oai_resp_apply_patch).
STREAMED_EVENTS: dict[str, tuple[str, FieldPath, str, bool]] = {
    "response.custom_tool_call_input.delta": ("custom_tool_call", ("input",), "delta", False),
    "response.custom_tool_call_input.done": ("custom_tool_call", ("input",), "input", True),
    "response.mcp_call_arguments.delta": ("mcp_call", ("arguments",), "delta", False),
    "response.mcp_call_arguments.done": ("mcp_call", ("arguments",), "arguments", True),
    "response.code_interpreter_call_code.delta": ("code_interpreter_call", ("code",), "delta", False),
    "response.code_interpreter_call_code.done": ("code_interpreter_call", ("code",), "code", True),
    "response.apply_patch_call_operation_diff.delta": ("apply_patch_call", ("operation", "diff"), "delta", False),
    "response.apply_patch_call_operation_diff.done": ("apply_patch_call", ("operation", "diff"), "diff", True),
}
#: Shell commands are keyed by `command_index` inside `action.commands`; `.added` starts one with its first text.
_SHELL_COMMAND = {"response.shell_call_command.added": ("command", False),
                  "response.shell_call_command.delta": ("delta", False),
                  "response.shell_call_command.done": ("command", True)}


class Streamed:
    """One streamed string field of an item: its pieces, and the value a `.done` event gave."""

    __slots__ = ("asked", "deltas", "done", "last_frame", "pieces")

    def __init__(self, asked: FieldPath | None = None) -> None:
        self.pieces: list[str] = []
        self.deltas = 0
        self.done: str | None = None
        self.last_frame: int | None = None
        #: The path the events named, when an index too far out moved the field (`IndexedList`).
        self.asked = asked

    def value(self) -> str:
        """The field as the stream left it: the `.done` value, or else the join of the deltas."""
        return self.done if self.done is not None else "".join(self.pieces)


class IndexedList:
    """The positions the events of one list field asked for (`command_index`) and where they went:
    each at its own index, but an index more than `MAX_INDEX_GAP` past the list's end, which goes at
    the end (once: the later events with that index follow it there)."""

    __slots__ = ("end", "moved", "taken")

    def __init__(self, end: int) -> None:
        #: One past the highest position held.
        self.end = end
        #: index asked -> position given, for the indexes moved to the end.
        self.moved: dict[int, int] = {}
        #: The positions given to moved indexes (an index that asks for one later goes to the end too).
        self.taken: set[int] = set()

    def position(self, asked: int) -> tuple[int, bool]:
        """Where index `asked` goes, and whether that is the first time it is moved."""
        placed = self.moved.get(asked)
        if placed is not None:
            return placed, False
        if asked <= self.end + MAX_INDEX_GAP and asked not in self.taken:
            self.end = max(self.end, asked + 1)
            return asked, False
        placed = self.moved[asked] = self.end
        self.taken.add(placed)
        self.end += 1
        return placed, True


def field_value(item: Any, path: FieldPath) -> Any:
    """The value at `path` in a JSON item (None when a step is missing)."""
    for step in path:
        if type(step) is int:
            item = item[step] if type(item) is list and 0 <= step < len(item) else None
        else:
            item = item.get(step) if type(item) is dict else None
    return item


def set_field(item: dict[str, Any], path: FieldPath, value: Any) -> None:
    """Set `path` in a JSON item, making the objects and list slots on the way (a skeleton may lack them; a
    slot no event filled is null). Its list indexes are bounded (`IndexedList`), so are the slots made."""
    node: Any = item
    for position, step in enumerate(path):
        last = position == len(path) - 1
        if type(step) is int:
            if len(node) <= step:
                node.extend([None] * (step + 1 - len(node)))
            if last:
                node[step] = value
            else:
                if type(node[step]) is not (list if type(path[position + 1]) is int else dict):
                    node[step] = [] if type(path[position + 1]) is int else {}
                node = node[step]
        elif last:
            node[step] = value
        else:
            want = list if type(path[position + 1]) is int else dict
            if type(node.get(step)) is not want:
                node[step] = [] if want is list else {}
            node = node[step]


class BuiltinTools(ResponsesEvents):
    """The handlers of the built-in tool events (`OpenAIResponses` registers them with `builtin_handlers`)."""

    def builtin_handlers(self) -> dict[str, Any]:
        """Event type -> handler, for the events of this module."""
        handlers: dict[str, Any] = dict.fromkeys(STREAMED_EVENTS, self._streamed_event)
        handlers.update(dict.fromkeys(_SHELL_COMMAND, self._shell_command))
        handlers["response.shell_call_output_content.delta"] = self._shell_output_delta
        handlers["response.shell_call_output_content.done"] = self._shell_output_done
        handlers["response.image_generation_call.partial_image"] = self._partial_image
        return handlers

    def _field(self, item: Item, path: FieldPath, asked: FieldPath | None = None) -> Streamed:
        fields = item.streamed
        if fields is None:
            fields = item.streamed = {}
        held = fields.get(path)
        if held is None:
            held = fields[path] = Streamed(asked)
        return held

    def _indexed(self, item: Item, path: FieldPath, at: int, frame: int, event: str) -> FieldPath:
        """`path` with its list index (at position `at`) bounded: an index far past the list's end
        goes at the end, with a finding (the export would otherwise make that many slots)."""
        lists = item.lists
        if lists is None:
            lists = item.lists = {}
        prefix = path[:at]
        slots = lists.get(prefix)
        if slots is None:
            held = field_value(item.skeleton, prefix)
            slots = lists[prefix] = IndexedList(len(held) if type(held) is list else 0)
        asked = path[at]
        assert type(asked) is int
        placed, moved = slots.position(asked)
        if moved:
            where = ".".join(str(step) for step in prefix)
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a `{event}` event of the {item.type} in output item {item.index} has `command_index` {asked}, far "
                f"past the end of its `{where}` ({placed} entries so far); its value was put at index {placed} "
                f"instead of leaving a gap of nulls. A client that fills the gap allocates {asked} entries",
                output_index=item.index, index=asked, placed=placed)
        return path if placed == asked else (*prefix, placed, *path[at + 1:])

    def _fold_piece(self, item: Item, path: FieldPath, piece: object, done: bool, frame: int, event: str,
                    indexed: int | None = None) -> None:
        """Fold a piece into the field at `path`; `indexed` is the position of a list index in it."""
        if type(piece) is not str:
            self.report.diagnostic(
                "unexpected-payload", frame, f"a `{event}` event without a string value; ignored",
                once=("builtin-piece", event))
            return
        asked = None
        if indexed is not None:
            asked, path = path, self._indexed(item, path, indexed, frame, event)
        held = self._field(item, path, asked if asked != path else None)
        held.last_frame = frame
        if not done:
            if piece:
                held.pieces.append(piece)
                held.deltas += 1
            return
        streamed = "".join(held.pieces)
        if held.deltas and not piece and streamed:
            # An empty final value next to streamed text is a gateway dropping it (as for text parts): kept.
            self._disagrees(item, path, streamed, piece, f"`{event}`", frame, kept="deltas")
            return
        if held.deltas and piece != streamed:
            self._disagrees(item, path, streamed, piece, f"`{event}`", frame)
        held.done = piece  # REPLACE: the `.done` value is the vendor's final word

    def _disagrees(self, item: Item, path: FieldPath, streamed: str, final: str, source: str, frame: int,
                   kept: str = "done") -> None:
        where = ".".join(str(step) for step in path)
        position = next((i for i, (a, b) in enumerate(zip(streamed, final)) if a != b), min(len(streamed), len(final)))
        self.report.diagnostic(
            "done-mismatch", frame,
            f"{source} gives `{where}` of the {item.type} in output item {item.index} as {len(final)} characters, "
            f"its deltas built {len(streamed)}; they differ from character {position} (deltas "
            f"{compact_json(streamed[position:position + 40], 60)}, final "
            f"{compact_json(final[position:position + 40], 60)}). "
            + ("The final value is the result; a client that only appends deltas has the other one" if kept == "done"
               else "An empty final value next to streamed text is a gateway dropping it, so the deltas are kept"),
            once=(item.index, path, source), source=source, kept=kept, position=position)

    def _builtin_item(self, value: dict[str, Any], kind: str, frame: int) -> Item | None:
        item = self._item(value, frame, kind, str(value.get("type")))
        if item is not None and item.type != kind:
            self.report.diagnostic(
                "unexpected-payload", frame,
                f"a `{value.get('type')}` event for output item {item.index}, which is a {item.type}, not a {kind}; "
                "ignored", once=("builtin-misfit", item.index, kind), output_index=item.index)
            return None
        return item

    def _streamed_event(self, value: dict[str, Any], frame: int) -> None:
        event = str(value.get("type"))
        kind, path, key, done = STREAMED_EVENTS[event]
        item = self._builtin_item(value, kind, frame)
        if item is not None:
            self._fold_piece(item, path, value.get(key), done, frame, event)

    def _shell_command(self, value: dict[str, Any], frame: int) -> None:
        event = str(value.get("type"))
        key, done = _SHELL_COMMAND[event]
        index = value.get("command_index")
        item = self._builtin_item(value, "shell_call", frame)
        if item is None:
            return
        if type(index) is not int or index < 0:
            self.report.diagnostic("unexpected-payload", frame, f"a `{event}` event without a `command_index`; "
                                   "ignored", once=("command_index",))
            return
        self._fold_piece(item, ("action", "commands", index), value.get(key), done, frame, event, indexed=2)

    def _shell_output_delta(self, value: dict[str, Any], frame: int) -> None:
        """`delta` is an object: `stdout` and `stderr` APPEND separately, per `command_index`."""
        index, delta = value.get("command_index"), value.get("delta")
        item = self._builtin_item(value, "shell_call_output", frame)
        if item is None or type(index) is not int or index < 0 or type(delta) is not dict:
            return
        for stream in ("stdout", "stderr"):
            piece = delta.get(stream)
            if piece is not None:
                self._fold_piece(item, ("output", index, stream), piece, False, frame, str(value.get("type")),
                                 indexed=1)

    def _shell_output_done(self, value: dict[str, Any], frame: int) -> None:
        """`output` is the list of output contents of the command at `command_index`: with one entry, its
        `stdout` and `stderr` REPLACE what the deltas built (its `outcome` comes with the final item)."""
        index, output = value.get("command_index"), value.get("output")
        item = self._builtin_item(value, "shell_call_output", frame)
        if item is None or type(index) is not int or index < 0 or type(output) is not list or len(output) != 1:
            return
        (final,) = output
        if type(final) is dict:
            for stream in ("stdout", "stderr"):
                if type(final.get(stream)) is str:
                    self._fold_piece(item, ("output", index, stream), final[stream], True, frame,
                                     str(value.get("type")), indexed=1)

    def _partial_image(self, value: dict[str, Any], frame: int) -> None:
        """WHOLE per `partial_image_index`: a preview, not the image; the final image is the `result` of the
        item from `output_item.done`, so a partial is never exported as the result."""
        item = self._builtin_item(value, "image_generation_call", frame)
        if item is not None:
            item.partial_images += 1

    def _reconcile(self, item: Item, final: dict[str, Any], frame: int, source: str) -> None:
        super()._reconcile(item, final, frame, source)
        for path, held in (item.streamed or {}).items():
            value = field_value(final, held.asked or path)
            streamed = held.value()
            if type(value) is str and value != streamed and streamed:
                self._disagrees(item, path, streamed, value, source, frame)

    def builtin_last_frame(self, item: Item) -> int | None:
        """The last frame that streamed into one of the item's fields (None when none did)."""
        return max((held.last_frame for held in (item.streamed or {}).values() if held.last_frame is not None),
                   default=None)
