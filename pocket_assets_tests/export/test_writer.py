"""Exports: the SDK file, the corpus JSON, the HEPilot JSONL and the redirect map, per corpus."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pocket_assets.core import ids
from pocket_assets.core.chunking.context import clean_part
from pocket_assets.core.chunking.embed_text import CHUNK_SPLITTER, line_text, sdk_line
from pocket_assets.core.device import DeviceProfile
from pocket_assets.core.records import PAGE_SEPARATOR, ChunkRecord, ContentFeatures
from pocket_assets.export.corpus_records import CHUNK_SCHEMA_FILE, HEPILOT_SCHEMA_FILE
from pocket_assets.export.errors import ExportError
from pocket_assets.export.order import export_order
from pocket_assets.export.redirects import resolve_redirect
from pocket_assets.export.sdk_lines import NEUTRAL_SPLITTER, parse_sdk_file, parse_sdk_line, restore_splitter
from pocket_assets.export.writer import HEPILOT_FILE, MODE_B_FILE, REDIRECTS_FILE, SDK_FILE, write_corpus_exports

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "expectations"
GENERATED = "2026-01-14T10:30:00Z"
_WORDS = (
    "arbitre joueur pendule partie coup roque pion tour dame roi échiquier règle article "
    "tournoi appariement classement départage forfait nulle mat temps cadence ronde"
).split()


def document_text(seed: int, pages: int, page_chars: int = 1500) -> list[str]:
    """Deterministic French-looking pages: sentences of chess words, paragraphs split by blank lines."""
    rng = random.Random(seed)
    result = []
    for _ in range(pages):
        sentences: list[str] = []
        while sum(len(sentence) + 1 for sentence in sentences) < page_chars:
            words = rng.choices(_WORDS, k=rng.randint(6, 14))
            sentences.append(" ".join(words).capitalize() + ".")
            if rng.random() < 0.2:
                sentences.append("\n\n")
        result.append(" ".join(sentences).replace(" \n\n ", "\n\n").strip())
    return result


def _windows(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Character windows ending and starting on word boundaries, each overlapping the previous one."""
    spans = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            end = text.rfind(" ", start + size // 2, end) + 1 or end
        spans.append((start, end))
        if end >= len(text):
            break
        next_start = text.find(" ", end - overlap) + 1
        start = next_start if start < next_start < end else end
    return spans


def make_chunks(
    source: str,
    pages: list[str],
    corpus: str = "fr",
    child_chars: int = 400,
    parent_chars: int = 1200,
    overlap_chars: int = 60,
) -> list[ChunkRecord]:
    """Parents, children and one table summary of a document, shaped like the chunker's records.

    Stands in for `core.chunker` (not there yet when these tests were written):
    what the export needs is real ids, offsets into the canonical text, pages and hashes.
    """
    text = PAGE_SEPARATOR.join(pages)
    page_spans, offset = [], 0
    for number, page in enumerate(pages, start=1):
        page_spans.append((number, offset, offset + len(page)))
        offset += len(page) + len(PAGE_SEPARATOR)
    key = f"{corpus}/{source}"
    document_id = ids.document_uuid(key)
    revision = ids.revision8(text)

    def covered(start: int, end: int) -> tuple[int, ...]:
        return tuple(number for number, low, high in page_spans if low < end and start < high)

    def principal(start: int, end: int) -> int:
        return max(page_spans, key=lambda span: (min(end, span[2]) - max(start, span[1]), -span[0]))[0]

    def record(
        chunk_id: str, chunk_type: str, start: int, end: int, index: int, total: int, **extra: object
    ) -> ChunkRecord:
        body = text[start:end]
        page = principal(start, end)
        return ChunkRecord(
            id=chunk_id,
            text=body,
            source=source,
            corpus=corpus,
            chunk_type=chunk_type,
            page=page,
            pages=covered(start, end),
            tokens=len(body.split()),
            section=None,
            section_path=("Règles", f"Page {page}"),
            section_id=None,
            article_num=None,
            parent_id=extra.get("parent_id"),  # type: ignore[arg-type]
            table_type=extra.get("table_type"),  # type: ignore[arg-type]
            char_start=start,
            char_end=end,
            line_from=text.count("\n", 0, start) + 1,
            line_to=text.count("\n", 0, end) + 1,
            chunk_uid=ids.chunk_uuid(document_id, chunk_id),
            document_id=document_id,
            canonical_id=ids.canonical_id(ids.doc_uid(key), revision, None, page, index),
            hash=ids.content_hash(body),
            anchor=ids.anchor(body),
            chunk_index=index,
            total_chunks=total,
            has_overlap_previous=index > 0,
            has_overlap_next=index < total - 1,
            content_type="table" if chunk_type == "table_summary" else "text",
            content_features=ContentFeatures(table_count=1 if chunk_type == "table_summary" else 0),
            chunker_version="pocket-hier-v1",
            policy_hash=f"{child_chars:016x}",
            context="" if chunk_type == "parent" else f"Règles > Page {page}",
        )

    parent_spans = _windows(text, parent_chars, overlap_chars * 2)
    parents = [
        record(ids.parent_id(source, principal(*span), index + 1), "parent", *span, index, len(parent_spans))
        for index, span in enumerate(parent_spans)
    ]
    child_spans = _windows(text, child_chars, overlap_chars)
    children: list[ChunkRecord] = []
    per_parent: dict[str, int] = {}
    for index, (start, end) in enumerate(child_spans):
        parent = next(p for p in reversed(parents) if p.char_start <= start)
        number = per_parent[parent.id] = per_parent.get(parent.id, -1) + 1
        children.append(
            record(ids.child_id(parent.id, number), "child", start, end, index, len(child_spans), parent_id=parent.id)
        )
    summary_end = text.find(".", 200) + 1
    summary = record(ids.table_summary_id(source, 1, 1), "table_summary", 0, summary_end, 0, 1, table_type="other")
    return [*parents, *children, summary]


def children_of(chunks: list[ChunkRecord]) -> list[ChunkRecord]:
    return [chunk for chunk in chunks if chunk.chunk_type == "child"]


def sample_chunks() -> list[ChunkRecord]:
    return [
        *make_chunks("regles.pdf", document_text(1, 4)),
        *make_chunks("annexe.pdf", document_text(2, 2)),
    ]


def export(chunks: list[ChunkRecord], out_dir: Path, generated: str = GENERATED):
    return write_corpus_exports("fr", chunks, out_dir, generated, SCHEMA_DIR)


def test_every_sdk_line_parses_back_to_its_chunk(tmp_path: Path) -> None:
    chunks = sample_chunks()
    result = export(chunks, tmp_path)
    lines = parse_sdk_file(result.paths[SDK_FILE], has_context=True)
    embedded = [chunk for chunk in chunks if chunk.chunk_type in ("child", "table_summary")]
    assert len(lines) == len(embedded) == result.counts["sdk_lines"]
    by_text = {(chunk.context, line_text(chunk.text), chunk.source, chunk.page) for chunk in embedded}
    assert {(line.context, line.text, line.source, line.page) for line in lines} == by_text
    raw = result.paths[SDK_FILE].read_text(encoding="utf-8")
    assert raw.count(CHUNK_SPLITTER) == len(lines) == raw.count("\n")
    assert result.preview_lines == tuple(raw.splitlines()[:5])


def test_corpus_json_validates_and_holds_every_chunk_in_stable_order(tmp_path: Path) -> None:
    chunks = sample_chunks()
    result = export(list(reversed(chunks)), tmp_path)
    raw = result.paths[MODE_B_FILE].read_text(encoding="utf-8")
    document = json.loads(raw)
    assert raw == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert document["metadata"] == {
        "corpus": "fr",
        "generated": GENERATED,
        "total_chunks": len(chunks),
        "schema_version": "1.0",
    }
    schema = json.loads((SCHEMA_DIR / "chunk.schema.json").read_text(encoding="utf-8"))
    for chunk in document["chunks"]:
        jsonschema.Draft7Validator(schema).validate(chunk)
    rank = {"parent": 0, "child": 1, "table_summary": 2}
    keys = [(chunk["source"], rank[chunk["chunk_type"]], chunk["chunk_index"]) for chunk in document["chunks"]]
    assert keys == sorted(keys)
    assert {chunk["id"] for chunk in document["chunks"]} == {chunk.id for chunk in chunks}
    assert result.counts["chunks"] == len(chunks)
    assert result.counts["parent"] + result.counts["child"] + result.counts["table_summary"] == len(chunks)
    assert result.counts["sources"] == 2
    assert result.sizes[MODE_B_FILE] == len(raw.encode("utf-8"))


def test_hepilot_jsonl_validates_with_uuid_formats(tmp_path: Path) -> None:
    chunks = sample_chunks()
    result = export(chunks, tmp_path)
    schema = json.loads((SCHEMA_DIR / "hepilot_chunk_output.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    records = [json.loads(line) for line in result.paths[HEPILOT_FILE].read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(chunks)
    for record in records:
        validator.validate(record)
    by_uid = {chunk.chunk_uid: chunk for chunk in chunks}
    assert all(record["content"] == by_uid[record["chunk_id"]].text for record in records)


def test_two_builds_differ_only_in_generated(tmp_path: Path) -> None:
    first = export(sample_chunks(), tmp_path / "a", generated="2026-01-01T00:00:00Z")
    second = export(sample_chunks(), tmp_path / "b", generated="2026-02-02T00:00:00Z")
    for name in (SDK_FILE, HEPILOT_FILE):
        assert first.paths[name].read_bytes() == second.paths[name].read_bytes()
    documents = [json.loads(result.paths[MODE_B_FILE].read_text(encoding="utf-8")) for result in (first, second)]
    assert documents[0]["metadata"].pop("generated") != documents[1]["metadata"].pop("generated")
    assert documents[0] == documents[1]


def test_rebuild_of_unchanged_chunks_redirects_every_id_to_itself(tmp_path: Path) -> None:
    chunks = sample_chunks()
    first = export(chunks, tmp_path)
    assert first.redirect_stats is None
    assert json.loads(first.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))["redirects"] == {
        chunk.id: chunk.id for chunk in chunks
    }
    second = export(chunks, tmp_path, generated="2026-02-02T00:00:00Z")
    redirects = json.loads(second.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))
    assert redirects["redirects"] == {chunk.id: chunk.id for chunk in chunks}
    assert redirects["metadata"]["one_to_one_share"] == 1.0
    assert redirects["metadata"]["previous_generated"] == GENERATED
    assert second.redirect_stats is not None and second.redirect_stats.unchanged == len(chunks)


def test_changed_child_size_redirects_unchanged_regions_one_to_one(tmp_path: Path) -> None:
    regles, annexe = make_chunks("regles.pdf", document_text(1, 4)), make_chunks("annexe.pdf", document_text(2, 2))
    export([*regles, *annexe], tmp_path)
    rechunked = make_chunks("regles.pdf", document_text(1, 4), child_chars=300)
    result = export([*rechunked, *annexe], tmp_path, generated="2026-02-02T00:00:00Z")
    document = json.loads(result.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))
    redirects = document["redirects"]
    targets = list(redirects.values())
    unchanged = [chunk for chunk in [*regles, *annexe] if chunk.source == "annexe.pdf" or chunk.chunk_type != "child"]
    for chunk in unchanged:
        assert redirects[chunk.id] == chunk.id and targets.count(chunk.id) == 1
    new_children = {chunk.id: chunk for chunk in rechunked if chunk.chunk_type == "child"}
    for old in children_of(regles):
        new = new_children[resolve_redirect(document, old.id, old.hash)]
        overlap = min(old.char_end, new.char_end) - max(old.char_start, new.char_start)
        assert overlap >= 0.5 * (old.char_end - old.char_start)
    stats = result.redirect_stats
    assert stats is not None and stats.unmapped == 0 and stats.one_to_one >= len(unchanged)
    assert stats.one_to_one_share == stats.one_to_one / stats.previous_total


def test_changed_pdf_text_redirects_by_content_not_by_stale_offsets(tmp_path: Path) -> None:
    pages = document_text(1, 4)
    old_chunks = make_chunks("regles.pdf", pages)
    export(old_chunks, tmp_path)
    inserted = "Article nouveau inséré par la fédération au début du règlement. "
    edited = [inserted + pages[0], *pages[1:]]
    new_chunks = make_chunks("regles.pdf", edited)
    result = export(new_chunks, tmp_path, generated="2026-02-02T00:00:00Z")
    document = json.loads(result.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))
    new_children = children_of(new_chunks)
    shift = len(inserted)
    for old in children_of(old_chunks):
        shifted = (old.char_start + shift, old.char_end + shift)
        expected = max(new_children, key=lambda new: min(shifted[1], new.char_end) - max(shifted[0], new.char_start))
        assert resolve_redirect(document, old.id, old.hash) == expected.id


def test_removed_pdf_is_gone_from_every_file_and_redirects_to_null(tmp_path: Path) -> None:
    regles, annexe = make_chunks("regles.pdf", document_text(1, 4)), make_chunks("annexe.pdf", document_text(2, 2))
    export([*regles, *annexe], tmp_path)
    result = export(regles, tmp_path, generated="2026-02-02T00:00:00Z")
    for name in (SDK_FILE, MODE_B_FILE, HEPILOT_FILE):
        content = result.paths[name].read_text(encoding="utf-8")
        assert "annexe.pdf" not in content and annexe[0].document_id not in content
    redirects = json.loads(result.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))["redirects"]
    assert all(redirects[chunk.id] is None for chunk in annexe)
    assert all(redirects[chunk.id] == chunk.id for chunk in regles)
    assert result.counts["sources"] == 1


def test_chunk_splitter_in_text_or_source_is_neutralised_in_the_sdk_line_only(tmp_path: Path) -> None:
    chunks = sample_chunks()
    child = next(chunk for chunk in chunks if chunk.chunk_type == "child")
    text = child.text + f" {CHUNK_SPLITTER} injected"
    poisoned = dataclasses.replace(child, text=text)
    result = export([poisoned if chunk is child else chunk for chunk in chunks], tmp_path)
    assert result.neutralised == (child.id,)
    sdk = result.paths[SDK_FILE].read_text(encoding="utf-8")
    assert sdk.count(CHUNK_SPLITTER) == result.counts["sdk_lines"], "one splitter per line, at its start"
    line = next(line for line in parse_sdk_file(result.paths[SDK_FILE], has_context=True) if NEUTRAL_SPLITTER in line.text)
    assert restore_splitter(line.text) == line_text(text)
    kept = json.loads(result.paths[MODE_B_FILE].read_text(encoding="utf-8"))["chunks"]
    assert next(row for row in kept if row["id"] == child.id)["text"] == text, "the corpus JSON keeps the text"


def test_schema_violation_names_the_chunk(tmp_path: Path) -> None:
    chunks = sample_chunks()
    bad = dataclasses.replace(chunks[3], chunk_uid="not-a-uuid")
    with pytest.raises(ExportError, match=f"{bad.id}.*hepilot.*chunk_id"):
        export([bad, *chunks[:3], *chunks[4:]], tmp_path)
    short = dataclasses.replace(chunks[3], text="trop court")
    with pytest.raises(ExportError, match=f"{short.id}.*chunk.schema.json.*text"):
        export([short, *chunks[4:]], tmp_path)
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_a_schema_violation_names_the_schema_and_the_place_in_the_record(tmp_path: Path) -> None:
    chunks = sample_chunks()
    chunk = chunks[3]
    cases = [
        (dataclasses.replace(chunk, pages=(chunk.page, 0)), f"invalid against {CHUNK_SCHEMA_FILE} at pages/1: "),
        # Two violations: the one nearer the record's top is named.
        (dataclasses.replace(chunk, pages=(0,), tokens=0), f"invalid against {CHUNK_SCHEMA_FILE} at tokens: "),
        (dataclasses.replace(chunk, document_id="x"), f"invalid against {HEPILOT_SCHEMA_FILE} at document_id: "),
    ]
    for bad, reason in cases:
        with pytest.raises(ExportError) as raised:
            export([bad, *chunks[:3], *chunks[4:]], tmp_path)
        assert raised.value.chunk_id == bad.id
        assert raised.value.reason.startswith(reason), raised.value.reason
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_an_invalid_schema_file_is_refused_naming_it(tmp_path: Path) -> None:
    schema_dir = tmp_path / "schemas"
    schema_dir.mkdir()
    (schema_dir / CHUNK_SCHEMA_FILE).write_bytes((SCHEMA_DIR / CHUNK_SCHEMA_FILE).read_bytes())
    hepilot = json.loads((SCHEMA_DIR / HEPILOT_SCHEMA_FILE).read_text(encoding="utf-8"))
    hepilot["required"] = "chunk_id"
    (schema_dir / HEPILOT_SCHEMA_FILE).write_text(json.dumps(hepilot), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{HEPILOT_SCHEMA_FILE}: not a valid .* schema at required: "):
        write_corpus_exports("fr", sample_chunks(), tmp_path / "out", GENERATED, schema_dir)
    assert not (tmp_path / "out").exists()


def test_chunks_of_another_corpus_or_duplicate_ids_are_refused(tmp_path: Path) -> None:
    chunks = sample_chunks()
    stray = dataclasses.replace(chunks[0], corpus="intl")
    with pytest.raises(ExportError, match="corpus 'intl'"):
        export([stray, *chunks[1:]], tmp_path)
    with pytest.raises(ExportError, match="duplicate"):
        export([*chunks, chunks[5]], tmp_path)


def test_lines_too_long_for_the_phones_llm_refuse_the_corpus_naming_the_setting(tmp_path: Path) -> None:
    """The phone hands its top 3 lines whole to its LLM: the 3 longest lines and the question budget must fit
    its context, else nothing is written and the message says which setting to change."""
    chunks = sample_chunks()
    device = DeviceProfile(embed_max_tokens=512, llm_context_tokens=1024, top_k=3, question_tokens=256)
    lines = [chunk for chunk in chunks if chunk.chunk_type != "parent"]
    long_lines = {chunk.id: 400 for chunk in lines[:3]}  # 3 x 398 + 256 = 1450 tokens
    sized = [dataclasses.replace(chunk, embedded_tokens=long_lines.get(chunk.id, 100)) for chunk in chunks]
    with pytest.raises(ExportError, match=r"llm_context_tokens \(1024\).*at least 1450") as refused:
        write_corpus_exports("fr", sized, tmp_path / "out", GENERATED, SCHEMA_DIR, device=device)
    assert refused.value.chunk_id is None and not (tmp_path / "out").exists()
    # Parents are not handed to the LLM by the SDK; the same lines fit a context of 1,450 tokens.
    parents = [dataclasses.replace(chunk, embedded_tokens=900) if chunk.chunk_type == "parent" else chunk for chunk in sized]
    roomy = dataclasses.replace(device, llm_context_tokens=1450)
    assert write_corpus_exports("fr", parents, tmp_path / "out", GENERATED, SCHEMA_DIR, device=roomy).counts["chunks"]


def test_empty_corpus_writes_valid_empty_files(tmp_path: Path) -> None:
    result = export([], tmp_path)
    assert parse_sdk_file(result.paths[SDK_FILE], has_context=True) == []
    assert json.loads(result.paths[MODE_B_FILE].read_text(encoding="utf-8"))["chunks"] == []
    assert result.paths[HEPILOT_FILE].read_text(encoding="utf-8") == ""


@given(
    text=st.text(min_size=1).filter(lambda text: CHUNK_SPLITTER not in text),
    source=st.from_regex(r"[\w\-. ]{1,30}\.pdf", fullmatch=True),
    page=st.integers(min_value=1, max_value=100_000),
)
def test_sdk_line_round_trip(text: str, source: str, page: int) -> None:
    parsed = parse_sdk_line(sdk_line(text, source, page), has_context=False)
    assert (parsed.context, parsed.text, parsed.source, parsed.page) == ("", line_text(text), source, page)


@given(
    context=st.text(min_size=1).map(clean_part).filter(lambda context: context != ""),
    text=st.text(min_size=1).filter(lambda text: CHUNK_SPLITTER not in text),
    source=st.from_regex(r"[\w\-. ]{1,30}\.pdf", fullmatch=True),
    page=st.integers(min_value=1, max_value=100_000),
)
def test_sdk_line_with_a_context_header_round_trips(context: str, text: str, source: str, page: int) -> None:
    """Any header the header builder can give (one line, no `|`) comes back apart from the text,
    even when the text holds ` | ` or a citation of its own."""
    line = sdk_line(text, source, page, context)
    parsed = parse_sdk_line(line, has_context=True)
    assert (parsed.context, parsed.text, parsed.source, parsed.page) == (context, line_text(text), source, page)
    assert line == f"{CHUNK_SPLITTER} {parsed.content} [Source: {source}, Page {page}]"


def test_a_line_without_its_header_is_refused() -> None:
    with pytest.raises(ValueError, match="without a context header"):
        parse_sdk_line(sdk_line("Le joueur perd la partie.", "r.pdf", 2), has_context=True)


def test_a_context_header_holding_a_pipe_is_refused(tmp_path: Path) -> None:
    chunks = sample_chunks()
    child = children_of(chunks)[0]
    poisoned = dataclasses.replace(child, context="Règles | Page 1")
    with pytest.raises(ExportError, match=f"{child.id}.*context header"):
        export([poisoned if chunk is child else chunk for chunk in chunks], tmp_path)


@pytest.fixture(scope="module")
def sample_pdf_chunks() -> dict[str, list[ChunkRecord]]:
    """The real pipeline on one shipped PDF, chunked with the default policy and with smaller children."""
    chunker = pytest.importorskip("pocket_assets.core.chunking.chunker")
    from pocket_assets.core.extract import extract_pages
    from pocket_assets.core.pdf import inspect_pdf
    from pocket_assets.core.policy import ChunkPolicy
    from pocket_assets.core.tokenizer import load_tokenizer

    key = "intl/R-data.pdf"
    path = Path(__file__).resolve().parents[2] / "data" / "raw" / key
    identity, pages, counter = inspect_pdf(path, key), extract_pages(path), load_tokenizer()
    result = {}
    for name, policy in (("default", ChunkPolicy()), ("small", ChunkPolicy(child_tokens=300, child_overlap=45))):
        document = chunker.chunk_document(identity, pages, policy, counter)
        result[name] = [*document.parents, *document.children]
    return result


def test_sample_pdf_exports_parse_validate_and_redirect(tmp_path: Path, sample_pdf_chunks) -> None:
    default, small = sample_pdf_chunks["default"], sample_pdf_chunks["small"]
    first = write_corpus_exports("intl", default, tmp_path, GENERATED, SCHEMA_DIR)
    lines = parse_sdk_file(first.paths[SDK_FILE], has_context=True)
    children = [chunk for chunk in export_order(default) if chunk.chunk_type == "child"]
    assert [(line.context, line.text, line.source, line.page) for line in lines] == [
        (chunk.context, line_text(chunk.text), chunk.source, chunk.page) for chunk in children
    ]
    assert all(line.context.startswith("R Data Import/Export") for line in lines)
    assert json.loads(first.paths[MODE_B_FILE].read_text(encoding="utf-8"))["metadata"]["total_chunks"] == len(default)
    assert len(first.paths[HEPILOT_FILE].read_text(encoding="utf-8").splitlines()) == len(default)

    rebuilt = write_corpus_exports("intl", small, tmp_path, "2026-02-02T00:00:00Z", SCHEMA_DIR)
    document = json.loads(rebuilt.paths[REDIRECTS_FILE].read_text(encoding="utf-8"))
    redirects = document["redirects"]
    targets = list(redirects.values())
    for parent in (chunk for chunk in default if chunk.chunk_type == "parent"):
        assert redirects[parent.id] == parent.id and targets.count(parent.id) == 1
    new_by_id = {chunk.id: chunk for chunk in small}
    moved = {chunk.id: resolve_redirect(document, chunk.id, chunk.hash) for chunk in default}
    for old in (chunk for chunk in default if chunk.chunk_type == "child" and moved[chunk.id] is not None):
        new = new_by_id[moved[old.id]]
        assert new.chunk_type == "child"
        assert min(old.char_end, new.char_end) - max(old.char_start, new.char_start) >= 0.5 * len(old.text)
    stats = rebuilt.redirect_stats
    assert stats is not None and stats.mapped >= 0.9 * stats.previous_total


def test_unreadable_previous_export_is_an_error_not_a_silent_loss_of_redirects(tmp_path: Path) -> None:
    chunks = sample_chunks()
    first = export(chunks, tmp_path)
    first.paths[MODE_B_FILE].write_text('{"metadata": {}, "chunks": [', encoding="utf-8")
    with pytest.raises(ExportError, match="chunks_mode_b_fr.json.*not valid JSON"):
        export(chunks, tmp_path)
    first.paths[MODE_B_FILE].write_text('{"metadata": {}, "chunks": [{"id": "x"}]}', encoding="utf-8")
    with pytest.raises(ExportError, match="chunks_mode_b_fr.json.*previous chunk lacks"):
        export(chunks, tmp_path)
