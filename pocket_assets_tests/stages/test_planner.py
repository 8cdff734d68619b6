"""The one plan: every PDF of the folder with why it is to build, its copies within its corpus, the files not built."""

import shutil
from pathlib import Path

from pocket_assets.core.raw_folder import scan_raw_folder
from pocket_assets.stages.planner import describe, duplicates_among, plan_corpus
from pocket_assets.stages.registry import PAGES, PARENTS, RAW_PDF
from pocket_assets.stages.sources import current_sha256, file_digests
from pocket_assets.stages.store import STATUS_OK, PartitionManifest, PartitionStore
from pocket_assets_tests.pdf_factory import text_pdf

CORPORA = ("fr", "intl")
VERSIONS = {RAW_PDF: None, PAGES: None, PARENTS: "chunker-v1+aaaa"}


def _folder(raw: Path) -> None:
    text_pdf(raw / "fr" / "a.pdf", ["Premier document."])
    text_pdf(raw / "fr" / "b.pdf", ["Deuxième document."])
    shutil.copyfile(raw / "fr" / "a.pdf", raw / "fr" / "a (copie).pdf")
    (raw / "intl").mkdir()
    shutil.copyfile(raw / "fr" / "a.pdf", raw / "intl" / "a.pdf")
    text_pdf(raw / "misc" / "notes.pdf", ["Outside every corpus."])


def _built(store: PartitionStore, key: str, sha256: str) -> None:
    for stage in VERSIONS:
        store.write(stage, key, [], PartitionManifest(stage.name, key, STATUS_OK, source_sha256=sha256, code_version=VERSIONS[stage]))


def test_the_plan_names_each_pdf_its_copies_within_a_corpus_and_the_files_not_built(tmp_path: Path) -> None:
    raw, store = tmp_path / "raw", PartitionStore(tmp_path / "stages")
    _folder(raw)
    scan = scan_raw_folder(raw, CORPORA)
    sha256 = current_sha256(store, raw, scan.keys)
    _built(store, "fr/b.pdf", sha256["fr/b.pdf"])
    plan = plan_corpus(store, scan, sha256, VERSIONS, {}, CORPORA)
    assert plan.duplicates == {"fr/a.pdf": "fr/a (copie).pdf"}, "the first key of two copies never built"
    assert plan.partition_keys == ["fr/a (copie).pdf", "fr/b.pdf", "intl/a.pdf"], "the same bytes in intl are its own"
    assert [pdf.key for pdf in plan.to_build] == ["fr/a (copie).pdf", "intl/a.pdf"]
    assert [pdf.key for pdf in plan.up_to_date] == ["fr/b.pdf"]
    assert describe(plan.to_build) == "fr/a (copie).pdf: raw_pdf never built\nintl/a.pdf: raw_pdf never built"
    assert [name for name, _ in plan.not_built] == ["misc/notes.pdf"]
    assert plan_corpus(store, scan, sha256, VERSIONS, {}, CORPORA, keep_duplicates=True).duplicates == {}


def test_which_copy_is_kept_depends_on_the_folder_alone(tmp_path: Path) -> None:
    """A copy arriving under a name that sorts first is kept, whatever was built before: the plan of a folder is
    the plan a fresh build of it makes."""
    raw, store = tmp_path / "raw", PartitionStore(tmp_path / "stages")
    _folder(raw)
    scan = scan_raw_folder(raw, CORPORA)
    sha256 = current_sha256(store, raw, scan.keys)
    _built(store, "fr/a.pdf", sha256["fr/a.pdf"])
    plan = plan_corpus(store, scan, sha256, VERSIONS, {}, CORPORA)
    assert plan.duplicates == {"fr/a.pdf": "fr/a (copie).pdf"}
    assert duplicates_among(store, raw, scan.keys, ["fr/a.pdf", "fr/b.pdf"], CORPORA) == {
        "fr/a.pdf": "fr/a (copie).pdf"
    }, "a run finds its copies by hashing only files of their size"


def test_one_change_detector_reuses_a_digest_while_the_stamp_holds(tmp_path: Path) -> None:
    raw, store = tmp_path / "raw", PartitionStore(tmp_path / "stages")
    text_pdf(raw / "fr" / "a.pdf", ["Premier document."])
    first = file_digests(store, raw, ["fr/a.pdf"])
    (raw / "fr" / "a.pdf").write_bytes(b"not read: the stamp below is the old one")
    kept = file_digests(store, raw, ["fr/a.pdf"], {"fr/a.pdf": first["fr/a.pdf"].__class__(
        first["fr/a.pdf"].sha256, {**first["fr/a.pdf"].stamp, "file_size": -1})})
    assert kept["fr/a.pdf"].sha256 != first["fr/a.pdf"].sha256, "a stamp that differs: the file is read again"
    again = file_digests(store, raw, ["fr/a.pdf"], kept)
    assert again["fr/a.pdf"] is kept["fr/a.pdf"], "the same stamp: the known digest, no read"
