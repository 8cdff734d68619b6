"""Run state: what was built from what, when, and how it ended (manifests, staleness, export selection,
the raw-folder scan). Plain Python, no Dagster: the Dagster layer and the build command read it."""
