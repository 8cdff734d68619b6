"""The Definitions object `dagster dev` loads (see workspace.yaml and [tool.dagster])."""

from pocket_assets.defs.build import build_definitions

defs = build_definitions()
