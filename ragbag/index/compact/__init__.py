"""The ``compact`` profile: a pruned proximity graph and product-quantisation codes, no vectors.

At query time the graph is walked scored by the codes and exact embeddings are recomputed for
the best candidates only. That is the design of LEANN's paper (hub-preserving pruning and
code-guided search), which its package ships switched off (plain HNSW, every visited node
re-embedded, seconds per query).

One module per concern: ``graph`` (the in-memory type and its rows), ``prune`` (the graph's
edges), ``pq`` (the codes), ``build`` (full builds and in-place updates), ``search`` (the
code-guided walk), ``pack`` (the bytes on disk) and ``size`` (the layout a source's text allows).
"""
