"""The core and the run state are plain libraries: importing all of them must not import Dagster."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["pocket_assets.core", "pocket_assets.runstate"])
def test_library_does_not_import_dagster(package: str) -> None:
    code = (
        f"import pkgutil, importlib, sys, {package} as package\n"
        f"for module in pkgutil.walk_packages(package.__path__, '{package}.'):\n"
        "    importlib.import_module(module.name)\n"
        "print('dagster' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_core_public_api_resolves() -> None:
    import pocket_assets.core as core

    for name in core.__all__:
        assert getattr(core, name) is not None, name
