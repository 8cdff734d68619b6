"""What a gate found in one PDF, in a form a maintainer can read without opening the files.

A `GateResult` names its offenders by chunk id (or, for coverage, by a label for
an uncovered page or character range) and page. A finding adds the start of the
offending text, and is plain data so that it can be kept in the PDF's manifest:
the corpus-level checks list which PDFs *currently* fail which gate from it,
whichever run last judged them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from pocket_assets.core.document import canonical_text
from pocket_assets.core.quality.chunk_stats import excerpt
from pocket_assets.core.quality.gate_results import GateReport
from pocket_assets.core.records import ChunkRecord, PageRecord

_CHAR_RANGE = re.compile(r" chars (\d+)-(\d+)$")


@dataclass(frozen=True)
class Offender:
    label: str  # a chunk id, or the coverage gate's label for a page or a character range
    page: int
    text: str  # the start of the offending text


@dataclass(frozen=True)
class GateFinding:
    gate: str
    expectation: str
    count: int
    offenders: tuple[Offender, ...]


def gate_findings(
    report: GateReport, chunks: Sequence[ChunkRecord], pages: Sequence[PageRecord]
) -> list[GateFinding]:
    """The report's failed expectations, each offender with the start of its text."""
    by_id = {chunk.id: chunk.text for chunk in chunks}
    page_text = {page.page: page.text for page in pages}
    document = canonical_text(pages) if pages else ""

    def text_of(label: str, page: int) -> str:
        if label in by_id:
            return by_id[label]
        span = _CHAR_RANGE.search(label)
        if span:
            return document[int(span.group(1)) : int(span.group(2))]
        return page_text.get(page, "")

    return [
        GateFinding(
            gate=result.gate,
            expectation=result.expectation,
            count=result.unexpected_count,
            offenders=tuple(Offender(label, page, excerpt(text_of(label, page))) for label, page in result.offending),
        )
        for result in report.failures()
    ]


def findings_to_json(findings: Iterable[GateFinding]) -> list[dict[str, Any]]:
    return [asdict(finding) for finding in findings]


def findings_from_json(rows: Iterable[Mapping[str, Any]]) -> list[GateFinding]:
    return [
        GateFinding(
            gate=row["gate"],
            expectation=row["expectation"],
            count=row["count"],
            offenders=tuple(Offender(**offender) for offender in row["offenders"]),
        )
        for row in rows
    ]


def findings_markdown(rows: Sequence[tuple[str, GateFinding]]) -> str:
    """One table row per offender: the PDF, gate, expectation and count on the first row of each finding."""
    if not rows:
        return "none"
    lines = [
        "| PDF | gate | expectation | count | offending chunk | page | start of its text |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, finding in rows:
        lead = f"| {key} | {finding.gate} | {finding.expectation} | {finding.count} |"
        for index, offender in enumerate(finding.offenders or (None,)):
            cells = (
                f" `{_cell(offender.label)}` | {offender.page} | {_cell(offender.text)} |" if offender else " | | |"
            )
            lines.append((lead if index == 0 else "| | | | |") + cells)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "/")
