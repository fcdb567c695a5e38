"""The mutation fuzzer (tests/mutations.py) on each dialect issue 26 added, from its own captures only: the
whole-corpus fuzzer draws one of theirs in fifty. Each mutated capture folds to a value (never raises, its
JSON strict and read back the same, its export made or refused) and to the same Result however its bytes
arrive, in every lane the capture lists too."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feeding import fold_in_random_chunks
from mutations import CAPTURES, FUZZ, check_result, mutated
from streamfold import fold

DIALECTS = ("adk", "anthropic-agents", "gemini-live", "langgraph", "mistral-conversations", "openai-responses-agents")


def own(dialect: str) -> dict[str, bytes]:
    return {name: data for name, data in CAPTURES.items() if name.startswith(f"tests/captures/{dialect}/")}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_mutated_capture_of_theirs_folds_to_a_value_however_it_arrives(dialect: str) -> None:
    sources = own(dialect)
    assert sources, f"no captures of {dialect}"

    @settings(FUZZ, max_examples=FUZZ.max_examples // 3,
              suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.large_base_example])
    @given(data=mutated(sources=sources), rng=st.randoms(use_true_random=False))
    def folds(data: bytes, rng: random.Random) -> None:
        result = fold(data)
        check_result(result)
        assert fold_in_random_chunks(data, rng) == result
        for lane in result.lanes[:2]:
            check_result(fold(data, lane=lane.id))

    folds()
