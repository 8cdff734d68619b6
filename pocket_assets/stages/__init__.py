"""The per-PDF stages: what was built from what, when, and how it ended (the stage registry, the stage store
and its manifests, staleness, the raw-folder scan), and one PDF's build through them. Plain Python, no Dagster:
the Dagster layer, the export and the command line read it."""
