"""The package version, in a module of its own so that any layer can read it without importing
the public face (``simgap/__init__``)."""

__version__ = "0.1.0"
