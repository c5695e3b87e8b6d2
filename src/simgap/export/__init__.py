"""Exporters of fitted models to other simulators and training stacks: Isaac Lab
(``isaaclab``, per-joint ``joint_snippets``), mjlab (``mjlab``), BAM's parameter files
(``bam``) and randomisation specs (``randomization``)."""
