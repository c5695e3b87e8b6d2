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

_LIBRARY = {"egl": "EGL", "osmesa": "OSMesa"}
"""The shared library each offscreen backend loads."""
GL_NOTE = ""
"""What the backend choice did, when it overrode the user's ``MUJOCO_GL`` (else empty)."""


def _default_gl_backend() -> str | None:
    """The offscreen backend to use, or None to leave MuJoCo's (and the user's) choice.

    A ``MUJOCO_GL`` of ``egl`` or ``osmesa`` is tried first, as the README says; when its
    library is not installed the next one that is takes its place (``GL_NOTE`` says so),
    instead of PyOpenGL failing later inside MuJoCo with an AttributeError."""
    global GL_NOTE
    if not sys.platform.startswith("linux"):
        return None
    asked = os.environ.get("MUJOCO_GL", "").strip().lower()
    if asked in _LIBRARY:
        if ctypes.util.find_library(_LIBRARY[asked]):
            return None
        other = next(
            (b for b, lib in _LIBRARY.items() if b != asked and ctypes.util.find_library(lib)), None
        )
        if other is None:
            GL_NOTE = (
                f"MUJOCO_GL={asked}, but lib{_LIBRARY[asked]} is not installed and "
                "neither is any other offscreen backend"
            )
            return None
        GL_NOTE = (
            f"MUJOCO_GL={asked}, but lib{_LIBRARY[asked]} is not installed: using {other} instead"
        )
        return other
    if asked or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    for backend, lib in _LIBRARY.items():
        if ctypes.util.find_library(lib):
            return backend
    return None


_asked = os.environ.get("MUJOCO_GL", "").strip().lower()
_backend = _default_gl_backend()
if _backend is not None:
    os.environ["MUJOCO_GL"] = _backend
    if _asked in _LIBRARY and os.environ.get("PYOPENGL_PLATFORM", "").lower() == _asked:
        os.environ["PYOPENGL_PLATFORM"] = _backend
    os.environ.setdefault("PYOPENGL_PLATFORM", _backend)
if GL_NOTE:
    sys.stderr.write(f"simgap: {GL_NOTE}\n")
