"""Search over what builds published: one ``SearchRequest`` type checked once, snapshots of the
published indexes, fusion, reranking and the source status rows.
"""
