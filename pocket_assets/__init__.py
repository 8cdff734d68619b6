"""pocket_assets: PDFs to validated, citable, token-accurate RAG chunks (see README.md)."""

from pocket_assets.core.memory import arrow_allocates_from_malloc

arrow_allocates_from_malloc()  # before anything imports pyarrow: see its docstring (issue 18)
