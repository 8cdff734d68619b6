"""Progress a person can follow: a run's PDFs turn green one by one, and the command line says so as it goes."""

import os
import subprocess
import sys
from pathlib import Path

from dagster import DagsterEventType, DagsterInstance

from pocket_assets.defs.resources import CorpusPaths, WorkersResource
from pocket_assets_tests.defs.conftest import materialize_corpus
from pocket_assets_tests.pdf_factory import ARTICLE_FR, REPO_ROOT, small_corpus, text_pdf


def _corpus(raw: Path) -> None:
    small_corpus(raw)
    text_pdf(raw / "fr" / "annexe.pdf", [ARTICLE_FR * 2])


def test_each_pdf_is_materialized_as_soon_as_it_is_built(instance: DagsterInstance, tmp_path: Path) -> None:
    """The first PDF's materializations are in the event log before the last PDF is done, not all at the run's end."""
    raw = tmp_path / "raw"
    _corpus(raw)
    paths = CorpusPaths(raw_dir=str(raw), output_dir=str(tmp_path / "out"))
    result = materialize_corpus(instance, paths, resources={"workers": WorkersResource(workers=1)})
    assert result.success
    records = instance.all_logs(result.run_id)
    kinds = [record.dagster_event.event_type if record.dagster_event else record.user_message for record in records]
    first_materialization = kinds.index(DagsterEventType.ASSET_MATERIALIZATION)
    last_pdf_done = next(i for i, kind in enumerate(kinds) if isinstance(kind, str) and "[3/3 done" in kind)
    assert first_materialization < last_pdf_done


def test_the_build_command_prints_progress_as_it_goes(tmp_path: Path) -> None:
    """The first PDF done is printed before the others are, with the counts; the summary comes after."""
    raw = tmp_path / "raw"
    _corpus(raw)
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "POCKET_ASSETS_WORKERS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pocket_assets.cli", "build", "--raw-dir", str(raw), "--output-dir", str(tmp_path / "out")],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "[1/3 done, 0 failed]" in line)
    last = next(i for i, line in enumerate(lines) if "[3/3 done, 0 failed]" in line)
    summary = lines.index("summary")
    assert first < last < summary
