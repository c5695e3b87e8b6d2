"""ManiSkill 3 training configs as evidence.

``export_config`` is the script a user runs where they train (it needs ManiSkill, nothing of
simgap beyond itself); ``config`` reads what it wrote into ``ManiSkillConfig``;
``training_toml`` turns that into rig.toml lines marked ``# from ManiSkill``. Nothing here
imports ManiSkill at module level.
"""
