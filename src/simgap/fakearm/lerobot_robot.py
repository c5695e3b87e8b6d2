"""The fake arm as a LeRobot robot: a thin door to the ``lerobot_robot_simgap`` plugin.

The LeRobot classes live in their own distribution, ``lerobot_robot_simgap``
(plugins/lerobot_robot_simgap in this repository), because LeRobot imports third-party
plugins by *distribution* name and looks a robot class up in its config's *parent* module.
Installed with LeRobot (``pip install -e ".[lerobot]" -e plugins/lerobot_robot_simgap``),
LeRobot finds it by itself; ``register()`` is for code that wants the classes directly::

    import simgap.fakearm.lerobot_robot as fake
    config_cls, robot_cls = fake.register()
    robot = make_robot_from_config(config_cls(id="bench"))   # LeRobot's own factory
"""

from __future__ import annotations

import importlib

from simgap.errors import MissingExtraError

TYPE_NAME = "simgap_fake_so101"
PLUGIN = "lerobot_robot_simgap"


def register() -> tuple[type, type]:
    """Import the plugin (which registers it with LeRobot); returns (config class, robot class).

    Raises:
        MissingExtraError: LeRobot or the ``lerobot_robot_simgap`` plugin is not installed.
    """
    try:
        importlib.import_module("lerobot.robots")
        plugin = importlib.import_module(PLUGIN)
    except ImportError:
        raise MissingExtraError(
            "lerobot",
            "lerobot",
            "Running LeRobot scripts against the fake arm (also install the plugin: "
            "pip install -e plugins/lerobot_robot_simgap)",
        ) from None
    return plugin.SimgapFakeSO101Config, plugin.SimgapFakeSO101
