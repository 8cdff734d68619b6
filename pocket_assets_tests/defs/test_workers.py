"""How many worker processes a run uses by default: POCKET_ASSETS_WORKERS, else the CPUs it may use (its CPU
affinity, lowered to a container's cgroup CPU quota: what a Kubernetes pod's CPU limit sets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pocket_assets.defs.resources import WorkersResource, cgroup_cpu_quota, default_workers


def _cgroup_v2(root: Path, cpu_max: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cpu.max").write_text(cpu_max + "\n")
    return root


def _cgroup_v1(root: Path, quota_us: int, period_us: int) -> Path:
    (root / "cpu").mkdir(parents=True, exist_ok=True)
    (root / "cpu" / "cpu.cfs_quota_us").write_text(f"{quota_us}\n")
    (root / "cpu" / "cpu.cfs_period_us").write_text(f"{period_us}\n")
    return root


@pytest.mark.parametrize(
    ("cpu_max", "cpus"),
    [("200000 100000", 2), ("100000 100000", 1), ("150000 100000", 2), ("50000 100000", 1), ("max 100000", None)],
)
def test_cgroup_v2_quota_is_rounded_up_to_whole_cpus(tmp_path: Path, cpu_max: str, cpus: int | None) -> None:
    """A pod with `limits: cpu: "2"` has cpu.max "200000 100000"; "1.5" rounds up to 2; no limit is "max"."""
    assert cgroup_cpu_quota(_cgroup_v2(tmp_path, cpu_max)) == cpus


def test_cgroup_v1_quota_and_no_quota(tmp_path: Path) -> None:
    assert cgroup_cpu_quota(_cgroup_v1(tmp_path / "limited", 300000, 100000)) == 3
    assert cgroup_cpu_quota(_cgroup_v1(tmp_path / "unlimited", -1, 100000)) is None
    assert cgroup_cpu_quota(tmp_path / "no-cgroup-files") is None


def test_the_setting_wins_and_the_resource_field_wins_over_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POCKET_ASSETS_WORKERS", "3")
    assert default_workers() == 3
    assert WorkersResource().count() == 3
    assert WorkersResource(workers=1).count() == 1


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is a Linux feature")
def test_without_the_setting_a_run_uses_the_cpus_it_may_run_on() -> None:
    """`taskset -c 0` (one CPU of the machine) means one worker, whatever the machine has."""
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
        "from pocket_assets.defs.resources import default_workers; print(default_workers())"
    )
    env = {name: value for name, value in os.environ.items() if name != "POCKET_ASSETS_WORKERS"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "1"
