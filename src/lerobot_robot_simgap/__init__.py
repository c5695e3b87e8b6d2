"""LeRobot plugin: makes ``--robot.type=simgap_fake_so101`` available to LeRobot's scripts.

LeRobot imports every top-level module whose name starts with ``lerobot_robot_`` when it
registers third-party devices (``register_third_party_devices``), so installing simgap next
to LeRobot is enough: existing record, replay and async-inference scripts run against the
fake SO-101 unchanged. This module is only ever imported by LeRobot itself.
"""

from simgap.fakearm.lerobot_robot import register

register()
