"""Value types shared across layers: what the readers produce and the methods consume.

Frozen dataclasses with units and shapes in their docstrings. Nothing here reads a file or
imports a layer above the values (``errors``, ``units``, ``series``, ...).
"""
