"""Recorded episodes: phases, failure signatures, sim-vs-real comparison, training envelope.

Nothing here imports MuJoCo: end-effector positions come in as arrays (``simgap.sim.fk``).
"""

from simgap.episodes.segment import Segmentation, SegmentParams, segment
from simgap.values.episode import PHASES, EpisodeRecord

__all__ = ["PHASES", "EpisodeRecord", "SegmentParams", "Segmentation", "segment"]
