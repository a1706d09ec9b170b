"""The build: one module per stage (ingest → chunk → embed → graph → publish), retention and
removal, and the checks a build must pass before it is published. No Dagster here: the assets
in ``ragbag.orchestration`` call these functions.
"""
