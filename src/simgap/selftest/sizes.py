"""The selftest's sizes, apart so that the command line's help reads them without
importing the pipeline (numpy, MuJoCo)."""

DEFAULT_TRIALS = 10
"""Faulty trials of the default size: with the null trial, 11 diagnoses (benchmarks/
selftest.py measured 8 + null in 7.2 min on the demo rig and 3.7 min on an SO-101 rig of
3 x 20 s, on 2 cores shared with other work: about 9 and 5 min at this size)."""

THOROUGH_TRIALS = 96
"""Faulty trials of ``--thorough``: a night on 2 cores."""
