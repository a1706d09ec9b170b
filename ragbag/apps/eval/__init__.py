"""``ragbag eval``: retrieval quality on public datasets and on whole homes, and the personal set."""
