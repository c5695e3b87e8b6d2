"""The ``--ray`` and ``--allow-rig-compute`` options shared by ``diagnose``, ``controller``
and ``fleet``."""

from __future__ import annotations

import typer

RAY_HELP = (
    "Run on Ray: 'local' starts one on this machine; 'auto', HOST:PORT or "
    "ray://HOST:PORT (needs ray[client]) joins that cluster, which is sent the rig "
    "files, model and logs (docs/fleet.md). A cluster that does not answer within "
    "20 s is an error."
)
ALLOW_RIG_COMPUTE_HELP = (
    "Let a rig file's [compute] section choose the Ray cluster "
    "(ignored otherwise: rig.toml is not trusted to send your data "
    "anywhere). --ray wins over it."
)


def ray_address(value: str | None) -> str | None:
    """``--ray`` checked before any work (a typer callback): the forms ``auto``, ``local``,
    ``host:port``, ``ray://host:port``, and the extra a form needs."""
    if value is None:
        return None
    from simgap.errors import SimgapError
    from simgap.fit.ray_cluster import parse_ray_address

    try:
        return parse_ray_address(value)
    except SimgapError as e:
        raise typer.BadParameter(str(e)) from None
