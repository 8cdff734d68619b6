"""The core is a plain library: importing all of it must not import Dagster."""

import subprocess
import sys


def test_core_does_not_import_dagster() -> None:
    code = (
        "import pkgutil, importlib, sys, pocket_assets.core as core\n"
        "for module in pkgutil.walk_packages(core.__path__, 'pocket_assets.core.'):\n"
        "    importlib.import_module(module.name)\n"
        "print('dagster' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
