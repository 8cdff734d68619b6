"""Packages that Great Expectations imports and the project's suites never use, run only if used.

Importing GE 1.x executes scipy (its KL-divergence and KS-test expectations and metrics import
`scipy.stats` at module level) and altair (the KL-divergence expectation's chart renderer): ~1 s of
the ~3.5 s of CPU that the expectations process spends loading GE, a third of a one-PDF build's
second core. Our suites use neither. `defer_imports` makes such a package's modules lazy
(`importlib.util.LazyLoader`): `import scipy.stats` still succeeds and binds the same module, whose
code runs on first attribute access, so an expectation that does use it (a suite edited later) works
as before, only loading then.

Process-wide, so only for the expectations process (`expectations_process._main`), where GE is the
only user: a lazy module is created at import but executed later, which a library that relies on
import-time side effects of these packages (none here) would notice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import LazyLoader
from types import ModuleType

# What GE imports that the suites in expectations/ never call (measured: -X importtime of load_gates).
UNUSED_BY_THE_SUITES = ("scipy", "altair")


class LazyPackageFinder(MetaPathFinder):
    """Finds the modules of `packages` where the path finder does, with a loader that defers running them."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.packages = frozenset(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] not in self.packages:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = LazyLoader(spec.loader)
        return spec


def defer_imports(packages: Sequence[str] = UNUSED_BY_THE_SUITES) -> LazyPackageFinder:
    """From now on in this process, modules of `packages` not imported yet run on first use (see the
    module's docstring). Returns the finder (`sys.meta_path.remove` undoes it)."""
    finder = LazyPackageFinder(packages)
    sys.meta_path.insert(0, finder)
    return finder
