"""The captures of tests/captures as the replay server reads them, folded once, for the replay tests.
Not a test module."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from streamfold.replay import Fault, Plan, Recording, parse_fault, plan_response, read_sources, reference
from streamfold.replay.faults import refusal

__all__ = ["CAPTURES", "by_name", "fold_plan", "recording", "recordings", "served", "usable"]

CAPTURES = Path(__file__).resolve().parent / "captures"


@cache
def recordings() -> tuple[Recording, ...]:
    """Every capture of tests/captures (all dialects), as `streamfold serve tests/captures` names them."""
    return tuple(read_sources([str(CAPTURES)]))


def recording(source: Path | str) -> Recording:
    """The one capture a SOURCE (a file, `DB.sqlite#ID`) names."""
    (found,) = read_sources([str(source)])
    return found


def by_name(name: str) -> Recording:
    return next(recording for recording in recordings() if recording.name == name)


def usable(recording: Recording, faults: list[Fault]) -> bool:
    """Whether the server would serve `recording` with `faults` (else it refuses them at startup)."""
    return refusal(faults, transport=recording.transport, dialect=recording.dialect,
                   frames=len(recording.frames)) is None


def fold_plan(plan: Plan) -> dict[str, Any]:
    """The reference of a plan's bytes, as the server computes it for a request."""
    return reference(plan.body, plan.status, plan.headers)


def served(recording: Recording, *specs: str, **options: Any) -> tuple[Plan, dict[str, Any]]:
    """The plan for `recording` with the faults `specs`, and the reference of its bytes."""
    plan = plan_response(recording, [parse_fault(spec) for spec in specs], **options)
    return plan, fold_plan(plan)
