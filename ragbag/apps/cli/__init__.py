"""The ``ragbag`` command, split by concern; ``main`` builds the typer app and handles errors."""
