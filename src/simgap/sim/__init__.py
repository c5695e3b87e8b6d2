"""MuJoCo: the only package that imports mujoco (load, patch, replay, render)."""
