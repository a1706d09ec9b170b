"""ragbag: RAG everything, local-first.

The engine package. It imports no Dagster: connectors feed it Documents, the assets in
``assets/`` drive its stages, and ``ragbag.search.query`` reads what they materialised.
"""

__version__ = "0.1.0"
