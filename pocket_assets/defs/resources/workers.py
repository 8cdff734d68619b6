"""How many processes build a run's PDFs side by side: the CPUs this process may use, a container's quota included."""

from __future__ import annotations

import math
import os
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

WORKERS_ENV = "POCKET_ASSETS_WORKERS"


class WorkersResource(ConfigurableResource):
    """How many processes build a run's PDFs side by side (one plain pool per run; 1: the run's own process)."""

    workers: int = Field(
        default=0,
        description=f"Worker processes per run; 0: ${WORKERS_ENV}, else the CPUs this process may use "
        "(its CPU affinity, and a container's CPU quota where there is one).",
    )

    def count(self) -> int:
        return self.workers if self.workers > 0 else default_workers()


def default_workers() -> int:
    """`POCKET_ASSETS_WORKERS`, else the CPUs this process may use: its affinity (`taskset -c 0` means 1),
    lowered to a cgroup CPU quota (a container limited to 1 CPU on a 16-core node means 1)."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        return max(1, int(configured))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return max(1, min(cpus, quota)) if quota is not None else cpus


def cgroup_cpu_quota(cgroup_root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The CPUs a cgroup quota grants (rounded up), or None without one: cgroup v2's `cpu.max`
    ("200000 100000" is 2 CPUs, "max 100000" none), else v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us`."""
    try:
        quota, period = (cgroup_root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((cgroup_root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup_root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota_us <= 0 or period_us <= 0 else max(1, math.ceil(quota_us / period_us))
