"""The Dagster layer: thin assets, checks, resources, sensors and schedules over `pocket_assets.core`."""

import warnings

from dagster import BetaWarning

# `backfill_policy` is marked beta; single-run backfills are the point of this project.
warnings.filterwarnings("ignore", category=BetaWarning)
