"""The code location `dagster dev` and `dg` load (see workspace.yaml, [tool.dagster] and [tool.dg]).

Everything Dagster defines at module level in the `pocket_assets/defs/` folder, found by
`load_from_defs_folder` (the project's `pyproject.toml` must be beside the package:
an editable install or a checkout).
"""

from pathlib import Path

from dagster import Definitions, definitions, load_from_defs_folder


@definitions
def defs() -> Definitions:
    return load_from_defs_folder(path_within_project=Path(__file__).parent)
