"""`indented_json` writes exactly what `json.dumps(value, indent=2, ensure_ascii=False)` writes."""

from __future__ import annotations

import enum
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pocket_assets.core.records import to_dict
from pocket_assets.export.indented_json import indented_json
from pocket_assets_tests.export.test_writer import document_text, make_chunks


class Level(enum.IntEnum):
    LOW = 1


def expected(value: Any, level: int = 0) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + " " * level)


# Every leaf JSON can hold: any text (non-ASCII, control characters, quotes, lone surrogates), any int,
# every float (signed zero, subnormals, NaN and the infinities JSON writes by name), and the subclasses
# `json.dumps` writes its own way.
_TEXT = st.text(st.characters(codec=None, categories=None))
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.sampled_from([Level.LOW, OrderedDict(b=1, a=[])]),
)
_KEYS = st.one_of(_TEXT, _TEXT, st.integers(), st.floats(), st.booleans(), st.none())
_VALUES = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(_TEXT, children, max_size=5),
        st.dictionaries(_KEYS, children, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=500)
@given(value=_VALUES, level=st.integers(min_value=0, max_value=8))
def test_any_json_value_is_written_as_json_dumps_writes_it(value: Any, level: int) -> None:
    assert indented_json(value, level) == expected(value, level)


def test_the_records_the_export_writes_are_written_as_json_dumps_writes_them() -> None:
    """The shapes of the corpus JSON and the redirect file: chunk rows (French text, nested features,
    lists of pages and headings, nulls), a metadata block with float shares and lists of dicts."""
    chunks = make_chunks("règles été.pdf", document_text(5, 3))
    rows = [to_dict(chunk) for chunk in chunks]
    assert rows and any(row["section_path"] for row in rows) and any(row["parent_id"] is None for row in rows)
    for row in rows:
        assert indented_json(row, 4) == expected(row, 4)
    metadata = {
        "corpus": "fr",
        "one_to_one_share": 0.9523809523809523,
        "min_overlap": 0.5,
        "previous_generated": None,
        "stale": [{"pdf": "fr/é.pdf", "source": "é.pdf", "reason": 'a "gate" failed\n'}],
        "left_out": [],
        "empty": {},
        "tiny": 5e-324,
        "huge": 1e308,
        "negative_zero": -0.0,
    }
    assert indented_json(metadata, 2) == expected(metadata, 2)
    assert indented_json({"redirects": dict.fromkeys(["a", "b"]), "history": rows[:2]}) == expected(
        {"redirects": dict.fromkeys(["a", "b"]), "history": rows[:2]}
    )


@pytest.mark.parametrize("value", [math.nan, {"x": [math.inf, -math.inf]}, {1: "one", None: [], False: {}, 2.5: 0}])
def test_values_json_writes_its_own_way(value: Any) -> None:
    """Non-finite floats by their JavaScript names; dict keys that are not text as `json.dumps` converts them."""
    assert indented_json(value, 3) == expected(value, 3)


def test_what_json_cannot_write_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented_json({"when": object()})
