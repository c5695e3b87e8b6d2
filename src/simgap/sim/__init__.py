"""MuJoCo: the only package that imports mujoco (load, patch, replay, render).

MuJoCo picks its OpenGL backend when it is first imported. On a Linux machine without a
display, and when the user has not chosen one (``MUJOCO_GL``), simgap picks an offscreen
backend that is present: EGL (Mesa's software EGL works on CPU-only machines, a GPU's EGL on
GPU machines), else OSMesa. ``PYOPENGL_PLATFORM`` is set to match.
"""

from __future__ import annotations

import ctypes.util
import os
import sys


def _default_gl_backend() -> str | None:
    """The offscreen backend to use when none was chosen, or None to leave MuJoCo's."""
    if not sys.platform.startswith("linux"):
        return None
    if os.environ.get("MUJOCO_GL") or os.environ.get("DISPLAY") or \
            os.environ.get("WAYLAND_DISPLAY"):
        return None
    for backend, lib in (("egl", "EGL"), ("osmesa", "OSMesa")):
        if ctypes.util.find_library(lib):
            return backend
    return None


_backend = _default_gl_backend()
if _backend is not None:
    os.environ["MUJOCO_GL"] = _backend
    os.environ.setdefault("PYOPENGL_PLATFORM", _backend)
