"""What a corpus maintainer sees in the Dagster UI, walked in a real browser, with a screenshot of every page.

The scenario, in the order a maintainer lives it:

1. `pocket-assets build` (a real subprocess) builds a copy of the sample corpus plus a truncated PDF
   (which fails at `raw_pdf`) with the default settings, into a temporary instance.
2. `dagster-webserver` and `dagster-daemon` start over that instance with `CHUNK_SIZE_TOKENS=300` and
   a stricter copy of the suites under which `fr/faq.pdf` fails its gate.
3. The walk, one step per page or action, each step's outcome kept (a failed step does not hide the
   next ones; the test for each point re-raises its steps' errors):

   - `cli_runs`: Overview > Timeline, Jobs > build_corpus > Runs, the Runs list after the CLI build;
   - `staleness`: the asset graph node, the asset page and one partition's page of `parents`;
   - `up_to_date`: the `up_to_date` check of `validated_chunks` (Checks tab) and its table;
   - `failed_pdf_page`: the failed (never built) PDF's partition page and its historical events;
   - `folder_change`: the Partitions tab before; a PDF dropped into the raw folder and one removed while
     the daemon runs, a mistyped key added through "Add a partition" (`materialize_all`: the graph's
     "Materialize all" dialog, where that link lives);
   - `failed_pdf_run`: the command-line run's page (while the sensor has yet to tick);
   - `folder_sync`: the Partitions tab once the sensor made them the folder's PDFs;
   - `backfill_launch`: the recipe (filter the graph to the per-PDF stages, "Materialize all", "All",
     "Launch backfill") over every PDF, one of which fails;
   - `sensor_log` (while the backfill runs): the sensor's ticks, a skip reason, the log of the tick
     that added and removed partitions;
   - `backfill`: its status in the Backfills list and on its page, the runs' tags, the Timeline and the
     job's runs afterwards;
   - `failed_after_build`: the partition page of a PDF built before and failed since, and the run's page.

Assertions are on page texts (and, for what a page cannot say reliably, on the GraphQL answers the
UI reads), never on pixels. Screenshots land in `test-artifacts/screenshots/` (or
$POCKET_ASSETS_ARTIFACTS) as `walk_NN_*.png`. Without Chromium, chromedriver or selenium the test
skips, except under CI=true.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

from pocket_assets_tests.e2e.system_browser import require_browser
from pocket_assets_tests.e2e.webserver import (
    RepositoryAddress,
    Webserver,
    add_dynamic_partitions,
    find_job,
    mark_first_visit_done,
    running_daemon,
    running_webserver,
    wait_for_daemons,
    write_instance_yaml,
)
from pocket_assets_tests.pdf_factory import ARTICLE_FR, REPO_ROOT, SAMPLE_RAW, text_pdf, truncated_pdf
from pocket_assets_tests.stricter_suites import suites_refusing

if TYPE_CHECKING:
    from pocket_assets_tests.e2e.browser import Browser

# The module fixture's setup (a build, two servers, a backfill) counts against the first test's timeout.
pytestmark = pytest.mark.timeout(600)

SAMPLE_KEYS = ("fr/f-array.pdf", "fr/faq.pdf", "intl/R-data.pdf")
TRUNCATED = "intl/truncated.pdf"  # fails at raw_pdf in the command-line build, removed from the folder later
NEW_PDF = "fr/nouveau.pdf"  # dropped into the folder while the daemon runs
JUNK = "fr/typo.pdf"  # a key typed by hand in "Add a partition"
REFUSED = "fr/faq.pdf"  # built by the command line, refused by the stricter suites the UI runs with
STALE_PDF = "fr/f-array.pdf"
# The per-PDF stages on the asset graph: every asset on a path from raw_pdf to validated_chunks.
STAGES_SELECTION = "key:raw_pdf+ and +key:validated_chunks"
SETTING_VARIABLES = (
    "CHUNK_SIZE_TOKENS",
    "CHUNK_OVERLAP_TOKENS",
    "EMBED_MAX_TOKENS",
    "POCKET_ASSETS_DEVICE_PRESET",
    "POCKET_ASSETS_EXPECTATIONS_DIR",
    "POCKET_ASSETS_RANGE_SIZE",
    "POCKET_ASSETS_TOKENIZER",
)
PAGE_WAIT = 60
SENSOR_WAIT = 150  # pdf_folder_sensor ticks every 30 s; the daemon may be busy with a run
BACKFILL_WAIT = 360


@dataclass
class Walk:
    """The running UI, the browser and what each step of the walk ended with."""

    server: Webserver
    browser: Browser
    address: RepositoryAddress
    shots: Path
    raw: Path
    cli_run_id: str
    outcomes: dict[str, str | None] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def run(self, name: str, step: Callable[[Walk], None]) -> None:
        started = time.monotonic()
        try:
            step(self)
        except Exception:  # kept for the test of this point; the walk goes on
            self.outcomes[name] = traceback.format_exc()
            try:
                self.browser.screenshot(self.shots / f"walk_failed_{name}.png")
            except Exception:
                pass
        else:
            self.outcomes[name] = None
        print(
            f"walk step {name}: {time.monotonic() - started:.0f} s, {'ok' if self.outcomes[name] is None else 'FAILED'}"
        )

    def check(self, name: str) -> None:
        assert name in self.outcomes, f"step {name} never ran"
        if self.outcomes[name] is not None:
            pytest.fail(f"step {name} failed:\n{self.outcomes[name]}", pytrace=False)

    def page(self, path: str, texts: list[str], shot: str | None = None) -> str:
        """Open a page of the UI, wait for its texts, screenshot it; returns the page's text."""
        self.browser.open(f"{self.server.url}{path}")
        shown = self.browser.wait_for_texts(texts, timeout=PAGE_WAIT)
        if shot:
            self.shot(shot)
        return shown

    def shot(self, name: str) -> None:
        time.sleep(0.5)  # the last rows and tags settle
        self.browser.screenshot(self.shots / f"{name}.png")

    def graphql(self, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.server.graphql(query, variables)


def _partition_page(asset: str, key: str) -> str:
    return f"/assets/{asset}?view=partitions&partition={quote(key, safe='')}"


def _wait_until(what: str, condition: Callable[[], Any], timeout: float, every: float = 3) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        answer = condition()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


# --- the steps -------------------------------------------------------------------------------------------


def cli_runs(walk: Walk) -> None:
    """Runs made by `pocket-assets build` run in its own process (execute_in_process): they have no code
    location (no remote job origin), so the Timeline drops them and the job's Runs tab (filtered on the
    code location's `.dagster/repository` tag) lists none; the Runs list shows them."""
    runs = walk.graphql(RUNS)["runsOrError"]["results"]
    cli = [run for run in runs if run["jobName"] in ("build_corpus", "export_corpus")]
    assert len(cli) == 2 and all(run["repositoryOrigin"] is None for run in cli), cli
    shown = walk.page("/overview/timeline", ["Timeline"])
    shown = walk.browser.wait_for_any(["No runs or scheduled ticks in this time period", "pocket_assets"], PAGE_WAIT)
    walk.shot("walk_01_timeline_after_cli_build")
    assert "build_corpus" not in shown and "export_corpus" not in shown, shown
    walk.page(
        "/locations/pocket_assets/jobs/build_corpus/runs",
        ["job:build_corpus", "No runs found"],
        "walk_02_job_runs_after_cli_build",
    )
    walk.page(
        "/runs",
        [
            "pocket_assets/pdfs: 4 PDFs: fr/f-array.pdf .. intl/truncated.pdf",
            "build_corpus",
            "export_corpus",
            "Manually launched",
            "Failure",
        ],
        "walk_03_runs_list_after_cli_build",
    )


def staleness(walk: Walk) -> None:
    """After CHUNK_SIZE_TOKENS 450 -> 300: each partition of `parents` is stale ("has a new code version"), but
    Dagster computes no staleness for a partitioned asset as a whole, so the graph node and the asset page say
    nothing; only a partition's page has the "Unsynced" tag, whose popover gives the cause."""
    node = walk.graphql(STALENESS, {"key": {"path": ["parents"]}, "partitions": list(SAMPLE_KEYS)})["assetNodeOrError"]
    assert node["staleStatus"] == "FRESH" and node["staleCauses"] == [], node
    assert node["staleStatusByPartition"] == ["STALE"] * 3, node
    assert all(
        causes == [{"reason": "has a new code version", "category": "CODE"}]
        for causes in node["staleCausesByPartition"]
    )
    raw = walk.graphql(STALENESS, {"key": {"path": ["raw_pdf"]}, "partitions": list(SAMPLE_KEYS)})["assetNodeOrError"]
    assert raw["staleStatusByPartition"] == ["FRESH"] * 3, raw

    shown = walk.page(
        f"/asset-groups~{quote('key:parents', safe='')}/",
        ["parents", "4 partitions", "(1 failed)"],
        "walk_04_graph_node_parents",
    )
    assert "Unsynced" not in shown and "Stale" not in shown, shown
    shown = walk.page(
        "/assets/parents", ["Latest materialization", "Description", "chunking"], "walk_05_asset_page_parents"
    )
    assert "Unsynced" not in shown and "Stale" not in shown, shown
    walk.page(_partition_page("parents", STALE_PDF), [STALE_PDF, "Materialized", "Unsynced (1)"])
    walk.browser.hover("//*[starts-with(normalize-space(text()), 'Unsynced')]")
    walk.browser.wait_for_texts(
        ["1 change since last materialization", "1 code version change", "has a new code version"], PAGE_WAIT
    )
    walk.shot("walk_06_partition_page_unsynced_popover")


def up_to_date(walk: Walk) -> None:
    """The `up_to_date` check (recorded by pdf_folder_sensor when the verdicts change) lists every PDF to build
    with its reason, the setting change included, on the Checks tab."""
    expected = f"{len(SAMPLE_KEYS) + 1} of {len(SAMPLE_KEYS) + 1} PDF(s) to build"

    def latest() -> bool:
        executions = walk.graphql(UP_TO_DATE)["assetCheckExecutions"]
        return bool(executions) and executions[0]["evaluation"]["description"] == expected

    _wait_until(f"up_to_date saying {expected!r}", latest, SENSOR_WAIT)
    walk.page("/assets/validated_chunks?view=checks", ["up_to_date", "expectations", "json_schema", "coverage"])
    walk.browser.click("(//*[normalize-space(text())='up_to_date'])[1]")
    walk.browser.wait_for_texts([expected, "pdfs_to_build", "to_build", "not_built"], PAGE_WAIT)
    walk.shot("walk_07_up_to_date_check")
    walk.browser.click("//tr[td[normalize-space()='to_build']]//a[contains(., 'Show Markdown')]")
    walk.browser.wait_for_texts(
        [
            *SAMPLE_KEYS,
            "child_tokens (CHUNK_SIZE_TOKENS) 450 → 300",
            TRUNCATED,
            "raw_pdf last failed",
            "damaged or truncated PDF",
        ],
        PAGE_WAIT,
    )
    walk.shot("walk_08_up_to_date_to_build")


def failed_pdf_page(walk: Walk) -> None:
    """A PDF that never built: its partition page says only "Run … failed, and did not materialize this asset"
    (Dagster shows the metadata of the latest materialization and of the observations after it, and there is
    none); its reason, our observation's description, is one click away in "View all historical events"."""
    shown = walk.page(
        _partition_page("validated_chunks", TRUNCATED),
        [TRUNCATED, "failed, and did not materialize this asset.", "No metadata entries"],
        "walk_09_failed_pdf_partition_page",
    )
    assert "damaged or truncated PDF" not in shown, "the reason is on the page itself now: update the README"
    walk.browser.click("//button[contains(., 'View all historical events')]")
    walk.browser.click("(//button[contains(@class, 'disclosureTriangle')])[1]")
    walk.browser.wait_for_texts(["Observation", "damaged or truncated PDF", "status", "skipped", "run_id"], PAGE_WAIT)
    walk.shot("walk_10_failed_pdf_historical_events")


def failed_pdf_run(walk: Walk) -> None:
    """The run's page has the PDF's own line (ERROR) and, at the end, the step's `Failure` naming every failed PDF
    with its reason, followed by a stack trace (and the run's failure repeating both)."""
    shown = walk.page(
        f"/runs/{walk.cli_run_id}", ["STEP_FAILURE", "RUN_FAILURE", "Stack Trace"], "walk_11_cli_run_failure"
    )
    assert (
        f"dagster._core.definitions.events.Failure: 1 of 4 PDF(s) failed: {TRUNCATED}: truncated.pdf: damaged" in shown
    )
    walk.browser.type_into("//input[@placeholder='Filter…']", TRUNCATED)
    walk.browser.wait_for_texts(
        ["ERROR", f"{TRUNCATED}: raw_pdf failed: truncated.pdf: damaged or truncated PDF", "[4/4 done, 1 failed]"],
        PAGE_WAIT,
    )
    walk.shot("walk_12_cli_run_pdf_error_line")


def materialize_all(walk: Walk) -> None:
    """The asset graph's "Materialize all" selects every executable asset: the six per-PDF stages, the export
    and the two evaluation assets; its dialog opens on 0 partitions ("Custom", nothing chosen). Its "Add a
    partition" link registers any key typed there."""
    nodes = walk.graphql(ASSET_NODES)["assetNodes"]
    executable = sorted(node["assetKey"]["path"][-1] for node in nodes if node["isExecutable"])
    assert executable == sorted(
        [
            "raw_pdf",
            "pages",
            "parents",
            "children",
            "table_summaries",
            "validated_chunks",
            "android_export",
            "retrieval_eval",
            "child_embeddings",
        ]
    ), executable
    walk.page("/asset-groups", ["Global asset lineage", "Materialize all (9)"])
    walk.browser.click("//button[contains(., 'Materialize all')]")
    walk.browser.wait_for_texts(
        ["Launch runs to materialize 9 assets", "0 partitions", "Custom", "Add a partition"], PAGE_WAIT
    )
    walk.shot("walk_14_materialize_all_dialog")
    walk.browser.click("//*[normalize-space(text())='Add a partition']")
    walk.browser.type_into("//input[@placeholder='name']", JUNK)
    walk.browser.click("//button[normalize-space()='Save']")
    # The dialog counts the typed key as a partition; the folder sensor may delete it at its next tick, any
    # moment from now (folder_sync checks that it did, and said why).
    walk.browser.wait_for_texts(["1 partition", JUNK], PAGE_WAIT)
    walk.browser.click("//button[normalize-space()='Cancel']")


def folder_change(walk: Walk) -> None:
    """The Partitions tab before; a PDF dropped into the folder, one removed, a key typed in "Add a partition"."""
    walk.page("/assets/raw_pdf?view=partitions", ["4 Partitions Selected", TRUNCATED], "walk_13_partitions_before")
    text_pdf(walk.raw / NEW_PDF, [ARTICLE_FR * 3])
    (walk.raw / TRUNCATED).unlink()
    walk.notes["folder_changed"] = time.monotonic()
    walk.run("materialize_all", materialize_all)
    if walk.outcomes["materialize_all"] is not None:  # the sensor's side is checked all the same
        add_dynamic_partitions(walk.server, walk.address, "pdfs", [JUNK])


def folder_sync(walk: Walk) -> None:
    """With the daemon running, pdf_folder_sensor makes the partitions the folder's PDFs within a tick (every
    30 s): a PDF dropped in is added, a removed one and a key typed by hand are deleted, each named in the
    tick's log."""
    assert walk.outcomes.get("folder_change") is None, "the folder was not changed"
    wanted = {*SAMPLE_KEYS, NEW_PDF}
    _wait_until(f"partitions {sorted(wanted)}", lambda: set(_partition_keys(walk)) == wanted, SENSOR_WAIT, every=1)
    print(
        f"the partitions followed the folder {time.monotonic() - walk.notes['folder_changed']:.0f} s after it changed"
    )
    shown = walk.page("/assets/raw_pdf?view=partitions", ["4 Partitions Selected", NEW_PDF], "walk_15_partitions_after")
    assert TRUNCATED not in shown and JUNK not in shown, shown

    lines = {
        f"added partition {NEW_PDF}: a new PDF of the raw folder",
        f"removed partition {TRUNCATED} and its stage files: no such PDF in a corpus folder of the raw folder",
        f"removed partition {JUNK} and its stage files: no such PDF in a corpus folder of the raw folder",
    }
    assert lines <= set().union(*_tick_logs(walk)), _tick_logs(walk)


def _ticks(walk: Walk) -> list[dict[str, Any]]:
    selector = {**walk.address.selector(), "sensorName": "pdf_folder_sensor"}
    return walk.graphql(SENSOR_TICKS, {"selector": selector})["sensorOrError"]["sensorState"]["ticks"]


def _tick_logs(walk: Walk) -> list[set[str]]:
    return [{event["message"] for event in tick["logEvents"]["events"]} for tick in _ticks(walk)]


def sensor_log(walk: Walk) -> None:
    """The sensor's page: a tick that only kept the partitions reads "0 runs requested", its counts in the tag's
    tooltip; one that also requested the export reads "1 run requested"; "View logs" names each partition
    added or removed, and why."""
    ticks = _ticks(walk)
    junk_row = next(
        row for row, tick in enumerate(ticks) if any(JUNK in e["message"] for e in tick["logEvents"]["events"])
    )
    skipped_row = next(row for row, tick in enumerate(ticks) if tick["status"] == "SKIPPED" and tick["skipReason"])
    reason = ticks[skipped_row]["skipReason"]
    assert re.fullmatch(r"4 PDF\(s\) in .*: \d+ added, \d+ removed, \d+ new or changed, \d+ to build", reason), reason
    walk.page("/locations/pocket_assets/sensors/pdf_folder_sensor", ["Latest tick", "View logs", "pdf_folder_sensor"])
    row_xpath = "(//tr[.//button[normalize-space()='View logs']])[{}]"
    for row in (skipped_row, skipped_row + 1):  # a tick may have come since the question
        walk.browser.hover(row_xpath.format(row + 1) + "//td[2]//*[contains(text(), 'requested')]")
        try:
            walk.browser.wait_for_texts([reason], timeout=5)
        except AssertionError:
            continue
        walk.shot("walk_16_sensor_tick_skip_reason")
        break
    else:
        raise AssertionError(f"no tick's tag on the sensor's page has the tooltip {reason!r}")
    for row in (junk_row, junk_row + 1):
        walk.browser.click(row_xpath.format(row + 1) + "//button[normalize-space()='View logs']")
        try:
            walk.browser.wait_for_texts([f"removed partition {JUNK} and its stage files"], timeout=10)
        except AssertionError:
            walk.browser.click("//button[normalize-space()='Done']")
            continue
        walk.shot("walk_17_sensor_tick_log")
        return
    raise AssertionError(f"no tick's log on the sensor's page says it removed {JUNK}")


def backfill_launch(walk: Walk) -> None:
    """The recipe: the asset graph filtered to the per-PDF stages, "Materialize all", "All", "Launch backfill"."""
    walk.page(f"/asset-groups~{quote(STAGES_SELECTION, safe='')}/", ["Global asset lineage", "Materialize all"])
    walk.browser.click("//button[contains(., 'Materialize all')]")
    walk.browser.wait_for_texts(["Launch runs to materialize 6 assets", "0 partitions"], PAGE_WAIT)
    walk.browser.click("//button[normalize-space()='All']")
    walk.browser.wait_for_texts(["4 partitions", *SAMPLE_KEYS, NEW_PDF], PAGE_WAIT)
    walk.shot("walk_18_recipe_dialog_all_pdfs")
    walk.notes["backfill_launched"] = time.time()
    walk.browser.click("//button[normalize-space()='Launch backfill']")
    walk.browser.wait_for_texts(["Created backfill"], PAGE_WAIT)


def backfill(walk: Walk) -> None:
    """One PDF fails: Dagster's status is COMPLETED_FAILED, shown "Failure" in the list and "Failed" on the
    backfill's page, with per-asset counts; the runs are of Dagster's hidden asset job (the Timeline's "Jobless
    asset materializations", not Jobs > build_corpus) and carry the range tags, not `pocket_assets/pdfs`. The PDF
    removed from the folder before it was exported again once (not once per sensor)."""
    assert walk.outcomes.get("backfill_launch") is None, "the backfill was not launched"

    def finished() -> dict[str, Any] | None:
        results = walk.graphql(BACKFILLS)["partitionBackfillsOrError"]["results"]
        return results[0] if results and results[0]["status"] not in ("REQUESTED", "CANCELING", "FAILING") else None

    done = _wait_until("the backfill to finish", finished, BACKFILL_WAIT, every=5)
    walk.notes["backfill"] = done
    counts = {
        status["assetKey"]["path"][-1]: (
            status["numPartitionsTargeted"],
            status["numPartitionsMaterialized"],
            status["numPartitionsFailed"],
        )
        for status in done["assetBackfillData"]["assetBackfillStatuses"]
    }
    assert done["status"] == "COMPLETED_FAILED", done
    assert counts == {
        **{stage: (4, 4, 0) for stage in ("raw_pdf", "pages", "parents", "children", "table_summaries")},
        "validated_chunks": (4, 3, 1),
    }, counts
    runs = walk.graphql(RUNS_OF_BACKFILL, {"filter": {"tags": [{"key": "dagster/backfill", "value": done["id"]}]}})
    runs = runs["runsOrError"]["results"]
    walk.notes["backfill_runs"] = runs
    assert runs and all(run["jobName"] == "__ASSET_JOB" and run["repositoryOrigin"] for run in runs), runs
    tags = {tag["key"]: tag["value"] for tag in runs[0]["tags"]}
    assert {"dagster/asset_partition_range_start", "dagster/asset_partition_range_end", "dagster/backfill"} <= set(
        tags
    ), tags
    assert "pocket_assets/pdfs" not in tags, tags
    exports = [
        run
        for run in walk.graphql(RUNS)["runsOrError"]["results"]
        if run["jobName"] == "export_corpus"
        and run["creationTime"] < walk.notes["backfill_launched"]
        and any(tag["key"] == "dagster/sensor_name" for tag in run["tags"])
    ]
    assert len(exports) == 1, f"one export for the PDF removed from the folder, not one per sensor: {exports}"

    shown = walk.page(
        "/runs?view=backfills", [done["id"], "Backfill", "4 partitions", "Failure"], "walk_19_backfills_list"
    )
    shown = walk.page(
        f"/runs/b/{done['id']}",
        ["Failed", "Partitions targeted", "Succeeded", "validated_chunks"],
        "walk_20_backfill_page",
    )
    assert "Completed with failures" not in shown and "completed with failures" not in shown
    shown = walk.page(
        "/overview/timeline", ["Timeline", "Jobless asset materializations"], "walk_21_timeline_after_backfill"
    )
    assert "build_corpus" not in shown, shown
    walk.page(
        "/locations/pocket_assets/jobs/build_corpus/runs",
        ["job:build_corpus", "No runs found"],
        "walk_22_job_runs_after_backfill",
    )


def failed_after_build(walk: Walk) -> None:
    """A PDF built before and failed since (fr/faq.pdf under the stricter suites): its partition page shows the
    old materialization ("Materialized", its numbers), the banner "Run … failed", and in the Metadata table our
    observation's entries (status, reason, run_id) first; the run's page has its line."""
    observation = walk.graphql(OBSERVATIONS, {"partitions": [REFUSED]})["assetOrError"]["assetObservations"][0]
    reason = next(entry["text"] for entry in observation["metadataEntries"] if entry["label"] == "reason")
    assert observation["description"] == reason, observation
    walk.page(
        _partition_page("validated_chunks", REFUSED),
        [REFUSED, "Materialized", "failed, and did not materialize this asset.", "reason", reason, "chunks_child"],
        "walk_23_refused_pdf_partition_page",
    )
    run_id = walk.notes["backfill_runs"][0]["runId"]
    walk.page(
        f"/runs/{run_id}",
        ["STEP_FAILURE", "Stack Trace", f"1 of 4 PDF(s) failed: {REFUSED}"],
        "walk_24_backfill_run_failure",
    )
    walk.browser.type_into("//input[@placeholder='Filter…']", REFUSED)
    walk.browser.wait_for_texts(["ERROR", f"{REFUSED}: validated_chunks failed"], PAGE_WAIT)
    walk.shot("walk_25_backfill_run_pdf_error_line")


def _partition_keys(walk: Walk) -> list[str]:
    return walk.graphql(PARTITION_KEYS)["assetNodeOrError"]["partitionKeys"]


# --- the scenario --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walk]:
    require_browser()
    from pocket_assets_tests.e2e.browser import headless_chromium

    root = tmp_path_factory.mktemp("walk")
    raw, out, home = root / "raw", root / "processed", root / "dagster_home"
    shutil.copytree(SAMPLE_RAW, raw)
    truncated_pdf(raw / TRUNCATED, SAMPLE_RAW / "intl" / "R-data.pdf")
    write_instance_yaml(home, queued=True)  # as `dagster dev`: the daemon runs the queue, sensors and backfills
    base = {name: value for name, value in os.environ.items() if name not in SETTING_VARIABLES}
    base.update(DAGSTER_HOME=str(home), POCKET_ASSETS_RAW_DIR=str(raw), POCKET_ASSETS_OUTPUT_DIR=str(out))
    ui = {
        **base,
        "CHUNK_SIZE_TOKENS": "300",
        "POCKET_ASSETS_EXPECTATIONS_DIR": str(suites_refusing(Path(REFUSED).name, root / "stricter")),
    }
    shots = Path(os.environ.get("POCKET_ASSETS_ARTIFACTS") or REPO_ROOT / "test-artifacts" / "screenshots")
    bin_dir = Path(sys.executable).parent
    started = time.monotonic()
    build = subprocess.Popen(
        [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(out)],
        cwd=REPO_ROOT,
        env=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # Its first line comes once it has made the instance's storage (two processes making it at once collide).
    first_line = build.stdout.readline() if build.stdout else ""
    with ExitStack() as stack:
        # The webserver starts while the build runs (it only reads the instance); the daemon after it.
        server = stack.enter_context(
            running_webserver(
                REPO_ROOT / "workspace.yaml", REPO_ROOT, ui, root / "webserver.log", bin_dir / "dagster-webserver"
            )
        )
        printed = first_line + build.communicate(timeout=300)[0]
        print(f"command-line build: {time.monotonic() - started:.0f} s")
        assert build.returncode == 1 and f"{TRUNCATED}: FAILED" in printed, printed
        (cli_run_id,) = re.findall(r"^run (\S+) FAILED for 4 PDFs", printed, re.MULTILINE)
        stack.enter_context(
            running_daemon(REPO_ROOT / "workspace.yaml", REPO_ROOT, ui, root / "daemon.log", bin_dir / "dagster-daemon")
        )
        address = find_job(server, "build_corpus")
        mark_first_visit_done(server)
        browser = stack.enter_context(headless_chromium(root / "chromium_profile"))
        wait_for_daemons(server, ["SENSOR", "BACKFILL", "QUEUED_RUN_COORDINATOR"])
        walk = Walk(server=server, browser=browser, address=address, shots=shots, raw=raw, cli_run_id=cli_run_id)
        for name, step in STEPS:
            walk.run(name, step)
        print(f"the walk: {time.monotonic() - started:.0f} s in all")
        yield walk


STEPS: list[tuple[str, Callable[[Walk], None]]] = [
    ("cli_runs", cli_runs),
    ("staleness", staleness),
    ("up_to_date", up_to_date),
    ("failed_pdf_page", failed_pdf_page),
    ("folder_change", folder_change),  # runs materialize_all in its middle
    ("failed_pdf_run", failed_pdf_run),  # while the sensor has yet to see the folder: a page nothing changes
    ("folder_sync", folder_sync),
    ("backfill_launch", backfill_launch),
    ("sensor_log", sensor_log),  # while the backfill runs
    ("backfill", backfill),
    ("failed_after_build", failed_after_build),
]


# --- one test per point --------------------------------------------------------------------------------------


def test_command_line_runs_are_in_the_runs_list_only(walk: Walk) -> None:
    walk.check("cli_runs")


def test_a_setting_change_shows_unsynced_on_partition_pages_only(walk: Walk) -> None:
    walk.check("staleness")


def test_a_failed_pdf_gives_its_reason(walk: Walk) -> None:
    walk.check("failed_pdf_page")
    walk.check("failed_pdf_run")
    walk.check("failed_after_build")


def test_the_partitions_follow_the_folder_while_the_daemon_runs(walk: Walk) -> None:
    walk.check("folder_change")
    walk.check("folder_sync")
    walk.check("sensor_log")


def test_materialize_all_selects_the_evaluation_assets_and_no_partition(walk: Walk) -> None:
    walk.check("materialize_all")


def test_a_backfill_from_the_asset_graph_with_one_failed_pdf(walk: Walk) -> None:
    walk.check("backfill_launch")
    walk.check("backfill")


def test_up_to_date_lists_every_pdf_to_build_with_why(walk: Walk) -> None:
    walk.check("up_to_date")


# --- what the steps ask GraphQL ------------------------------------------------------------------------------

RUNS = """
{
  runsOrError(limit: 50) {
    ... on Runs { results { runId jobName status creationTime repositoryOrigin { repositoryLocationName } tags { key value } } }
  }
}
"""

RUNS_OF_BACKFILL = """
query Runs($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId jobName status repositoryOrigin { repositoryLocationName } tags { key value } } }
  }
}
"""

STALENESS = """
query Staleness($key: AssetKeyInput!, $partitions: [String!]!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      staleStatus
      staleCauses { reason }
      staleStatusByPartition(partitions: $partitions)
      staleCausesByPartition(partitions: $partitions) { reason category }
    }
  }
}
"""

UP_TO_DATE = """
{
  assetCheckExecutions(assetKey: {path: ["validated_chunks"]}, checkName: "up_to_date", limit: 1) {
    evaluation { description }
  }
}
"""

ASSET_NODES = "{ assetNodes { assetKey { path } isExecutable } }"

PARTITION_KEYS = '{ assetNodeOrError(assetKey: {path: ["raw_pdf"]}) { ... on AssetNode { partitionKeys } } }'

SENSOR_TICKS = """
query Ticks($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    ... on Sensor { sensorState { ticks(limit: 20) { status skipReason logEvents { events { message } } } } }
  }
}
"""

BACKFILLS = """
{
  partitionBackfillsOrError(limit: 1) {
    ... on PartitionBackfills {
      results {
        id
        status
        assetBackfillData {
          assetBackfillStatuses {
            ... on AssetPartitionsStatusCounts {
              assetKey { path }
              numPartitionsTargeted
              numPartitionsMaterialized
              numPartitionsFailed
            }
          }
        }
      }
    }
  }
}
"""

OBSERVATIONS = """
query Observations($partitions: [String!]) {
  assetOrError(assetKey: {path: ["validated_chunks"]}) {
    ... on Asset {
      assetObservations(partitions: $partitions, limit: 1) {
        description
        metadataEntries { label ... on TextMetadataEntry { text } }
      }
    }
  }
}
"""
