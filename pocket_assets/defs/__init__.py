"""The Dagster layer: thin assets, checks, resources, sensors and schedules over the library (`core`, `stages`, `export`)."""

import warnings

from dagster import BetaWarning

# `backfill_policy` is marked beta; single-run backfills are the point of this project. Only that
# warning is silenced: any other beta API used here should be seen.
warnings.filterwarnings(
    "ignore", message=r"Parameter `backfill_policy` of function `(multi_)?asset`", category=BetaWarning
)
