"""The Dagster UI as a corpus maintainer sees it, in a real browser, after a real run where one PDF fails.

One `dagster-webserver` over a temporary instance and a copy of the sample
corpus; every PDF registered as a partition and built by one `build_corpus` run
launched through GraphQL, under a stricter copy of the suites that only
`fr/faq.pdf` fails; then headless Chromium opens the asset graph, the asset
page, the Partitions tab (that PDF red, the others green), one partition's
materialization (its own row count), the plot by partition and the failed
check's offending chunks. Screenshots of each page land in
`test-artifacts/screenshots/` (or $POCKET_ASSETS_ARTIFACTS) for a human to look at.

Without Chromium, chromedriver or selenium the test skips, except under CI=true
where a skipped browser test would hide a broken UI.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from pocket_assets.core.raw_folder import discover_pdfs
from pocket_assets_tests.e2e.system_browser import require_browser
from pocket_assets_tests.e2e.webserver import (
    Webserver,
    add_dynamic_partitions,
    find_job,
    launch_partition_range_run,
    mark_first_visit_done,
    run_errors,
    running_webserver,
    wait_for_run_end,
    write_instance_yaml,
)
from pocket_assets_tests.pdf_factory import REPO_ROOT, SAMPLE_RAW
from pocket_assets_tests.stricter_suites import suites_refusing

if TYPE_CHECKING:
    from pocket_assets_tests.e2e.browser import Browser

JOB = "build_corpus"
PARTITIONS_DEFINITION = "pdfs"
ASSETS = ("raw_pdf", "pages", "parents", "children", "table_summaries", "validated_chunks", "android_export")
GROUPS = ("ingest", "chunking", "quality", "export")
FAILING_PDF = "fr/faq.pdf"
GOOD_PDF = "fr/f-array.pdf"
# What a maintainer reads for one PDF: its own counts, token statistics, coverage, preview.
PDF_METADATA = ("chunks_child", "tokens_min", "tokens_median", "tokens_p95", "tokens_max", "pages_without_chunks", "preview")

pytestmark = pytest.mark.timeout(420)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webserver]:
    """A webserver whose instance holds one run over every sample PDF, failed because one PDF failed its gate."""
    require_browser()  # before the minute it takes to start the server and build the corpus
    root = tmp_path_factory.mktemp("ui")
    raw_dir = root / "raw"
    shutil.copytree(SAMPLE_RAW, raw_dir)
    dagster_home = root / "dagster_home"
    write_instance_yaml(dagster_home)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(dagster_home),
        "POCKET_ASSETS_RAW_DIR": str(raw_dir),
        "POCKET_ASSETS_OUTPUT_DIR": str(root / "processed"),
        "POCKET_ASSETS_EXPECTATIONS_DIR": str(suites_refusing(Path(FAILING_PDF).name, root / "stricter")),
    }
    with running_webserver(
        workspace=REPO_ROOT / "workspace.yaml",
        cwd=REPO_ROOT,
        env=env,
        log_path=root / "webserver.log",
        executable=Path(sys.executable).parent / "dagster-webserver",  # the one of the venv running pytest
    ) as webserver:
        address = find_job(webserver, JOB)
        keys = discover_pdfs(raw_dir)
        add_dynamic_partitions(webserver, address, PARTITIONS_DEFINITION, keys)
        run_id = launch_partition_range_run(webserver, address, JOB, keys[0], keys[-1])
        status = wait_for_run_end(webserver, run_id)
        errors = run_errors(webserver, run_id)
        assert status == "FAILURE" and FAILING_PDF in errors, f"run {run_id} {status}:\n{errors}"
        mark_first_visit_done(webserver)
        yield webserver


def test_asset_graph_shows_every_asset_in_its_group(server: Webserver, browser: Browser, screenshots: Path) -> None:
    browser.open(f"{server.url}/asset-groups")
    browser.wait_for_texts(["Global asset lineage", *GROUPS])
    # The graph starts with groups collapsed; its settings menu expands them.
    browser.click("(//button[.//*[@aria-label='settings']])[last()]")
    expand = browser.elements("//*[text()='Expand all groups']")
    if expand:
        expand[0].click()
    browser.press_escape()
    browser.wait_for_texts([*GROUPS, *ASSETS])
    browser.screenshot(screenshots / "ui_01_asset_graph.png")


def test_asset_page_shows_description_group_kinds_and_job(
    server: Webserver, browser: Browser, screenshots: Path
) -> None:
    browser.open(f"{server.url}/assets/validated_chunks")
    browser.wait_for_texts(
        ["Description", "Latest materialization", "Latest check results", "quality", "Great Expectations", JOB]
    )
    browser.screenshot(screenshots / "ui_02_validated_chunks_overview.png")


def test_partitions_tab_shows_the_failed_pdf_red(server: Webserver, browser: Browser, screenshots: Path) -> None:
    statuses = server.graphql(PARTITION_STATUSES)["assetNodeOrError"]["assetPartitionStatuses"]
    assert statuses["failedPartitions"] == [FAILING_PDF]
    assert sorted(statuses["materializedPartitions"]) == [GOOD_PDF, "intl/R-data.pdf"]
    browser.open(f"{server.url}/assets/validated_chunks?view=partitions&partition={quote(FAILING_PDF, safe='')}")
    browser.wait_for_texts([FAILING_PDF, "Failed", GOOD_PDF])
    browser.screenshot(screenshots / "ui_03_partitions_failed_pdf.png")


def test_one_pdf_materialization_shows_its_own_numbers(
    server: Webserver, browser: Browser, screenshots: Path
) -> None:
    event = server.graphql(ROW_COUNT, {"partitions": [GOOD_PDF]})["assetOrError"]["assetMaterializations"][0]
    (row_count,) = [entry["intValue"] for entry in event["metadataEntries"] if entry["label"] == "dagster/row_count"]
    browser.open(f"{server.url}/assets/validated_chunks?view=partitions&partition={quote(GOOD_PDF, safe='')}")
    browser.wait_for_texts([GOOD_PDF, "Materialized", "Latest materialization", str(row_count), *PDF_METADATA])
    browser.screenshot(screenshots / "ui_04_partition_own_numbers.png")


def test_plot_by_partition_draws_each_pdf(server: Webserver, browser: Browser, screenshots: Path) -> None:
    """The asset overview's metadata plots, one point per PDF (the Plots / Partitions toggles)."""
    browser.open(f"{server.url}/assets/validated_chunks")
    browser.wait_for_texts(["Metadata", "Plots"])
    browser.click("//button[normalize-space()='Plots']")
    browser.click("(//button[normalize-space()='Partitions'])[last()]")
    browser.wait_for_texts(["dagster/row_count", "chunks_child", "tokens_median"])
    browser.scroll_to("(//button[normalize-space()='Plots'])[last()]")
    browser.screenshot(screenshots / "ui_05_plot_by_partition.png")


def test_failed_check_lists_the_offending_chunks(server: Webserver, browser: Browser, screenshots: Path) -> None:
    browser.open(f"{server.url}/assets/validated_chunks?view=checks")
    browser.wait_for_texts(["expectations", "json_schema", "coverage", "Failed"])
    browser.click("(//*[normalize-space(text())='expectations'])[1]")
    browser.wait_for_texts(["expectations_failed", "pdfs_failing"])
    browser.click("(//*[contains(text(), 'Show Markdown')])[1]")  # the `failures` table
    browser.wait_for_texts([FAILING_PDF, "source_is_pdf", "faq.pdf-p001-parent000", "start of its text"])
    browser.screenshot(screenshots / "ui_06_check_offending_chunks.png")


PARTITION_STATUSES = """
{
  assetNodeOrError(assetKey: {path: ["validated_chunks"]}) {
    ... on AssetNode {
      assetPartitionStatuses { ... on DefaultPartitionStatuses { materializedPartitions failedPartitions } }
    }
  }
}
"""

ROW_COUNT = """
query RowCount($partitions: [String!]) {
  assetOrError(assetKey: {path: ["validated_chunks"]}) {
    ... on Asset {
      assetMaterializations(partitions: $partitions, limit: 1) {
        metadataEntries { label ... on IntMetadataEntry { intValue } }
      }
    }
  }
}
"""
