"""The one exception type users see: its message is a complete one-line explanation."""


class RagbagError(Exception):
    """A user-facing failure (bad path, bad config, bad filter). The CLI prints it and exits 2."""


class DamagedIndex(RagbagError):
    """A source's published index cannot be read (files gone or cut short, a table version it
    pins deleted). Its message names the source and the way back: rebuilding it publishes a
    sound index, because a damaged one never counts as up to date. ``reason`` alone is what
    ``ragbag status`` shows."""

    def __init__(self, source: str, reason: str):
        self.source = source
        self.reason = " ".join(reason.split())  # one line, whatever the cause said
        super().__init__(
            f"source {source!r}: its published index is damaged ({self.reason}); "
            f"rebuild it with `ragbag build {source}`"
        )


class StorageFault(RagbagError):
    """A write failed because the disk under the home is full, over quota or read-only (see
    ``ragbag.core.storage_faults``): the message says which, where, and what to do. ``kind`` is
    one of ``storage_faults``' SPACE, QUOTA, READ_ONLY, IO."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)
