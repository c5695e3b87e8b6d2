"""Fitting: parameter sets in normalised coordinates, searches (``search``, ``profile``,
``cma_es``), and backends."""
