"""The one error of the export: a chunk (or a corpus) that cannot be exported as it is."""


class ExportError(ValueError):
    """A chunk that cannot be exported as it is; names the chunk so it can be found upstream."""

    def __init__(self, chunk_id: str | None, reason: str) -> None:
        self.chunk_id = chunk_id
        self.reason = reason
        super().__init__(f"{chunk_id}: {reason}" if chunk_id else reason)
