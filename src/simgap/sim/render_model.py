"""A render-only copy of a model, fast on a CPU: the offscreen buffer sized to one camera,
no multisampling or shadow map, and meshes simplified by vertex clustering (``render_model``,
``simplify_meshes``). The live cameras (``simgap.sim.render.CameraRenderer``, the arm posers)
draw from it."""

from __future__ import annotations

import hashlib

import mujoco
import numpy as np

RENDER_MESH_CELL_M = 0.002
"""Cell [m] the live camera's meshes are simplified to (vertex clustering). The Menagerie
SO-101's 348k triangles become about 26k; at 64x64 the picture is unchanged to the eye."""

_SIMPLIFIED: dict[tuple[str, float], tuple[np.ndarray, np.ndarray, np.ndarray | None]] = {}
"""Simplified face lists by (sha1 of a mesh's vertices and faces, cell): made once a process."""


def _simplify_mesh(
    vert: np.ndarray,
    face: np.ndarray,
    facenormal: np.ndarray,
    facetexcoord: np.ndarray | None,
    cell_m: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Vertex clustering: every vertex moves to the first vertex of its ``cell_m`` grid cell;
    faces that collapse, and duplicates, are dropped. Indices stay those of the original
    vertex list (so the model's vertex and normal arrays are reused as they are)."""
    keys = np.floor(vert / cell_m).astype(np.int64)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    rep = first[inverse.ravel()]
    f2 = rep[face]
    keep = (f2[:, 0] != f2[:, 1]) & (f2[:, 1] != f2[:, 2]) & (f2[:, 0] != f2[:, 2])
    idx = np.flatnonzero(keep)
    _, uniq = np.unique(np.sort(f2[idx], axis=1), axis=0, return_index=True)
    idx = idx[np.sort(uniq)]
    tex = None if facetexcoord is None else facetexcoord[idx]
    return f2[idx], facenormal[idx], tex


def simplify_meshes(model: mujoco.MjModel, cell_m: float = RENDER_MESH_CELL_M) -> int:
    """Simplify, in place, the face lists the renderer draws of every mesh of ``model``.

    Only ``mesh_face``/``mesh_facenormal``/``mesh_facetexcoord``/``mesh_facenum`` change (the
    renderer uploads meshes from them when its context is made); vertices, collision hulls and
    everything physics reads stay as compiled. Meant for a render-only copy of a model.
    Each mesh is simplified once a process (cached by its content).

    Returns:
        the number of faces drawn afterwards.
    """
    for i in range(int(model.nmesh)):
        va, nv = int(model.mesh_vertadr[i]), int(model.mesh_vertnum[i])
        fa, nf = int(model.mesh_faceadr[i]), int(model.mesh_facenum[i])
        if nf < 64:
            continue
        vert = model.mesh_vert[va : va + nv]
        face = model.mesh_face[fa : fa + nf]
        key = (hashlib.sha1(vert.tobytes() + face.tobytes()).hexdigest(), float(cell_m))
        if key not in _SIMPLIFIED:
            has_tex = int(model.mesh_texcoordnum[i]) > 0
            _SIMPLIFIED[key] = _simplify_mesh(
                vert,
                face.copy(),
                model.mesh_facenormal[fa : fa + nf].copy(),
                model.mesh_facetexcoord[fa : fa + nf].copy() if has_tex else None,
                cell_m,
            )
        f2, fn2, ft2 = _SIMPLIFIED[key]
        n = len(f2)
        model.mesh_face[fa : fa + n] = f2
        model.mesh_facenormal[fa : fa + n] = fn2
        if ft2 is not None:
            model.mesh_facetexcoord[fa : fa + n] = ft2
        model.mesh_facenum[i] = n
    return int(model.mesh_facenum.sum())


def render_model(
    model: mujoco.MjModel, height: int, width: int, mesh_cell_m: float | None = RENDER_MESH_CELL_M
) -> mujoco.MjModel:
    """A copy of ``model`` to render one ``height`` x ``width`` camera from, fast on a CPU.

    The offscreen buffer is the camera's size (not the model's ``offwidth``/``offheight``,
    640x480 by default), without multisampling (4 samples cost more than the whole picture
    at 64x64 in software GL), with a 1-texel shadow map (shadows are switched off by
    ``CameraRenderer``; the default 4096x4096 map alone cost 0.1-0.4 s a frame), planes
    drawn with one quad a grid cell, and meshes simplified to ``mesh_cell_m`` (None keeps
    them).
    """
    m: mujoco.MjModel = model.__copy__()
    g = m.vis.global_
    g.offwidth, g.offheight = int(width), int(height)
    m.vis.quality.offsamples = 0
    m.vis.quality.shadowsize = 1
    m.vis.quality.numquads = 1  # an infinite floor is drawn as a grid: 4x4 quads a cell cost ~3 ms
    if mesh_cell_m is not None and m.nmesh:
        simplify_meshes(m, mesh_cell_m)
    return m
