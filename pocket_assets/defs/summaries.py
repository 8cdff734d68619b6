"""Run-level metadata made from the per-PDF numbers (the UI plots numbers, not strings)."""

from __future__ import annotations

from typing import Any, Callable

from pocket_assets.defs.per_pdf import Outcome


def sum_of(*names: str) -> Callable[[list[Outcome]], dict[str, Any]]:
    """Totals over the PDFs that succeeded, under `total_<name>`."""

    def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
        return {f"total_{name}": sum(int(o.metadata.get(name, 0)) for o in outcomes) for name in names}

    return summarize
