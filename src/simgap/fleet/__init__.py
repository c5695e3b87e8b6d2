"""A fleet of arms: diagnose many rigs at once, and turn unit-to-unit variation into
measured randomisation ranges.

- ``values``: each arm's identified values and intervals, from its ``findings.json``;
- ``spread``: the random-effects estimate (DerSimonian-Laird, Q-profile interval);
- ``aggregate``: per parameter and joint the fleet's centre, spread and outliers, and the
  verdict matrix;
- ``randomize``: the randomisation spec of a fleet;
- ``run``: diagnose every rig (local processes or Ray), resumably.
"""
