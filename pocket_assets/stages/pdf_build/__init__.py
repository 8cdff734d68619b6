"""One PDF through the per-PDF stages, one module per job.

`runner.build_pdf` builds a PDF's selected stages in whichever process builds it (`plan.BuildPlan`: what
every PDF of the run is built with) and returns a `outcomes.PdfOutcome`; `builders` holds one builder per
stage before the gates; `gates` runs the schema and coverage gates with each PDF and the suite over
batches of PDFs (`BatchedSuiteGate`); `manifests` records each attempt; `metadata` is what a stage's
materialization shows.
"""
