import os
from pathlib import Path

import pandas as pd
import pytest

from pocket_assets.core.raw_folder import sha256_file
from pocket_assets.core.records import PdfIdentity, pdf_identity_from_dict, to_dict
from pocket_assets.stages.registry import RAW_PDF
from pocket_assets.stages.sources import current_sha256, file_stamp
from pocket_assets.stages.store import PartitionManifest, PartitionStore, UpstreamNotReady, stage_file_stem

IDENTITY = PdfIdentity("fr/a.pdf", "fr", "a.pdf", "ab" * 32, 10, 2, {"title": "A"})


def _write(store: PartitionStore, identity: PdfIdentity = IDENTITY) -> Path:
    manifest = PartitionManifest("raw_pdf", identity.partition_key, "ok", rows=1, source_sha256=identity.sha256)
    return store.write(RAW_PDF, identity.partition_key, [to_dict(identity)], manifest)


def test_round_trip_and_pandas_can_open_it(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    path = _write(store)
    assert path == tmp_path / "raw_pdf" / "fr" / "a.pdf.parquet"
    assert pdf_identity_from_dict(store.read(RAW_PDF, "fr/a.pdf")[0]) == IDENTITY
    assert pd.read_parquet(path)["source"].tolist() == ["a.pdf"]


def test_a_failure_keeps_the_last_good_output_but_blocks_readers(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    path = _write(store)
    before = path.read_bytes()
    store.write_manifest(PartitionManifest("raw_pdf", "fr/a.pdf", "failed", reason="a.pdf: broken"))
    assert path.read_bytes() == before
    assert store.read_last_good(RAW_PDF, "fr/a.pdf").to_pylist()[0]["source"] == "a.pdf"
    with pytest.raises(UpstreamNotReady, match="a.pdf: broken"):
        store.read(RAW_PDF, "fr/a.pdf")


def test_same_rows_give_same_bytes(tmp_path: Path) -> None:
    first = _write(PartitionStore(tmp_path / "one")).read_bytes()
    second = _write(PartitionStore(tmp_path / "two")).read_bytes()
    assert first == second


def test_no_temp_files_are_left_behind(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _write(store)
    _write(store)
    assert sorted(p.name for p in (tmp_path / "raw_pdf" / "fr").iterdir()) == ["a.pdf.manifest.json", "a.pdf.parquet"]


def test_delete_partition_removes_every_stage(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    _write(store)
    store.delete_partition("fr/a.pdf")
    assert store.manifest(RAW_PDF, "fr/a.pdf") is None
    assert not store.data_path(RAW_PDF, "fr/a.pdf").exists()


def test_names_too_long_for_the_file_system_get_short_distinct_stage_files(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    long_names = [f"fr/sub/{'é' * 120}{tail}.pdf" for tail in ("a", "b")]  # 245 bytes each in UTF-8
    for key in long_names:
        _write(store, PdfIdentity(key, "fr", key[3:], "cd" * 32, 10, 2))
    paths = [store.manifest_path(RAW_PDF, key) for key in long_names]
    assert paths[0] != paths[1] and all(path.is_file() for path in paths)
    assert all(len(path.name.encode("utf-8")) + 14 <= 255 for path in paths), "room for the atomic temp suffix"
    assert [store.manifest(RAW_PDF, key).partition_key for key in long_names] == long_names
    assert store.read(RAW_PDF, long_names[1])[0]["partition_key"] == long_names[1]
    assert stage_file_stem("fr/faq.pdf") == "fr/faq.pdf", "short names stay readable"
    store.delete_partition(long_names[0])
    assert not paths[0].exists() and paths[1].exists()


def test_many_manifests_written_at_once_read_back_each_as_written_and_leave_no_temp(tmp_path: Path) -> None:
    store = PartitionStore(tmp_path)
    manifests = [
        PartitionManifest(asset="android_export", partition_key=f"fr/sub{n % 3}/doc{n}.pdf", status="ok", extra={"n": n})
        for n in range(40)
    ]
    store.write_manifests(manifests)
    export = type("Export", (), {"name": "android_export"})()
    assert [store.manifest(export, manifest.partition_key) for manifest in manifests] == manifests
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_file_is_hashed_again_only_when_its_size_or_modification_time_changed(tmp_path: Path) -> None:
    """No re-hash of an unchanged folder at each build, and an edit is always seen (even one keeping the size)."""
    raw = tmp_path / "raw"
    (raw / "fr").mkdir(parents=True)
    pdf = raw / "fr" / "a.pdf"
    pdf.write_bytes(b"%PDF-1.7 first")
    store = PartitionStore(tmp_path / "out")
    recorded = "cd" * 32  # what raw_pdf hashed then: returned as long as the file is as it was
    manifest = PartitionManifest(
        "raw_pdf", "fr/a.pdf", "ok", rows=1, source_sha256=recorded, extra=file_stamp(pdf)
    )
    store.write(RAW_PDF, "fr/a.pdf", [to_dict(IDENTITY)], manifest)
    assert current_sha256(store, raw, ["fr/a.pdf", "fr/gone.pdf"]) == {"fr/a.pdf": recorded}

    pdf.write_bytes(b"%PDF-1.7 other")  # same size, new bytes, a later modification time
    os.utime(pdf, ns=(manifest.extra["file_mtime_ns"] + 1_000_000,) * 2)  # file clocks tick coarsely
    assert current_sha256(store, raw, ["fr/a.pdf"]) == {"fr/a.pdf": sha256_file(pdf)} != {"fr/a.pdf": recorded}
