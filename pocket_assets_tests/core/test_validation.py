"""The gates: a clean hand-built partition passes, and each broken rule fails the right expectation."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pocket_assets.core import ids
from pocket_assets.core.device import PRESETS
from pocket_assets.core.document import PageContent, assemble_pages, canonical_text
from pocket_assets.core.policy import SEARCHABLE_MAX_TOKENS, ChunkPolicy
from pocket_assets.core.quality.coverage import CHILDREN_COVER_TEXT, PAGES_HAVE_CHUNKS, TEXT_MATCHES_OFFSETS
from pocket_assets.core.quality.gate_results import (
    COVERAGE_GATE,
    EXPECTATIONS_GATE,
    OFFENDING_LIMIT,
    PARTITION_GATES,
    SCHEMA_GATE,
    GateReport,
)
from pocket_assets.core.quality.partition_gates import validate_partition
from pocket_assets.core.quality.schema_gate import CHUNK_SCHEMA_FILE, load_chunk_schema
from pocket_assets.core.quality.suites import Gates, load_gates, validate_corpus_ids
from pocket_assets.core.records import Block, ChunkRecord, ContentFeatures, PageRecord, TableCells

EXPECTATIONS_DIR = Path(__file__).resolve().parents[2] / "expectations"
KEY = "fr/reglement.pdf"
SOURCE = "reglement.pdf"
POLICY = ChunkPolicy()

PAGE_ONE = (
    "# Article 1 Champ d'application\n"
    "Le present reglement s'applique a toutes les competitions homologuees par la federation.\n\n"
    "Les arbitres veillent a son application stricte pendant toute la duree du tournoi."
)
TABLE = "| Ronde | Heure |\n| --- | --- |\n| 1 | 14h00 |\n| 2 | 18h00 |"
PAGE_TWO = (
    "Le calendrier des rondes est fixe par l'organisateur avant le debut du tournoi.\n\n"
    f"{TABLE}\n\n"
    "Tout retard de plus de trente minutes entraine la perte de la partie pour le joueur absent."
)


def make_pages() -> tuple[PageRecord, ...]:
    table_start = PAGE_TWO.index(TABLE)
    table = Block(
        kind="table",
        char_start=table_start,
        char_end=table_start + len(TABLE),
        table=TableCells(header=("Ronde", "Heure"), rows=(("1", "14h00"), ("2", "18h00"))),
    )
    return assemble_pages(
        [
            PageContent(page=1, text=PAGE_ONE),
            PageContent(page=2, text=PAGE_TWO, blocks=(table,)),
            PageContent(page=3, text="  \n", warnings=("empty page",)),
        ]
    )


def make_chunk(
    chunk_id: str,
    text: str,
    chunk_type: str,
    page: int,
    char_start: int = 0,
    char_end: int = 0,
    parent_id: str | None = None,
    tokens: int = 40,
) -> ChunkRecord:
    document = ids.document_uuid(KEY)
    return ChunkRecord(
        id=chunk_id,
        text=text,
        source=SOURCE,
        corpus="fr",
        chunk_type=chunk_type,
        page=page,
        pages=(page,),
        tokens=tokens,
        section="Article 1",
        section_path=("Article 1",),
        section_id="1",
        article_num=None,
        parent_id=parent_id,
        table_type="schedule" if chunk_type == "table_summary" else None,
        char_start=char_start,
        char_end=char_end,
        line_from=1,
        line_to=1,
        chunk_uid=ids.chunk_uuid(document, chunk_id),
        document_id=document,
        canonical_id=ids.canonical_id(ids.doc_uid(KEY), "00000000", chunk_id, page, 0),  # unique as ids are
        hash=ids.content_hash(text),
        anchor=ids.anchor(text),
        chunk_index=0,
        total_chunks=1,
        has_overlap_previous=False,
        has_overlap_next=False,
        content_type="table" if chunk_type == "table_summary" else "text",
        content_features=ContentFeatures(),
        chunker_version=POLICY.chunker_version,
        policy_hash=POLICY.policy_hash,
        context="" if chunk_type == "parent" else "Reglement > Article 1",
        embedded_tokens=0 if chunk_type == "parent" else tokens + 25,
    )


def make_chunks(pages: tuple[PageRecord, ...]) -> list[ChunkRecord]:
    """One parent per page with text, one child per paragraph outside the table, one table summary."""
    text = canonical_text(pages)
    chunks: list[ChunkRecord] = []
    for page in pages[:2]:
        parent = ids.parent_id(SOURCE, page.page, 1)
        chunks.append(make_chunk(parent, page.text, "parent", page.page, page.char_start, page.char_end, tokens=120))
        offset = page.char_start
        for index, paragraph in enumerate(part for part in page.text.split("\n\n") if not part.startswith("|")):
            start = text.index(paragraph, offset)
            end = start + len(paragraph)
            chunks.append(make_chunk(ids.child_id(parent, index), paragraph, "child", page.page, start, end, parent))
            offset = end
    summary = "Table des rondes: ronde 1 a 14h00, ronde 2 a 18h00, fixee par l'organisateur."
    chunks.append(make_chunk(ids.table_summary_id(SOURCE, 2, 1), summary, "table_summary", 2, tokens=25))
    return chunks


def by_id(chunks: list[ChunkRecord], chunk_type: str, index: int = 0) -> ChunkRecord:
    return [chunk for chunk in chunks if chunk.chunk_type == chunk_type][index]


def replaced(chunks: list[ChunkRecord], old: ChunkRecord, **changes: object) -> list[ChunkRecord]:
    return [dataclasses.replace(chunk, **changes) if chunk is old else chunk for chunk in chunks]


def failed_expectations(report: GateReport) -> dict[str, tuple[tuple[str, int], ...]]:
    return {result.expectation: result.offending for result in report.failures()}


def run(gates: Gates, chunks: list[ChunkRecord], policy: ChunkPolicy = POLICY) -> GateReport:
    return validate_partition(gates, KEY, chunks, make_pages(), policy)


def test_clean_partition_passes_every_gate(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    report = run(gates, chunks)
    assert report.passed, report.failures()
    assert report.chunk_count == len(chunks) == 7
    assert all(report.gate_passed(gate) for gate in PARTITION_GATES)
    suite_names = [expectation["meta"]["name"] for expectation in suite_json(EXPECTATIONS_DIR)["expectations"]]
    assert [result.expectation for result in report.gate_results(EXPECTATIONS_GATE)] == suite_names
    unique_ids = report.gate_results(EXPECTATIONS_GATE)[0]
    assert unique_ids.checked_count == 7


def test_empty_partition_passes(gates: Gates) -> None:
    pages = assemble_pages([PageContent(page=1, text="", warnings=("empty page",))])
    report = validate_partition(gates, KEY, [], pages, POLICY)
    assert report.passed, report.failures()


@pytest.mark.parametrize(
    ("chunk_type", "changes", "expected_failures"),
    [
        # Table summaries are not offset slices, so changing their text breaks only the length rules.
        ("table_summary", {"text": "Trop court pour etre cherche, oui."}, {"searchable_text_min_length"}),
        (
            "table_summary",
            {"text": "Beaucoup trop court."},
            {"searchable_text_min_length", "text_min_length", "properties/text/minLength"},
        ),
        ("child", {"tokens": 513}, {"searchable_tokens_cap"}),
        ("table_summary", {"tokens": 513}, {"searchable_tokens_cap"}),
        ("parent", {"tokens": POLICY.parent_tokens + 1}, {"parent_tokens_cap"}),
        ("table_summary", {"page": 0, "pages": (2,)}, {"page_positive", "properties/page/minimum"}),
        ("child", {"source": "reglement.PDF"}, {"source_is_pdf", "properties/source/pattern"}),
        ("child", {"parent_id": "reglement.pdf-p009-parent001"}, {"parent_id_resolves"}),
        ("table_summary", {"parent_id": "nowhere"}, {"parent_id_resolves"}),
        ("child", {"parent_id": None}, {"child_has_parent"}),
        ("parent", {"parent_id": "reglement.pdf-p002-parent001"}, {"parent_is_top_level"}),
        ("table_summary", {"chunk_type": "summary"}, {"chunk_type_known", "properties/chunk_type/enum"}),
        ("child", {"corpus": "de"}, {"corpus_known", "properties/corpus/enum"}),
        ("child", {"tokens": 0}, {"properties/tokens/minimum"}),
        # What the embedder reads (prompt, header, text, citation, special tokens) is over the window.
        ("child", {"embedded_tokens": POLICY.max_tokens + 1}, {"embedded_string_cap"}),
        ("table_summary", {"embedded_tokens": POLICY.max_tokens + 1}, {"embedded_string_cap"}),
        ("child", {"embedded_tokens": 0}, {"embedded_string_cap"}),
        ("child", {"context": "Reglement | Article 1"}, {"properties/context/pattern"}),
    ],
)
def test_each_broken_rule_fails_its_expectation_with_the_chunk_id(
    gates: Gates, chunk_type: str, changes: dict[str, object], expected_failures: set[str]
) -> None:
    chunks = make_chunks(make_pages())
    broken = by_id(chunks, chunk_type)
    report = run(gates, replaced(chunks, broken, **changes))
    failures = failed_expectations(report)
    assert set(failures) == expected_failures
    page = int(changes.get("page", broken.page))  # type: ignore[arg-type]
    assert all(offending == ((broken.id, page),) for offending in failures.values())
    assert not report.passed


def test_a_schema_violation_names_its_rule_its_chunks_and_the_first_message(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    first, second = by_id(chunks, "child", 0), by_id(chunks, "child", 1)
    chunks = replaced(chunks, first, pages=(first.page, 0), tokens=0)
    chunks = replaced(chunks, second, pages=(0,))
    results = {result.expectation: result for result in run(gates, chunks).gate_results(SCHEMA_GATE)}
    assert set(results) == {"properties/pages/items/minimum", "properties/tokens/minimum"}
    pages_rule, tokens_rule = results["properties/pages/items/minimum"], results["properties/tokens/minimum"]
    assert pages_rule.offending == ((first.id, first.page), (second.id, second.page))
    assert (pages_rule.unexpected_count, pages_rule.checked_count, pages_rule.passed) == (2, len(chunks), False)
    assert tokens_rule.offending == ((first.id, first.page),)
    for result in (pages_rule, tokens_rule):
        assert result.detail.startswith(f"{CHUNK_SCHEMA_FILE}: 0 "), "the schema and the offending value"


@pytest.mark.parametrize(
    ("rule", "value", "where"),
    [("minLength", -1, "properties/text/minLength"), ("pattern", "(unclosed", "properties/text/pattern")],
    ids=["negative-length", "broken-regex"],
)
def test_a_chunk_schema_that_is_not_a_valid_schema_is_refused_at_load(
    tmp_path: Path, rule: str, value: object, where: str
) -> None:
    """Refused when loaded, naming the file and the place, not on the first chunk checked."""
    schema = json.loads((EXPECTATIONS_DIR / CHUNK_SCHEMA_FILE).read_text(encoding="utf-8"))
    schema["properties"]["text"][rule] = value
    (tmp_path / CHUNK_SCHEMA_FILE).write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{tmp_path / CHUNK_SCHEMA_FILE}: not a valid .* schema at {where}: "):
        load_chunk_schema(tmp_path)


def test_duplicate_id_names_every_copy(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    first, second = by_id(chunks, "child", 0), by_id(chunks, "child", 1)
    report = run(gates, replaced(chunks, second, id=first.id))
    assert failed_expectations(report) == {"id_unique": ((first.id, first.page), (first.id, second.page))}
    [result] = report.failures()
    assert (result.gate, result.unexpected_count) == (EXPECTATIONS_GATE, 2)


def test_duplicate_canonical_id_fails_its_own_expectation(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    first, second = by_id(chunks, "child", 0), by_id(chunks, "child", 1)
    report = run(gates, replaced(chunks, second, canonical_id=first.canonical_id))
    assert failed_expectations(report) == {"canonical_id_unique": ((first.id, first.page), (second.id, second.page))}


def test_embedded_string_cap_follows_the_device_window(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    over = replaced(chunks, by_id(chunks, "child"), embedded_tokens=300)
    assert run(gates, over).passed
    small_window = dataclasses.replace(POLICY, device=PRESETS["embeddinggemma-256"])
    assert set(failed_expectations(run(gates, over, small_window))) == {"embedded_string_cap"}


def test_parent_cap_follows_the_policy_target(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    big_parent = replaced(chunks, by_id(chunks, "parent"), tokens=1500)
    assert set(failed_expectations(run(gates, big_parent))) == {"parent_tokens_cap"}
    assert run(gates, big_parent, dataclasses.replace(POLICY, parent_tokens=2048)).passed


def test_searchable_cap_is_the_seeds_512_whatever_the_window(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    chunks = replaced(chunks, by_id(chunks, "child"), tokens=600, embedded_tokens=700)
    larger_window = dataclasses.replace(POLICY, device=PRESETS["embeddinggemma-1024"])
    assert failed_expectations(run(gates, chunks, larger_window)) == {"searchable_tokens_cap": ((chunks[1].id, 1),)}


def test_offending_ids_are_capped_but_counted(gates: Gates) -> None:
    chunks = [dataclasses.replace(c, tokens=600) if c.chunk_type == "child" else c for c in make_chunks(make_pages())]
    extra = [
        dataclasses.replace(
            chunks[1], id=f"{chunks[1].id}-copy{index:02d}", canonical_id=f"copy{index}", chunk_uid=f"copy{index}"
        )
        for index in range(12)
    ]
    [result] = run(gates, chunks + extra).failures()
    assert result.expectation == "searchable_tokens_cap"
    assert result.unexpected_count == 4 + 12
    assert len(result.offending) == OFFENDING_LIMIT


def test_page_with_text_but_no_chunk_fails_page_coverage(gates: Gates) -> None:
    chunks = [dataclasses.replace(c, pages=(2,)) if c.page == 1 else c for c in make_chunks(make_pages())]
    report = run(gates, chunks)
    assert failed_expectations(report) == {PAGES_HAVE_CHUNKS: ((KEY, 1),)}
    assert report.gate_passed(EXPECTATIONS_GATE) and not report.gate_passed(COVERAGE_GATE)


def test_missing_child_fails_text_coverage_with_its_range_and_page(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    dropped = by_id(chunks, "child", 3)  # the paragraph after the table, page 2
    report = run(gates, [chunk for chunk in chunks if chunk is not dropped])
    label = f"{KEY} chars {dropped.char_start}-{dropped.char_end}"
    assert failed_expectations(report) == {CHILDREN_COVER_TEXT: ((label, 2),)}


def pages_with_last_pages(*texts: str) -> tuple[PageRecord, ...]:
    contents = [PageContent(page.page, page.text, page.blocks, page.warnings) for page in make_pages()]
    return assemble_pages([*contents, *(PageContent(page=4 + index, text=text) for index, text in enumerate(texts))])


def test_short_last_page_left_out_by_the_rule_is_accounted_for(gates: Gates) -> None:
    """A last page below the minimum has nothing to join: no chunk, a warning, and no coverage failure."""
    pages = pages_with_last_pages("  Fin du reglement.\n")
    report = validate_partition(gates, KEY, make_chunks(pages), pages, POLICY)
    assert report.passed, report.failures()
    page_coverage = next(result for result in report.results if result.expectation == PAGES_HAVE_CHUNKS)
    assert "pages 4: text_below_minimum" in page_coverage.detail


def test_short_page_the_rule_would_join_is_still_a_gap(gates: Gates) -> None:
    """Only what the rule leaves out is excused: a short page with text after it must open that text's chunk."""
    pages = pages_with_last_pages("# Annexe", PAGE_ONE)
    last = pages[-1]
    parent = ids.parent_id(SOURCE, 5, 2)
    chunks = make_chunks(pages) + [
        make_chunk(parent, last.text, "parent", 5, last.char_start, last.char_end, tokens=120),
        make_chunk(ids.child_id(parent, 0), last.text, "child", 5, last.char_start, last.char_end, parent),
    ]
    report = validate_partition(gates, KEY, chunks, pages, POLICY)
    label = f"{KEY} chars {pages[3].char_start}-{pages[3].char_end}"
    assert failed_expectations(report) == {PAGES_HAVE_CHUNKS: ((KEY, 4),), CHILDREN_COVER_TEXT: ((label, 4),)}


def test_text_left_out_is_the_whole_of_a_document_below_the_minimum(gates: Gates) -> None:
    pages = assemble_pages([PageContent(page=1, text="Hello world")])
    assert validate_partition(gates, KEY, [], pages, POLICY).passed
    longer = assemble_pages([PageContent(page=1, text="Hello world. " * 5)])
    assert failed_expectations(validate_partition(gates, KEY, [], longer, POLICY)).keys() == {
        PAGES_HAVE_CHUNKS,
        CHILDREN_COVER_TEXT,
    }


def test_child_whose_text_is_not_its_offsets_slice_fails(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    shifted = by_id(chunks, "child", 0)
    report = run(gates, replaced(chunks, shifted, char_end=shifted.char_end + 1))
    assert failed_expectations(report) == {TEXT_MATCHES_OFFSETS: ((shifted.id, 1),)}


def test_corpus_ids_must_be_unique_across_partitions(gates: Gates) -> None:
    chunks = make_chunks(make_pages())
    other = [dataclasses.replace(chunk, id=chunk.id.replace(SOURCE, "annexe.pdf")) for chunk in chunks]
    assert validate_corpus_ids(gates, chunks + other).passed
    report = validate_corpus_ids(gates, chunks + chunks[:1])
    [result] = report.failures()
    assert result.offending == ((chunks[0].id, 1), (chunks[0].id, 1))
    assert (report.partition_key, report.chunk_count) == ("corpus", 8)


def suite_json(directory: Path) -> dict:
    return json.loads((directory / "chunks.partition.json").read_text(encoding="utf-8"))


def expectation_kwargs(suite: dict, name: str) -> dict:
    return next(e["kwargs"] for e in suite["expectations"] if e["meta"]["name"] == name)


def test_suite_numbers_agree_with_the_default_policy_and_the_seed_schema() -> None:
    suite = suite_json(EXPECTATIONS_DIR)
    schema = json.loads((EXPECTATIONS_DIR / "chunk.schema.json").read_text(encoding="utf-8"))
    assert expectation_kwargs(suite, "searchable_tokens_cap")["max_value"] == SEARCHABLE_MAX_TOKENS
    assert expectation_kwargs(suite, "embedded_string_cap")["max_value"] == {"$PARAMETER": "max_tokens"}
    assert expectation_kwargs(suite, "searchable_text_min_length")["min_value"] == ChunkPolicy().min_chars
    assert expectation_kwargs(suite, "text_min_length")["min_value"] == schema["properties"]["text"]["minLength"]
    assert expectation_kwargs(suite, "parent_tokens_cap")["max_value"] == {"$PARAMETER": "parent_tokens"}


def copy_expectations(tmp_path: Path, edit: str, value: object, key: str) -> Path:
    target = tmp_path / "expectations"
    shutil.copytree(EXPECTATIONS_DIR, target)
    suite = suite_json(target)
    expectation_kwargs(suite, edit)[key] = value
    (target / "chunks.partition.json").write_text(json.dumps(suite), encoding="utf-8")
    return target


def test_changing_a_number_in_the_suite_changes_the_gate(gates: Gates, tmp_path: Path) -> None:
    chunks = make_chunks(make_pages())
    chunks = replaced(chunks, by_id(chunks, "child"), tokens=450)
    assert run(gates, chunks).passed
    stricter = load_gates(copy_expectations(tmp_path, "searchable_tokens_cap", 400, "max_value"))
    assert failed_expectations(run(stricter, chunks)) == {"searchable_tokens_cap": ((chunks[1].id, 1),)}


def test_an_expectation_that_cannot_run_fails_with_its_error(tmp_path: Path) -> None:
    broken = load_gates(copy_expectations(tmp_path, "page_positive", "no_such_column", "column"))
    report = run(broken, make_chunks(make_pages()))
    [failure] = report.failures()
    assert failure.expectation == "page_positive" and "no_such_column" in failure.detail


def test_suite_with_unknown_parameter_is_refused_at_load(tmp_path: Path) -> None:
    directory = copy_expectations(tmp_path, "page_positive", {"$PARAMETER": "first_page"}, "min_value")
    with pytest.raises(ValueError, match="first_page"):
        load_gates(directory)


def test_importing_the_gates_module_does_not_import_great_expectations() -> None:
    """GE costs seconds to import: only `load_gates` may pay it, never a plain import."""
    probe = "import sys, pocket_assets.core.quality.report; print('great_expectations' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
