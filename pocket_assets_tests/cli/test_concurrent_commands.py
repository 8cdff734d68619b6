"""Commands on the same instance and output folder at once, as real processes: the second waits for the first and
says so at once; none reports a PDF failed because of the other."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from dagster import DagsterInstance

from pocket_assets.cli.folder_lock import holding_output_folder
from pocket_assets.defs.jobs import BUILD_CORPUS
from pocket_assets_tests.cli.commands import Command, command_env
from pocket_assets_tests.pdf_factory import small_corpus

WAITING = re.compile(r"^another (\w+) holds (.+) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(pid (\d+)\); waiting…$")


def test_a_build_waits_for_the_command_holding_its_output_folder_and_says_whom_at_once(tmp_path: Path) -> None:
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    env = command_env(tmp_path / "home")
    with holding_output_folder(out, "forget"):
        build = Command.start(["build", "--raw-dir", str(raw), "--output-dir", str(out)], env, tmp_path)
        first = build.wait_for("holds")
        assert build.lines == [first], "the first thing it says"
        command, folder, pid = WAITING.match(first).groups()
        assert (command, Path(folder), int(pid)) == ("forget", out, os.getpid())
        assert build.process.poll() is None, "it waits while the folder is held"
    assert build.finish() == 0, build.output
    assert "2 PDFs, 0 failed" in build.output


def test_two_builds_started_together_build_once_and_neither_reports_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a fresh folder: one builds the PDFs, the other waits, then finds them up to date (it used to report
    every PDF failed, its runs' manifests overwritten by the other's)."""
    raw, out = tmp_path / "raw", tmp_path / "out"
    small_corpus(raw)
    env = command_env(tmp_path / "home")
    args = ["build", "--raw-dir", str(raw), "--output-dir", str(out)]
    builds = [Command.start(args, env, tmp_path), Command.start(args, env, tmp_path)]
    codes = [build.finish() for build in builds]
    assert codes == [0, 0], "\n\n".join(build.output for build in builds)
    outputs = sorted((build.output for build in builds), key=lambda output: "building 0 PDF(s)" in output)
    assert "building 2 PDF(s)" in outputs[0] and "2 PDFs, 0 failed" in outputs[0]
    assert "building 0 PDF(s)" in outputs[1] and "2 PDF(s) up to date" in outputs[1]
    for output in outputs:
        assert "FAILED" not in output and "Traceback" not in output
        for line in output.splitlines():
            assert not line.startswith("another ") or WAITING.match(line), line
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    with DagsterInstance.get() as instance:
        runs = [record.dagster_run for record in instance.get_run_records() if record.dagster_run.job_name == BUILD_CORPUS]
    assert len(runs) == 1, "the PDFs were built once"
