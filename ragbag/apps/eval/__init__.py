"""``ragbag eval``: retrieval quality on public datasets and on whole homes; the evaluation
personas those homes are generated from are a distribution of their own (``ragbag_evalsets``)."""
