"""The Dagster code location: definitions that wire connectors, assets and the engine."""
