"""The on-disk indexes of one source and their owners: the LanceDB store, the published layout
(``published``), BM25, and the proximity graphs (``graph`` over ``hnsw`` and ``compact/``).
"""
