"""Staleness from manifests: missing, failed, changed file, changed code version, fresh."""

from pathlib import Path

from pocket_assets.stages.registry import CHILDREN, PAGES, PARENTS, RAW_PDF, Stage
from pocket_assets.stages.staleness import build_fingerprint, partition_staleness
from pocket_assets.stages.store import STATUS_FAILED, STATUS_OK, PartitionManifest, PartitionStore

VERSIONS = {RAW_PDF: None, PAGES: None, PARENTS: "chunker-v1+aaaa", CHILDREN: "chunker-v1+aaaa"}
SHA = "a" * 64


def _build(store: PartitionStore, key: str, sha: str, versions: dict[Stage, str | None], upto: int | None = None) -> None:
    """Stage files (empty) with their manifests: outputs built with `versions`."""
    for stage, version in list(versions.items())[:upto]:
        store.write(stage, key, [], PartitionManifest(stage.name, key, STATUS_OK, rows=0, source_sha256=sha, code_version=version))


def test_fresh_after_a_full_build(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _build(store, "fr/a.pdf", SHA, VERSIONS)
    verdict = partition_staleness(store, "fr/a.pdf", SHA, VERSIONS)
    assert not verdict.stale and verdict.reasons == ()


def test_never_built_and_half_built(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    assert partition_staleness(store, "fr/a.pdf", SHA, VERSIONS).reasons == ("raw_pdf never built",)
    _build(store, "fr/a.pdf", SHA, VERSIONS, upto=2)
    assert partition_staleness(store, "fr/a.pdf", SHA, VERSIONS).reasons == ("parents never built",)


def test_changed_file_is_stale_from_the_first_stage(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _build(store, "fr/a.pdf", SHA, VERSIONS)
    (reason,) = partition_staleness(store, "fr/a.pdf", "b" * 64, VERSIONS).reasons
    assert reason.startswith("raw_pdf built from another version of the file (sha256 aaaaaaaaaaaa")


def test_chunker_bump_makes_chunking_stale_but_not_ingest(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _build(store, "fr/a.pdf", SHA, VERSIONS)
    bumped = {**VERSIONS, PARENTS: "chunker-v2+aaaa", CHILDREN: "chunker-v2+aaaa"}
    (reason,) = partition_staleness(store, "fr/a.pdf", SHA, bumped).reasons
    assert reason == "parents built with other settings: chunker-v1+aaaa, current is chunker-v2+aaaa"


def test_failed_last_attempt_is_stale(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _build(store, "fr/a.pdf", SHA, VERSIONS)
    store.write_manifest(PartitionManifest("children", "fr/a.pdf", STATUS_FAILED, reason="boom", source_sha256=SHA))
    assert partition_staleness(store, "fr/a.pdf", SHA, VERSIONS).reasons == ("children last failed: boom",)


def test_fingerprint_follows_file_and_code_versions() -> None:
    same = build_fingerprint(SHA, VERSIONS)
    assert same == build_fingerprint(SHA, dict(reversed(list(VERSIONS.items()))))
    assert same != build_fingerprint("b" * 64, VERSIONS)
    assert same != build_fingerprint(SHA, {**VERSIONS, PARENTS: "chunker-v2+aaaa"})


def test_a_stage_file_missing_or_not_the_size_recorded_is_stale(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _build(store, "fr/a.pdf", SHA, VERSIONS)
    store.data_path(PAGES, "fr/a.pdf").write_bytes(b"PAR1")
    (reason,) = partition_staleness(store, "fr/a.pdf", SHA, VERSIONS).reasons
    assert reason.startswith("pages: its pages file is damaged (4 bytes, ")
    store.data_path(PAGES, "fr/a.pdf").unlink()
    assert partition_staleness(store, "fr/a.pdf", SHA, VERSIONS).reasons == ("pages: its pages file is missing (a.pdf.parquet)",)
