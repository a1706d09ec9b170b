"""The one exception type users see: its message is a complete one-line explanation."""


class RagbagError(Exception):
    """A user-facing failure (bad path, bad config, bad filter). The CLI prints it and exits 2."""
