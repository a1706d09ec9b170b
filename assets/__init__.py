"""Dagster assets: per connector, the chain documents → chunks → embeddings → bm25."""
