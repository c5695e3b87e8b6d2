"""Branches: one module per cause; each ends in Findings.

A branch opens no file itself: its evidence comes from the readers of ``simgap.evidence``,
most of it through ``ctx.evidence`` (the ``Context``'s ``EvidenceBundle``, which loads each
kind once for every branch; ``branches/context.py``), and it writes only artifacts under
``ctx.out_dir``.
"""
