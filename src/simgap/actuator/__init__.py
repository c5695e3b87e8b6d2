"""Actuator identification: a ladder of ever richer servo models, the delay profiled with each.

Modules: ``log`` (the value every reader returns), ``delay`` (the cross-correlation bound on
the command-to-motion delay), ``lag`` (rung 2), ``servo`` (rung 3, servo of unknown
firmware), ``families`` (known servos: XL330, STS3215, their constants and physical boxes),
``friction`` (BAM's friction families M1-M6), ``physical`` (BAM's simulator step, batched),
``family_fit`` and ``physical_rung`` (rung 3 on a known servo), ``net`` (rung 4, torch
extra), ``ladder`` (the per-joint stop rule), ``in_bam`` (what BAM computes with a fit),
``excite`` (chirps). The exporters of a fit (Isaac Lab, BAM's parameter files, mjlab) live
in ``simgap.export``; the searches the fits run (CMA-ES, Levenberg-Marquardt, the
intervals, the delay shift) are ``simgap.fit``'s.
"""
