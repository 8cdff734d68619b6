"""The export: the files the phone and other tools read, per corpus, and the id history that keeps old
citations resolving. Plain Python, no Dagster; it reads the stage store (`stages`) and the core library.

`publish.publish_exports` is the whole export of an output folder: which PDFs ship and why the others do
not (`selection`, duplicates, id collisions, strict refusal), the phone's LLM budget (`llm_budget`), every
corpus written atomically (`writer`, under `lock`) from each PDF's piece (`pieces`, kept beside the stages
by `kept_pieces`, read through `validated_files`), and what it was made from (`fingerprint`). The files'
formats: the SDK lines (`sdk_lines`), the corpus JSON and HEPilot records (`corpus_records`, laid out by
`indented_json`), the export order (`order`), and the id redirects (`redirects`, `redirect_file`,
`previous_export`). `read_back` reads the exported lines back as the retrieval evaluation's passages.
"""
