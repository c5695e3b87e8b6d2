import importlib
import pkgutil

import simgap


def test_every_exported_name_exists() -> None:
    for name in simgap.__all__:
        assert hasattr(simgap, name), name


def test_every_module_imports() -> None:
    for mod in pkgutil.walk_packages(simgap.__path__, "simgap."):
        importlib.import_module(mod.name)
