"""One dynamic partition per PDF, keyed by its path under the raw folder (e.g. `fr/faq.pdf`)."""

from dagster import BackfillPolicy, DynamicPartitionsDefinition

pdf_partitions = DynamicPartitionsDefinition(name="pdfs")

# Many PDFs in one run: one process start and one tokenizer load for the whole backfill.
single_run = BackfillPolicy.single_run()

# Who to ask about these assets, shown in the UI.
OWNERS = ["team:corpus-maintainers"]
