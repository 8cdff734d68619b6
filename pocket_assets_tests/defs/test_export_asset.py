"""android_export over real builds: every PDF in, a removed PDF out, a failed PDF stale or left out (listed),
strict export refused, colliding ids tied to the PDF that causes them."""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from pocket_assets.core.device import DeviceProfile, llm_overflow
from pocket_assets.defs.assembly import ASSETS, build_resources
from pocket_assets.defs.resources import CorpusPaths, DeviceProfileResource, default_paths
from pocket_assets.export.fingerprint import STATE_FILE
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.pdf_notes import EXPORT
from pocket_assets.stages.registry import VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionManifest
from pocket_assets_tests.defs.conftest import materialize_corpus, materialize_export
from pocket_assets_tests.pdf_factory import REPO_ROOT, small_corpus, text_pdf


@pytest.fixture
def built(instance: DagsterInstance, tmp_path: Path) -> CorpusPaths:
    raw = tmp_path / "small"
    small_corpus(raw)
    paths = CorpusPaths(
        raw_dir=str(raw), output_dir=str(tmp_path / "out")
    )
    assert materialize_corpus(instance, paths).success
    assert materialize_export(instance, paths).success
    return paths


def test_export_holds_every_pdf_and_a_removed_pdf_disappears(instance: DagsterInstance, built: CorpusPaths) -> None:
    out = built.output_path
    assert {line.source for line in parse_sdk_file(out / "chunks_intl.txt", has_context=True)} == {"rules.pdf"}
    old_ids = [chunk["id"] for chunk in json.loads((out / "chunks_mode_b_intl.json").read_text())["chunks"]]

    (built.raw_path / "intl" / "rules.pdf").unlink()
    assert materialize_export(instance, built).success

    for name in ("chunks_intl.txt", "chunks_mode_b_intl.json", "chunks_intl.hepilot.jsonl"):
        assert "rules.pdf" not in (out / name).read_text(encoding="utf-8")
    redirects = json.loads((out / "id_redirects_intl.json").read_text(encoding="utf-8"))
    assert redirects["redirects"] == {chunk_id: None for chunk_id in old_ids}
    assert {line.source for line in parse_sdk_file(out / "chunks_fr.txt", has_context=True)} == {"reglement.pdf"}


def _fail_latest(paths: CorpusPaths, key: str, reason: str) -> None:
    """What a gate failure leaves: a failed manifest, the last good file kept."""
    paths.store().write_manifest(PartitionManifest("validated_chunks", key, "failed", reason=reason))


def _corpus_json(paths: CorpusPaths, corpus: str) -> dict:
    return json.loads((paths.output_path / f"chunks_mode_b_{corpus}.json").read_text(encoding="utf-8"))


def test_a_pdf_failing_its_gates_ships_its_last_good_chunks_listed_as_stale(
    instance: DagsterInstance, built: CorpusPaths
) -> None:
    before = _corpus_json(built, "fr")["chunks"]
    _fail_latest(built, "fr/reglement.pdf", "fr/reglement.pdf failed coverage")
    result = materialize_export(instance, built)
    assert result.success
    assert _corpus_json(built, "fr")["chunks"] == before, "the last good chunks ship"
    stale = _corpus_json(built, "fr")["metadata"]["stale"]
    assert stale == [
        {"pdf": "fr/reglement.pdf", "source": "reglement.pdf", "reason": "stale, its last good chunks ship: "
         "fr/reglement.pdf failed coverage"}
    ]
    metadata = result.asset_materializations_for_node("android_export")[0].metadata
    assert "fr/reglement.pdf" in metadata["stale"].value and metadata["pdfs_stale"].value == 1
    assert built.store().manifest(EXPORT, "fr/reglement.pdf").status == "stale"
    assert {line.source for line in parse_sdk_file(built.output_path / "chunks_intl.txt", has_context=True)} == {"rules.pdf"}


def test_a_pdf_without_good_chunks_is_left_out_and_listed(instance: DagsterInstance, built: CorpusPaths) -> None:
    _fail_latest(built, "fr/reglement.pdf", "fr/reglement.pdf failed json_schema")
    built.store().data_path(VALIDATED_CHUNKS, "fr/reglement.pdf").unlink()
    (built.output_path / STATE_FILE).unlink()  # no export known to have shipped it (else its last lines would ship)
    assert materialize_export(instance, built).success
    document = _corpus_json(built, "fr")
    assert document["chunks"] == [] and document["metadata"]["stale"] == []
    assert document["metadata"]["left_out"][0]["pdf"] == "fr/reglement.pdf"
    assert "failed json_schema" in document["metadata"]["left_out"][0]["reason"]
    assert _corpus_json(built, "intl")["metadata"]["total_chunks"] > 0, "the other corpus ships"


def test_strict_export_is_refused_while_a_pdf_failed(instance: DagsterInstance, built: CorpusPaths) -> None:
    out = built.output_path
    before = {path.name: path.read_bytes() for path in out.glob("chunks_*")}
    _fail_latest(built, "fr/reglement.pdf", "fr/reglement.pdf failed coverage")
    strict = CorpusPaths(
        raw_dir=built.raw_dir, output_dir=built.output_dir, export_strict=True
    )
    result = materialize_export(instance, strict)
    assert not result.success
    message = result.failure_data_for_node("android_export").user_failure_data.description
    assert "Export refused (strict export)" in message and "fr/reglement.pdf" in message
    assert {path.name: path.read_bytes() for path in out.glob("chunks_*")} == before


def test_strict_export_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POCKET_ASSETS_EXPORT_STRICT", "1")
    monkeypatch.setenv("POCKET_ASSETS_CORPORA", "fr, intl, de")
    paths = default_paths(REPO_ROOT)
    assert paths.export_strict and paths.corpus_names == ("fr", "intl", "de")
    monkeypatch.delenv("POCKET_ASSETS_EXPORT_STRICT")
    assert not default_paths(REPO_ROOT).export_strict


def test_colliding_chunk_ids_fail_corpus_ids_unique_and_leave_only_that_pdf_out(
    instance: DagsterInstance, built: CorpusPaths
) -> None:
    """`fr/Reglement.PDF` beside `fr/reglement.pdf`... both cite `reglement.pdf` once normalised: same ids
    (other bytes: a copy of the same bytes is a duplicate, exported once, not a collision)."""
    store, twin = built.store(), "fr/zz-twin.pdf"
    text_pdf(built.raw_path / twin, ["Un autre texte du règlement, assez long pour faire un morceau."])
    shutil.copy(store.data_path(VALIDATED_CHUNKS, "fr/reglement.pdf"), store.data_path(VALIDATED_CHUNKS, twin))
    manifest = store.manifest(VALIDATED_CHUNKS, "fr/reglement.pdf")
    store.write_manifest(dataclasses.replace(manifest, partition_key=twin))
    result = materialize_export(instance, built)
    assert result.success
    check = result.get_asset_check_evaluations()[0]
    assert check.check_name == "corpus_ids_unique" and not check.passed
    assert twin in check.metadata["pdfs_left_out"].value and "fr/reglement.pdf" in check.metadata["pdfs_left_out"].value
    document = _corpus_json(built, "fr")
    assert [row["pdf"] for row in document["metadata"]["left_out"]] == [twin]
    ids = [chunk["id"] for chunk in document["chunks"]]
    assert ids and len(ids) == len(set(ids))


def test_a_chunk_the_export_refuses_leaves_only_its_pdf_out(instance: DagsterInstance, built: CorpusPaths) -> None:
    """A rule the per-PDF gates do not hold (the HEPilot schema's UUIDs) is tied to the PDF breaking it."""
    store, key = built.store(), "fr/reglement.pdf"
    rows = store.read(VALIDATED_CHUNKS, key)
    rows[0]["chunk_uid"] = "not-a-uuid"
    store.write(VALIDATED_CHUNKS, key, rows, store.manifest(VALIDATED_CHUNKS, key))
    assert materialize_export(instance, built).success
    left_out = _corpus_json(built, "fr")["metadata"]["left_out"]
    assert [row["pdf"] for row in left_out] == [key]
    assert rows[0]["id"] in left_out[0]["reason"] and "hepilot" in left_out[0]["reason"].lower()
    assert _corpus_json(built, "intl")["metadata"]["total_chunks"] > 0


def test_lines_too_long_for_the_llm_in_one_corpus_refuse_the_export_before_any_corpus_is_written(
    instance: DagsterInstance, built: CorpusPaths
) -> None:
    """Every corpus is judged before any is written: a refused corpus never leaves another one published beside
    the old export of the refused one."""
    store = built.store()
    needed = {}
    for corpus, key in (("fr", "fr/reglement.pdf"), ("intl", "intl/rules.pdf")):
        lines = [(row["id"], row["embedded_tokens"]) for row in store.read(VALIDATED_CHUNKS, key)]
        needed[corpus] = llm_overflow(lines, DeviceProfile(llm_context_tokens=257)).needed_tokens
    fits, overflows = sorted(needed, key=needed.get)
    assert needed[fits] < needed[overflows], needed
    ordered = CorpusPaths(raw_dir=built.raw_dir, output_dir=built.output_dir, corpora=f"{fits},{overflows}")
    out = built.output_path
    before = {path.name: path.read_bytes() for path in out.glob("chunks_*")}
    tight = DeviceProfileResource(llm_context_tokens=needed[fits])  # the first corpus fits, the second does not
    result = materialize(
        ASSETS, instance=instance, resources={**build_resources(ordered), "device": tight},
        selection=["android_export"], raise_on_error=False,
    )  # fmt: skip
    assert not result.success
    message = result.failure_data_for_node("android_export").user_failure_data.description
    assert f"Export of corpus {overflows} refused" in message and "llm_context_tokens" in message
    assert {path.name: path.read_bytes() for path in out.glob("chunks_*")} == before
