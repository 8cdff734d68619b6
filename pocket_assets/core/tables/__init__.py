"""Tables after extraction: their type and their ~50-token summaries."""
