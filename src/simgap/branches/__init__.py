"""Branches: one module per cause; each ends in Findings. Branches never read files."""
