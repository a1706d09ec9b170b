"""Text in, text out: decoding bytes of unknown encoding, HTML/PDF to text, chunking by tokens,
exact identifiers in a query. Knows no model, no store and no source.
"""
