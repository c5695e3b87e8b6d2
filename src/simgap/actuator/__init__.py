"""Actuator identification: delay first, then a ladder of ever richer servo models.

Modules: ``log`` (the value every reader returns), ``delay`` (command-to-motion delay on its
own), ``lag`` (rung 2), ``servo`` (rung 3), ``net`` (rung 4, torch extra), ``ladder`` (the
per-joint stop rule), ``export`` (Isaac Lab / BAM / randomisation), ``excite`` (chirps).
"""
