"""The Dagster UI as a corpus maintainer sees it, in a real browser, after a real run.

One `dagster-webserver` over a temporary instance and a copy of the sample
corpus; every PDF registered as a partition and built by one `build_corpus` run
launched through GraphQL; then headless Chromium opens the asset graph, the
asset page, one PDF's materialization and events, and the check results.
Screenshots of each page land in `test-artifacts/screenshots/` (or
$POCKET_ASSETS_ARTIFACTS) for a human to look at.

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

from pocket_assets.core.pdf import discover_pdfs
from pocket_assets_tests.e2e.system_browser import missing_browser_parts
from pocket_assets_tests.e2e.webserver import (
    Webserver,
    add_dynamic_partitions,
    find_job,
    launch_partition_range_run,
    mark_first_visit_done,
    running_webserver,
    wait_for_run_success,
    write_instance_yaml,
)
from pocket_assets_tests.pdf_factory import REPO_ROOT, SAMPLE_RAW

if TYPE_CHECKING:
    from pocket_assets_tests.e2e.browser import Browser

JOB = "build_corpus"
PARTITIONS_DEFINITION = "pdfs"
ASSETS = ("raw_pdf", "pages", "parents", "children", "table_summaries", "validated_chunks", "android_export")
GROUPS = ("ingest", "chunking", "quality", "export")
CHECKS = ("expectations", "json_schema", "coverage")
PDF = "fr/faq.pdf"
# What a maintainer reads for one PDF: chunk count, token histogram, versions.
PDF_METADATA = ("chunks", "tokens_min", "tokens_median", "tokens_p95", "tokens_max", "chunker_version", "preview")

pytestmark = pytest.mark.timeout(420)


def _require_browser() -> None:
    missing = missing_browser_parts()
    if not missing:
        return
    reason = f"browser test needs {', '.join(missing)}"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Webserver]:
    """A webserver whose instance holds one successful run over every sample PDF."""
    _require_browser()  # before the minute it takes to start the server and build the corpus
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
        "POCKET_ASSETS_EXPECTATIONS_DIR": str(REPO_ROOT / "expectations"),
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
        wait_for_run_success(webserver, run_id)
        mark_first_visit_done(webserver)
        yield webserver


@pytest.fixture(scope="module")
def browser(server: Webserver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    # Imported here: selenium may be absent, and the server fixture skips (or fails) first.
    from pocket_assets_tests.e2e.browser import headless_chromium

    with headless_chromium(tmp_path_factory.mktemp("chromium_profile")) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def screenshots() -> Path:
    """`test-artifacts/screenshots/` (gitignored), or the folder named by POCKET_ASSETS_ARTIFACTS."""
    return Path(os.environ.get("POCKET_ASSETS_ARTIFACTS") or REPO_ROOT / "test-artifacts" / "screenshots")


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


def test_one_pdf_materialization_shows_its_numbers(server: Webserver, browser: Browser, screenshots: Path) -> None:
    browser.open(f"{server.url}/assets/validated_chunks?view=partitions&partition={quote(PDF, safe='')}")
    browser.wait_for_texts([PDF, "Materialized", "Latest materialization", JOB])
    browser.screenshot(screenshots / "ui_03_partition_materialized.png")

    browser.open(f"{server.url}/assets/validated_chunks?view=events")
    browser.wait_for_texts([PDF])
    _show_event_with(browser, PDF, PDF_METADATA)
    browser.screenshot(screenshots / "ui_04_partition_event_metadata.png")


def test_check_results_are_shown_as_passed(server: Webserver, browser: Browser, screenshots: Path) -> None:
    browser.open(f"{server.url}/assets/validated_chunks?view=checks")
    shown = browser.wait_for_texts([f"Checks ({len(CHECKS)})", *CHECKS, "Passed", "pdfs_checked"])
    for check in CHECKS:
        assert f"{check}\nSucceeded" in shown, f"check {check} not shown as succeeded:\n{shown[:3000]}"
    browser.screenshot(screenshots / "ui_05_check_results.png")


def _show_event_with(browser: Browser, partition: str, texts: tuple[str, ...]) -> None:
    """Open the events of `partition` one by one until one shows all `texts` (its own numbers)."""
    rows = browser.elements(f"//span[text()='{partition}']")  # the event list; the detail links it as <a>
    assert rows, f"no event listed for {partition}"
    for index in range(len(rows)):
        browser.elements(f"//span[text()='{partition}']")[index].click()
        try:
            browser.wait_for_texts([f"Partition {partition}", *texts], timeout=5)
            return
        except AssertionError:
            continue
    browser.wait_for_texts([f"Partition {partition}", *texts], timeout=1)  # fail, naming what is missing
