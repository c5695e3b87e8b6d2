"""ManiSkill 3: its training config as evidence, and ManiSkill as a second simulator.

``export_config`` is the script a user runs where they train (it needs ManiSkill, nothing of
simgap beyond itself); ``config`` reads what it wrote into ``ManiSkillConfig``;
``training_toml`` turns that into rig.toml lines marked ``# from ManiSkill``. ``replay``
replays recorded commands in ManiSkill (the ``maniskill`` extra), ``fit`` identifies the
controller's PD gains from them, ``export`` writes them as controller config once a held-out
replay proves them, ``check`` runs the three for ``simgap maniskill replay`` (``settings``
says where its agent and physics step came from), ``render`` renders the training camera
with SAPIEN, and ``training_view`` reads that camera and the robot description from the
rig for ``simgap maniskill appearance``. Nothing here imports ManiSkill or SAPIEN at module
level.
"""
