"""`pdf_file`: a PDF of the raw folder as Dagster sees it, upstream of `raw_pdf`.

An external asset: Dagster does not make it, it is observed. Each observation's data version is
the file's sha256 (`pdf_folder_sensor` observes new and changed files; a build observes the file
it read when the last observation says otherwise), so an edited or replaced PDF makes its
`raw_pdf` partition stale in the UI, as `pocket-assets stale` says.
"""

from dagster import AssetSpec

from pocket_assets.defs.partitions import OWNERS, pdf_partitions

PDF_FILE = "pdf_file"

pdf_file = AssetSpec(
    PDF_FILE,
    partitions_def=pdf_partitions,
    group_name="ingest",
    kinds={"pdf"},
    owners=OWNERS,
    description="A PDF file of the raw folder (one partition per PDF), observed with its sha256 as data version by "
    "pdf_folder_sensor and by the builds: an edited or replaced PDF makes its raw_pdf stale.",
)
