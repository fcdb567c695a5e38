"""Findings have a home: one registry of every code, typed, documented in the docs
from the registry, and messages a user can read without the internal trap ids."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from streamfold import fold
from streamfold._codes import CODES, Code, Kind, Severity, code_tables
from streamfold.dialects import SPECS

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(path for path in (ROOT / "tests" / "captures").rglob("*")
                  if path.is_file() and not path.name.endswith((".json", ".md")))
TRAP_ID = re.compile(r"\b[FORUAGB]\d{1,2}\b")


def test_the_code_type_and_the_registry_agree() -> None:
    # The codes any stream can have are the type; a vendor's own are in its dialect's spec.
    codes = (*get_args(Code), *(info.code for spec in SPECS for info in spec.codes))
    assert len(codes) == len(set(codes))
    assert set(codes) == set(CODES)
    for code, info in CODES.items():
        assert info.code == code
        assert isinstance(info.kind, Kind) and isinstance(info.severity, Severity)
        assert info.doc and not info.doc.endswith(".")


def test_the_findings_page_is_generated_from_the_registry() -> None:
    # The tables moved from README to the docs site, where docs/hooks.py puts code_tables() in place of
    # the marker at build time (tests/project/test_docs.py checks the built page lists every code).
    page = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert page.count("<!-- codes -->") == 1
    assert "| `invalid-json` |" not in page, "a hand-copied table would drift: keep only the marker"
    for info in CODES.values():
        assert f"| `{info.code}` |" in code_tables()


@pytest.mark.parametrize("path", CAPTURES + sorted((ROOT / "examples").glob("*.sse")),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_messages_cite_no_internal_trap_id(path: Path) -> None:
    result = fold(path.read_bytes())
    for finding in (*result.errors, *result.diagnostics):
        assert finding.code in CODES
        assert not TRAP_ID.search(finding.message), f"{finding.code}: {finding.message}"


# A report call's first argument, when it is a string literal: `.diagnostic("code", ...`, `.error("code", ...`.
_REPORTED = re.compile(r"""\.(?:diagnostic|error|note)\(\s*"([a-z0-9-]+)\"""")


def test_every_code_a_finding_is_made_with_is_registered() -> None:
    # Vendor codes are plain strings now (they live in their dialects' specs, so the `Code` type no longer
    # catches a typo): every code written in src must be in the registry, the core's or a spec's.
    for path in sorted((ROOT / "src" / "streamfold").rglob("*.py")):
        for code in _REPORTED.findall(path.read_text(encoding="utf-8")):
            assert code in CODES, f"{path.relative_to(ROOT)}: the code {code!r} is not registered"
