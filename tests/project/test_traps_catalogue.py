"""docs/traps.md explains every trap id the code cites.

Comments, docstrings, messages and capture READMEs under src/streamfold and
tests cite trap ids (`O8`, `A1`, `B8`: a family letter F, O, R, U, A, G or B
and a number) to say why code exists. The catalogue that defines them lives
in the repository, in docs/traps.md, one `<a id="O8"></a>` anchor and
`### O8: title` heading per trap. These tests hold the two together:

- every id cited in a .py or .md file resolves to an anchor of the catalogue;
- every anchor has its heading and a body that says what happens, what
  streamfold does and where it was reported;
- every token that looks like a trap id is either cited as one (see
  `CITATION_BEFORE` / `CITATION_AFTER`) or listed in `NOT_TRAP_IDS`.

Nothing here imports streamfold or reads anything outside the repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "docs" / "traps.md"
SCANNED = (ROOT / "src" / "streamfold", ROOT / "tests")
SUFFIXES = (".py", ".md")
THIS_FILE = Path(__file__).resolve()

#: One trap id: a family letter and 1-99 (no trap is numbered 0).
TRAP_ID = r"[FORUAGB][1-9][0-9]?"
#: Separators inside a run of ids: a range (`O4-O7`, `F1..F11`, `O4 to O8`) or a list
#: (`A2, A3`, `A1-A6 and U2`, `G1/U1`).
_RANGE = r"(?:-|\u2013|\.\.|\s+to\s+)"
_LIST = r"(?:,\s*|\s+and\s+|/)"
#: A run of ids as written: one id, or several joined by range and list separators.
#: Not inside a word: `U1` in `_U1`, `B2` in `xB2y` (base64) or `0xF1` does not count.
RUN = re.compile(rf"(?<![\w.]){TRAP_ID}(?:(?:{_RANGE}|{_LIST}){TRAP_ID})*(?![\w])")
_PARTS = re.compile(rf"({TRAP_ID})|({_RANGE})|({_LIST})")

#: A run is a citation when the text just before it ends like one of these...
CITATION_BEFORE = re.compile(
    r"(?:"
    r"\(\s*(?:\+\s*)?"                        # (O8  (A2, A3)  (+ O9
    r"|\b(?:[Tt]raps?|[Tt]rap ids?)\s+\(?"    # trap O8, traps O1-O16, Trap ids (F1..F11)
    r"|§6\s+"                                 # §6 B6, §6 R1-R4
    r"|§[0-9.]+(?:\s+(?:\"[^\"]*\"|\w+))?\s*,\s*"  # (reference §4.7, B1, F10); §4.2 "Transport", R4
    rf"|{TRAP_ID}[)\]]?\s*[,;/]\s*"           # a list going on after a citation: (A4), U2
    r"|(?:^|\s)(?:#|//)\s*(?:--\s*)?"         # a comment that starts with it: # B5 ..., # -- A1 ...
    r"|^\s*#\s*--\s.*"                         # anywhere in a section comment: # -- tool input: A2, A3 ---
    r"|\|\s*"                                 # a Markdown table cell that starts with it: | B6 special
    r"|;\s+"                                  # a further point of a list: ...; O2 async-filter
    r")$")
#: ...or when the text just after it starts like one of these...
CITATION_AFTER = re.compile(
    r"^(?:"
    r"\s*[:)]"                                # O8:  A1)
    r"|\s+traps?\b"                           # the F4 and F3 traps
    r"|\s+test\b"                             # the F9 test below
    r")")
#: ...or when it is a whole string literal ("B8" in finding.message).
QUOTES = ('"', "'")

#: Tokens shaped like a trap id that are not one: (file name, text on the token's line).
#: Every token on such a line is taken as not a trap id, whatever its context says.
#: Keep this list short and exact.
NOT_TRAP_IDS = (
    # Two text parts "A" and "B", each streamed in runs 1 and 2.
    ("test_dialect_openai_responses.py", 'delta("A1 ", 0), delta("B1 ", 1), delta("A2", 0), delta("B2", 1)'),
    ("test_dialect_openai_responses.py", 'text_done("B1 B2", 1)'),
    ("test_dialect_openai_responses.py", "content: A1 B1 A2 B2"),
    ("test_dialect_openai_responses.py", '"AXB1 B2"'),
    ("test_dialect_openai_responses.py", "# AX (done), B1 , B2"),
    # Frame labels of two captures A and B in `streamfold diff` output.
    ("test_compare_cli.py", "changed frame A1 ≠ B1"),
)


@dataclass(frozen=True)
class Hit:
    path: Path
    line: int
    text: str  # the run as written: "O8", "O4-O7", "G1/U1"
    ids: tuple[str, ...]  # the ids it stands for, ranges expanded
    cited: bool  # written as a citation, and not on a NOT_TRAP_IDS line
    listed: bool  # on a NOT_TRAP_IDS line
    problem: str | None = None  # why `ids` could not be worked out (a range like `O7-O4`)

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}:{self.line}"


def expand(run: str) -> tuple[str, ...]:
    """The ids a run stands for: `O4-O7` -> O4 O5 O6 O7; `A1-A6 and U2` -> A1..A6 U2."""
    ids: list[str] = []
    pending_range = False
    for match in _PARTS.finditer(run):
        trap, is_range, _ = match.groups()
        if is_range is not None:
            pending_range = True
            continue
        if trap is None:
            continue
        if pending_range:
            pending_range = False
            first = ids[-1]
            if first[0] != trap[0] or int(first[1:]) >= int(trap[1:]):
                raise ValueError(f"{run!r}: {first}-{trap} is not a range within one family")
            ids.extend(f"{trap[0]}{number}" for number in range(int(first[1:]) + 1, int(trap[1:]) + 1))
        else:
            ids.append(trap)
    return tuple(ids)


def scanned_files(roots: Iterable[Path] = SCANNED) -> Iterator[Path]:
    for root in roots:
        for path in sorted(root.rglob("*")):
            # Installed npm packages (tests/node/node_modules, gitignored) are other projects' text.
            if (path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts
                    and "node_modules" not in path.parts and path.resolve() != THIS_FILE):
                yield path


def is_citation(before: str, after: str) -> bool:
    """Does a run with this text before and after it on its line read as a trap citation?"""
    if CITATION_BEFORE.search(before) or CITATION_AFTER.search(after):
        return True
    return before[-1:] in QUOTES and after[:1] == before[-1:]


def hits(roots: Iterable[Path] = SCANNED) -> list[Hit]:
    """Every run of trap-shaped tokens in the scanned files, each said to be cited or not."""
    found: list[Hit] = []
    for path in scanned_files(roots):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            listed = any(path.name == name and text in line for name, text in NOT_TRAP_IDS)
            for match in RUN.finditer(line):
                cited = not listed and is_citation(line[: match.start()], line[match.end() :])
                try:
                    ids, problem = expand(match.group()), None
                except ValueError as exc:
                    ids, problem = (), str(exc)
                found.append(Hit(path, number, match.group(), ids, cited, listed, problem))
    return found


def catalogue_anchors(text: str) -> list[str]:
    return re.findall(r'^<a id="([^"]+)"></a>\s*$', text, flags=re.MULTILINE)


def catalogue_entries(text: str) -> dict[str, tuple[str, str]]:
    """anchor id -> (the heading line after it, the body up to the next anchor or section)."""
    entries: dict[str, tuple[str, str]] = {}
    lines = text.splitlines()
    for position, line in enumerate(lines):
        match = re.fullmatch(r'<a id="([^"]+)"></a>\s*', line)
        if match is None:
            continue
        rest = lines[position + 1 :]
        while rest and not rest[0].strip():
            rest = rest[1:]
        heading = rest[0] if rest else ""
        body: list[str] = []
        for following in rest[1:]:
            if following.startswith("<a id=") or re.match(r"#{1,3} ", following):
                break
            body.append(following)
        entries[match.group(1)] = (heading, "\n".join(body))
    return entries


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


# -- the tests ------------------------------------------------------------------


def test_every_cited_trap_id_is_in_the_catalogue() -> None:
    anchors = set(catalogue_anchors(CATALOGUE.read_text(encoding="utf-8")))
    cited = [hit for hit in hits() if hit.cited]
    assert cited, "no trap id found in the code: the scan is broken"
    malformed = [f"{hit.where()}: {hit.problem}" for hit in cited if hit.problem]
    assert not malformed, "trap id ranges that do not say which ids they mean:\n  " + "\n  ".join(malformed)
    unknown = sorted({f"{trap} ({hit.where()}: {hit.text!r})"
                      for hit in cited for trap in hit.ids if trap not in anchors})
    assert not unknown, ("trap ids cited in the code that docs/traps.md does not define (add an entry "
                         "with its `<a id=...></a>` anchor, or fix the citation):\n  " + "\n  ".join(unknown))


def test_every_trap_shaped_token_is_a_citation_or_listed_as_not_one() -> None:
    lines: dict[Path, list[str]] = {}
    unclear = []
    for hit in hits():
        if not hit.cited and not hit.listed:
            text = lines.setdefault(hit.path, hit.path.read_text(encoding="utf-8").splitlines())[hit.line - 1]
            unclear.append(f"{hit.where()}: {hit.text!r} in {text.strip()!r}")
    assert not unclear, (
        "tokens shaped like trap ids in a context the scan does not read as a citation. Cite a trap as "
        "`(O8)`, `O8:` or `trap O8`; or, if it is not a trap id, add it to NOT_TRAP_IDS:\n  "
        + "\n  ".join(unclear))


def test_every_catalogue_anchor_has_a_heading_and_a_body() -> None:
    text = CATALOGUE.read_text(encoding="utf-8")
    anchors = catalogue_anchors(text)
    assert len(anchors) == len(set(anchors)), "an anchor appears twice in docs/traps.md"
    entries = catalogue_entries(text)
    assert list(entries) == anchors
    problems = [f"{heading!r} has no `<a id=...></a>` anchor before it"
                for heading in re.findall(rf"^### {TRAP_ID}:.*$", text, flags=re.MULTILINE)
                if heading not in {entry[0] for entry in entries.values()}]
    for anchor, (heading, body) in entries.items():
        if not re.fullmatch(rf"### {re.escape(anchor)}: \S.*", heading):
            problems.append(f"{anchor}: the line after its anchor is {heading!r}, not `### {anchor}: <title>`")
        if not body.strip():
            problems.append(f"{anchor}: the entry has no body")
            continue
        for label in ("**What happens.**", "**What streamfold does.**", "**Reported in.**"):
            part = body.partition(label)[2].split("**", 1)[0] if label in body else ""
            if not part.strip():
                problems.append(f"{anchor}: no {label} paragraph, or an empty one")
    assert not problems, "docs/traps.md:\n  " + "\n  ".join(problems)


def test_catalogue_links_resolve() -> None:
    text = CATALOGUE.read_text(encoding="utf-8")
    targets = set(catalogue_anchors(text))
    targets |= {_slug(heading) for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}
    broken = sorted({link for link in re.findall(r"\]\(#([^)]+)\)", text) if link not in targets})
    assert not broken, f"links in docs/traps.md to anchors it does not have: {broken}"


def test_ranges_and_lists_are_expanded() -> None:
    assert expand("O4-O7") == ("O4", "O5", "O6", "O7")
    assert expand("F1..F11") == tuple(f"F{n}" for n in range(1, 12))
    assert expand("A1-A6 and U2") == ("A1", "A2", "A3", "A4", "A5", "A6", "U2")
    assert expand("G1/U1") == ("G1", "U1")
    assert expand("O4 to O8") == ("O4", "O5", "O6", "O7", "O8")
    for bad in ("O7-O4", "O4-A6"):
        with pytest.raises(ValueError):
            expand(bad)
    assert [match.group() for match in RUN.finditer("x_U1 0xF1 +B2y (O8) O4-O7, A1/A2")] == ["O8", "O4-O7, A1/A2"]
