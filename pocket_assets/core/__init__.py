"""Pure library: extraction, tokenizer, chunker, ids, summaries, validation, exports. No Dagster."""
