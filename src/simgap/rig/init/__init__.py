"""``simgap init``: a first rig.toml from a LeRobot dataset and a MuJoCo model.

``draft`` writes the file (``draft_rig``); ``dataset`` reads the dataset's metadata and the
model's names, ``body_range`` tells degrees from -100..100, ``calibrated`` turns LeRobot's
calibration into joint lines, and ``maniskill`` adds what a ManiSkill export says. The
package sits a layer above the rest of ``simgap.rig``, since it reads evidence and ManiSkill.
"""
