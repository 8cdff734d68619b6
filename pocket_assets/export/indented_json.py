"""`json.dumps(value, indent=2, ensure_ascii=False)`, byte for byte, at a fraction of its cost.

With `indent`, Python's `json` encodes with its pure-Python encoder (the C one only runs
without indent): most of the CPU of writing the corpus JSON and the redirect file. The files'
layout is a promise (exports diff cleanly between builds), so they are written here the same
way, leaf by leaf with the C string encoder: plain dicts with string keys, lists and tuples are
laid out here; anything else (a dict with other keys, a subclass, a value JSON cannot hold) goes
to `json.dumps` itself.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C encoder of `ensure_ascii=False` when built (CPython)
from typing import Any, Callable

INDENT = "  "
_INFINITY = float("inf")


def indented_json(value: Any, level: int = 0) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, its lines after the first indented `level`
    more spaces: the text of `value` nested `level` spaces deep in a document written so."""
    return _encoded(value, "\n" + " " * level)


def _float(value: float) -> str:
    """As `json.encoder`'s `floatstr` (allow_nan): `repr`, and JavaScript's names of the non-finite."""
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


# Exact types only: a subclass (an IntEnum, a str subclass) is `json.dumps`'s to write.
_LEAVES: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _float,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _: "null",
}


def _encoded(value: Any, newline: str) -> str:
    """`value` whose first line continues a line, and whose later lines start `newline` (with its indent)."""
    leaf = _LEAVES.get(type(value))
    if leaf is not None:
        return leaf(value)
    kind = type(value)
    inner = newline + INDENT
    if kind is dict:
        if not value:
            return "{}"
        members = []
        for key, item in value.items():
            if type(key) is not str:
                return _by_json(value, newline)
            leaf = _LEAVES.get(type(item))
            members.append(f"{inner}{encode_basestring(key)}: {leaf(item) if leaf else _encoded(item, inner)}")
        return "{" + ",".join(members) + newline + "}"
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        items = []
        for item in value:
            leaf = _LEAVES.get(type(item))
            items.append(inner + (leaf(item) if leaf else _encoded(item, inner)))
        return "[" + ",".join(items) + newline + "]"
    return _by_json(value, newline)


def _by_json(value: Any, newline: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", newline)
