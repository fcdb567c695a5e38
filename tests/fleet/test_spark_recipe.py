"""The Spark recipe of docs/fleet-engines.md: its function, taken from the page, called as Spark's
`mapInArrow` calls it (an iterator of Arrow record batches with the DataFrame's columns, Spark's types), folds
what `fold_batch` folds. pyspark is not needed: `mapInArrow` only hands the batches over."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

from streamfold.fleet.arrow import folded_schema, split  # noqa: E402
from streamfold.fleet.batch import INPUT_SCHEMA, fold_batch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fleet-engines.md"


def recipe(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The page's runnable block, run from the repository (its example reads tests/inputs/)."""
    block = re.search(r"<!-- runnable: python -->\n```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"),
                      re.MULTILINE | re.DOTALL)
    assert block is not None
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {"__name__": "recipe"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block.group(1), str(PAGE), "exec"), namespace)
    return namespace


def test_the_recipe_folds_spark_batches_as_fold_batch_does(monkeypatch: pytest.MonkeyPatch) -> None:
    fold_batches = recipe(monkeypatch)["fold_batches"]
    bodies = [path.read_bytes() for path in sorted((ROOT / "tests" / "captures").glob("*/*.sse"))[:40]]
    bodies += [b"data: {\"choices\": [{\"delta\": {\"content\": \"cut", b"\xff\xfe\x00", b""]
    ids = [f"c{index}" for index in range(len(bodies))]
    # What Spark sends: its own types (binary, not large_binary), only the DataFrame's columns, in batches
    # of its choosing, one of them empty.
    spark = pa.table({"capture_id": ids, "kind": ["body"] * len(ids), "data": pa.array(bodies, pa.binary())})
    batches = [*spark.slice(0, 17).to_batches(), *spark.slice(17, 0).to_batches(), *spark.slice(17).to_batches()]

    out = list(fold_batches(iter(batches)))

    folded_type = folded_schema(storage=True).remove_metadata()
    assert all(batch.schema == folded_type for batch in out)
    expected = fold_batch(pa.Table.from_pylist(
        [{"capture_id": capture_id, "kind": "body", "data": body} for capture_id, body in zip(ids, bodies)],
        schema=INPUT_SCHEMA))
    got = pa.Table.from_batches(out, schema=folded_type)
    assert got.to_pylist() == expected.cast(folded_type).to_pylist()
    assert {"complete", "upstream-cut", "not-a-stream"} <= set(got.column("outcome_class").to_pylist())
    # The flat tables, as a Spark job's `explode` makes them, are `split`'s.
    assert {name: table.num_rows for name, table in split(got).items()} == \
           {name: table.num_rows for name, table in split(expected).items()}
