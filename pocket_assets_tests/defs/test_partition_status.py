"""What the UI shows about each PDF, read through Dagster's GraphQL (the API the UI reads).

After a build of the sample corpus, each PDF partition's latest materialization
carries its own row count; after a build where only `fr/faq.pdf` fails a gate
(a stricter copy of the suites), the build names it and exits non-zero, the
other PDFs are exported, and `fr/faq.pdf` is failed, not materialized, until it
is rebuilt clean. A chunker that crashes on every PDF shows every PDF failed for
the chunk stages and the later ones, the stages before materialized.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance
from dagster._core.workspace.context import WorkspaceRequestContext
from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql

import pocket_assets.stages.pdf_build.builders as pdf_builders
from pocket_assets.cli.main import main
from pocket_assets.export.sdk_lines import parse_sdk_file
from pocket_assets.stages.registry import CHILDREN, PAGES, PARENTS, RAW_PDF, TABLE_SUMMARIES, VALIDATED_CHUNKS
from pocket_assets.stages.store import PartitionStore
from pocket_assets_tests.pdf_factory import REPO_ROOT, SAMPLE_RAW
from pocket_assets_tests.stricter_suites import suites_refusing

PER_PDF_ASSETS = (PAGES, PARENTS, CHILDREN, VALIDATED_CHUNKS)
FAILING = "fr/faq.pdf"

PARTITION_STATUSES = """
query Statuses($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      assetPartitionStatuses {
        ... on DefaultPartitionStatuses { materializedPartitions failedPartitions }
      }
    }
  }
}
"""

LATEST_MATERIALIZATION = """
query Latest($key: AssetKeyInput!, $partitions: [String!]) {
  assetOrError(assetKey: $key) {
    ... on Asset {
      assetMaterializations(partitions: $partitions, limit: 1) {
        partition
        metadataEntries { label ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text } }
      }
    }
  }
}
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("status")
    folders = {"home": root / "dagster_home", "raw": root / "raw", "out": root / "out"}
    folders["home"].mkdir()
    shutil.copytree(SAMPLE_RAW, folders["raw"])
    folders["stricter"] = suites_refusing(Path(FAILING).name, root / "stricter")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(folders["home"]))
        patch.setenv("POCKET_ASSETS_EXPECTATIONS_DIR", str(REPO_ROOT / "expectations"))
        yield folders


def build(corpus: dict[str, Path], *pdfs: str) -> int:
    args = ["build", "--raw-dir", str(corpus["raw"]), "--output-dir", str(corpus["out"])]
    return main([*args, *(arg for pdf in pdfs for arg in ("--pdf", pdf))])


def pdf_keys(corpus: dict[str, Path]) -> list[str]:
    return sorted(str(path.relative_to(corpus["raw"])) for path in corpus["raw"].rglob("*.pdf"))


class UiApi:
    """The GraphQL the UI sends, against one code server for the whole block (starting one takes seconds)."""

    def __init__(self, context: WorkspaceRequestContext) -> None:
        self.context = context

    def query(self, query: str, variables: dict) -> dict:
        result = execute_dagster_graphql(self.context, query, variables)
        assert not result.errors, result.errors
        return result.data

    def partition_statuses(self, asset: str) -> dict[str, list[str]]:
        data = self.query(PARTITION_STATUSES, {"key": {"path": [asset]}})
        return data["assetNodeOrError"]["assetPartitionStatuses"]

    def latest_metadata(self, asset: str, key: str) -> dict[str, object]:
        data = self.query(LATEST_MATERIALIZATION, {"key": {"path": [asset]}, "partitions": [key]})
        (event,) = data["assetOrError"]["assetMaterializations"]
        assert event["partition"] == key
        return {entry["label"]: entry.get("intValue", entry.get("text")) for entry in event["metadataEntries"]}


@contextmanager
def ui_api() -> Iterator[UiApi]:
    with DagsterInstance.get() as instance:
        with define_out_of_process_context(str(REPO_ROOT / "workspace.yaml"), None, instance) as context:
            yield UiApi(context)


def test_each_partition_carries_its_own_row_count(corpus: dict[str, Path]) -> None:
    assert build(corpus) == 0
    store = PartitionStore(corpus["out"] / "stages")
    keys = pdf_keys(corpus)
    assert len(keys) == 3
    with ui_api() as ui:
        for asset in PER_PDF_ASSETS:
            for key in keys:
                rows = pq.read_metadata(store.data_path(asset, key)).num_rows
                assert ui.latest_metadata(asset.name, key)["dagster/row_count"] == rows, (asset, key)


def test_a_pdf_failing_its_gate_is_failed_and_the_others_ship(
    corpus: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POCKET_ASSETS_EXPECTATIONS_DIR", str(corpus["stricter"]))
    assert build(corpus) == 1
    printed = capsys.readouterr().out
    assert f"{FAILING}: FAILED (validated_chunks failed: {FAILING} failed 1 gate expectation(s)" in printed
    with ui_api() as ui:
        statuses = ui.partition_statuses("validated_chunks")
        assert statuses["failedPartitions"] == [FAILING]
        assert sorted(statuses["materializedPartitions"]) == ["fr/f-array.pdf", "intl/R-data.pdf"]
        assert ui.partition_statuses("children")["failedPartitions"] == [], "it failed its gates, not its chunking"

    with DagsterInstance.get() as instance:
        exported_by_failing_build = _exported_in_last_run(instance)

    monkeypatch.setenv("POCKET_ASSETS_EXPECTATIONS_DIR", str(REPO_ROOT / "expectations"))
    assert build(corpus, str(corpus["raw"] / FAILING)) == 0
    with ui_api() as ui:
        statuses = ui.partition_statuses("validated_chunks")
        assert statuses["failedPartitions"] == []
        assert FAILING in statuses["materializedPartitions"]
    assert exported_by_failing_build, "the build where one PDF failed its gate still exported the others"
    assert "f-array.pdf" in {line.source for line in parse_sdk_file(corpus["out"] / "chunks_fr.txt", has_context=True)}


def test_a_chunker_crashing_on_every_pdf_fails_every_pdf_from_there_on(
    corpus: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in chunking: every PDF shows failed for the chunk stages and the later ones (the run
    planned each of them and materialized none); the stages before stay materialized. A clean
    build turns them green."""

    def broken_chunker(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in the chunker")

    keys = pdf_keys(corpus)
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "1")
    monkeypatch.setattr(pdf_builders, "chunk_document", broken_chunker)
    assert build(corpus, *keys) == 1
    with ui_api() as ui:
        for stage in (PARENTS, CHILDREN, TABLE_SUMMARIES, VALIDATED_CHUNKS):
            statuses = ui.partition_statuses(stage.name)
            assert sorted(statuses["failedPartitions"]) == keys, stage
            assert statuses["materializedPartitions"] == [], stage
        for stage in (RAW_PDF, PAGES):
            assert ui.partition_statuses(stage.name) == {"materializedPartitions": keys, "failedPartitions": []}

    monkeypatch.undo()
    assert build(corpus, *keys) == 0
    with ui_api() as ui:
        for stage in (PARENTS, CHILDREN, TABLE_SUMMARIES, VALIDATED_CHUNKS):
            assert ui.partition_statuses(stage.name) == {"materializedPartitions": keys, "failedPartitions": []}


def _exported_in_last_run(instance: DagsterInstance) -> bool:
    last_run = instance.get_run_records(limit=1)[0].dagster_run.run_id
    export = instance.get_latest_materialization_event(AssetKey("android_export"))
    return export is not None and export.run_id == last_run
