"""One self-contained HTML page per run: which partitions passed, and for those that did not, why.

GE Data Docs would need a file-backed GE context and describe only the GE suite;
this page shows all three gates (expectations, schema, coverage) side by side and
opens with no server, so a maintainer can click it from the asset's metadata.
Deterministic: no timestamps, partitions in the order given.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Sequence

from pocket_assets.core.atomic import write_bytes_atomic
from pocket_assets.core.quality.gate_results import GateReport, GateResult

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.passed { color: #17702b; font-weight: bold; }
.failed { color: #b3261e; font-weight: bold; }
code { font-size: 0.9em; }
summary { cursor: pointer; font-size: 1.1rem; margin: 0.4rem 0; }
"""


def render_report_html(reports: Sequence[GateReport], title: str) -> str:
    failed = sum(not report.passed for report in reports)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{len(reports)} partitions, {len(reports) - failed} passed, {failed} failed.</p>",
        _summary_table(reports),
    ]
    parts.extend(_partition_section(index, report) for index, report in enumerate(reports))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report_html(target: Path, reports: Sequence[GateReport], title: str) -> Path:
    """Atomic, so a link in the metadata never points at half a page."""
    write_bytes_atomic(target, render_report_html(reports, title).encode("utf-8"))
    return target


def _status(passed: bool) -> str:
    return '<span class="passed">passed</span>' if passed else '<span class="failed">FAILED</span>'


def _summary_table(reports: Sequence[GateReport]) -> str:
    rows = [
        f'<tr><td><a href="#{_anchor(index)}">{escape(report.partition_key)}</a></td>'
        f"<td>{_status(report.passed)}</td><td>{report.chunk_count}</td>"
        f"<td>{escape(', '.join(sorted({failure.gate for failure in report.failures()})))}</td></tr>"
        for index, report in enumerate(reports)
    ]
    header = "<tr><th>partition</th><th>status</th><th>chunks</th><th>failed gates</th></tr>"
    return f"<table>{header}{''.join(rows)}</table>"


def _anchor(index: int) -> str:
    return f"partition-{index}"


def _partition_section(index: int, report: GateReport) -> str:
    # Failed partitions open by default: they are what the reader came for.
    opened = "" if report.passed else " open"
    header = (
        "<tr><th>gate</th><th>expectation</th><th>status</th><th>checked</th>"
        "<th>unexpected</th><th>first offending (id, page)</th><th>detail</th></tr>"
    )
    rows = "".join(_result_row(result) for result in report.results)
    return (
        f'<details id="{_anchor(index)}"{opened}><summary>{escape(report.partition_key)}: {_status(report.passed)}, '
        f"{report.chunk_count} chunks</summary><table>{header}{rows}</table></details>"
    )


def _result_row(result: GateResult) -> str:
    offending = "<br>".join(f"<code>{escape(chunk_id)}</code> p.{page}" for chunk_id, page in result.offending)
    return (
        f"<tr><td>{escape(result.gate)}</td><td><code>{escape(result.expectation)}</code></td>"
        f"<td>{_status(result.passed)}</td><td>{result.checked_count}</td><td>{result.unexpected_count}</td>"
        f"<td>{offending}</td><td>{escape(result.detail)}</td></tr>"
    )
