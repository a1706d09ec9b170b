"""The application layer: the ``ragbag`` CLI, the MCP server, the Dagster runner and the
evaluation commands. The only layer that starts Dagster runs.
"""
