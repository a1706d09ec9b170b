"""The bottom layer: what every other layer needs and nothing else — the error users see, the
records connectors emit, the home and its settings, owner-only files, leases, progress, strict
JSON and the one in-memory cache. Imports nothing of ragbag above it.
"""
