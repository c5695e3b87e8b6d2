"""Evaluation science: comparability, statistics, trial counts, rank fidelity."""
