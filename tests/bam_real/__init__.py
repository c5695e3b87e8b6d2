"""simgap against BAM's own code (better-actuator-models 1.0.2, the release on PyPI), not a
reading of it: its log processing, its simulator and its parameter loader.

Runs only where BAM is installed: .ci/run's Python 3.12 step (BAM 1.0.2 needs Python 3.12),
with simgap installed beside it.
"""
