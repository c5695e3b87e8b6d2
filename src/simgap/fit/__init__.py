"""Fitting: parameter sets in normalised coordinates, searches, and backends."""
