"""The HTML report: names every partition, shows failures first-class, escapes what it prints."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from pocket_assets.core.quality.gate_results import COVERAGE_GATE, EXPECTATIONS_GATE, GateReport, GateResult
from pocket_assets.core.quality.report import render_report_html, write_report_html

CLEAN = GateReport(
    partition_key="fr/faq.pdf",
    chunk_count=12,
    results=(GateResult(EXPECTATIONS_GATE, "id_unique: expect_column_values_to_be_unique(id)", True, 12, 0),),
)
BROKEN = GateReport(
    partition_key="intl/<R&D>.pdf",
    chunk_count=3,
    results=(
        GateResult(EXPECTATIONS_GATE, "id_unique: expect_column_values_to_be_unique(id)", True, 3, 0),
        GateResult(
            COVERAGE_GATE,
            "children_cover_text_outside_tables",
            False,
            900,
            1,
            (("intl/<R&D>.pdf chars 10-42", 2),),
            "32 characters in 1 uncovered ranges",
        ),
    ),
)


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> _TextCollector:
    collector = _TextCollector()
    collector.feed(html)
    return collector


def test_report_lists_partitions_and_the_failure_details() -> None:
    html = render_report_html([CLEAN, BROKEN], "Gates <run 7>")
    text = " ".join(parse(html).text)
    assert "Gates <run 7>" in text
    assert "2 partitions, 1 passed, 1 failed." in text
    assert "intl/<R&D>.pdf chars 10-42" in text
    assert "children_cover_text_outside_tables" in text and "FAILED" in text


def test_report_escapes_names_so_they_cannot_inject_markup() -> None:
    html = render_report_html([BROKEN], "<script>alert(1)</script>")
    assert "script" not in parse(html).tags and "r" not in parse(html).tags
    assert "&lt;R&amp;D&gt;" in html


def test_report_is_deterministic_and_written_atomically(tmp_path: Path) -> None:
    target = write_report_html(tmp_path / "reports" / "gates.html", [CLEAN, BROKEN], "run")
    assert target.read_text(encoding="utf-8") == render_report_html([CLEAN, BROKEN], "run")
    assert [path.name for path in target.parent.iterdir()] == ["gates.html"]
