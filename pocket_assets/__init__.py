"""pocket_assets: PDFs to validated, citable, token-accurate RAG chunks (see README.md)."""
