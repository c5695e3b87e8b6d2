"""Joining a Ray cluster: addresses validated (``parse_ray_address``), a cluster that does
not answer within ``RAY_CONNECT_TIMEOUT_S`` a clear error (``check_reachable``), and
``ray_init`` with Ray's own logging kept off the terminal. Ray is an optional extra,
imported only when used."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import socket
from typing import Any

from simgap.errors import InputError, MissingExtraError, SimgapError

RAY_CONNECT_TIMEOUT_S = 20.0
"""How long joining a Ray cluster may take before it is an error [s]."""


RAY_FORMS = (
    "'auto' (the cluster this machine belongs to), 'local' (start one here), "
    "'HOST:PORT' (a cluster's head, e.g. 10.0.0.5:6379) or 'ray://HOST:PORT' "
    "(Ray Client, e.g. ray://head:10001)"
)
"""The ``--ray`` address forms, as the messages name them."""


_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)"


_ADDRESS = re.compile(rf"(?P<client>ray://)?(?P<host>{_HOST}):(?P<port>[0-9]{{1,5}})")


def parse_ray_address(address: str, *, field: str = "--ray", need_extra: bool = True) -> str:
    """``address`` checked: ``auto``, ``local``, ``host:port`` or ``ray://host:port``
    (port 1..65535), returned stripped. With ``need_extra``, Ray is installed, and for a
    ``ray://`` address Ray Client (``ray[client]``, which brings ``grpcio``): checked here,
    before any work.

    Raises:
        InputError: any other form (``http://...``, no port, a path), naming the valid ones.
        MissingExtraError: Ray, or Ray Client for ``ray://``, is not installed.
    """
    s = address.strip() if isinstance(address, str) else ""
    m = _ADDRESS.fullmatch(s)
    if s not in ("auto", "local") and (m is None or not 1 <= int(m["port"]) <= 65535):
        raise InputError(
            field=field,
            expected=f"a Ray address: {RAY_FORMS}",
            got=repr(address),
            fix="name the cluster in one of these forms",
        )
    if not need_extra:
        return s
    if not _installed("ray"):
        raise MissingExtraError("ray", "ray", f"{field} {s}")
    if m is not None and m["client"] and not _installed("grpc"):
        raise MissingExtraError("ray", "ray[client]", f"The Ray Client address {s} (ray://)")
    return s


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _host_port(address: str) -> tuple[str, int] | None:
    m = _ADDRESS.fullmatch(address)
    if m is None:
        return None
    return m["host"].strip("[]"), int(m["port"])


def _unreachable(address: str, why: str) -> SimgapError:
    return SimgapError(
        f"Ray: the cluster at {address} did not answer ({why}; waited at most "
        f"{RAY_CONNECT_TIMEOUT_S:g} s). Fix: check the address and that the cluster is "
        "running ('ray status' on its head), or leave --ray out to run here."
    )


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client preface and an empty SETTINGS frame: a gRPC server (a Ray head's GCS,
a Ray Client server) answers with its own SETTINGS frame."""


def check_reachable(address: str) -> None:
    """For a ``host:port`` or ``ray://host:port`` address: the head accepts a TCP connection
    and answers as a gRPC server would, within ``RAY_CONNECT_TIMEOUT_S`` (checked before any
    work, and before ``ray.init``, which would wait minutes on an address that does not
    answer; ``auto`` and ``local`` are left to Ray).

    Raises:
        SimgapError: nothing answered, or what answered is not a Ray head, naming the
            address and the time waited.
    """
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=RAY_CONNECT_TIMEOUT_S) as sock:
            sock.settimeout(RAY_CONNECT_TIMEOUT_S)
            sock.sendall(_H2_PREFACE)
            head = sock.recv(9)
    except TimeoutError:
        raise _unreachable(address, "no answer in time") from None
    except OSError as e:
        raise _unreachable(address, e.strerror or str(e)) from None
    if len(head) < 4 or head[3] != 4:  # not an HTTP/2 SETTINGS frame
        raise _unreachable(address, "something answered, but not a Ray head (no gRPC)")


def ray_init(address: str | None, *, num_cpus: int | None = None) -> tuple[Any, bool]:
    """Ray, initialised: joined to ``address`` (validated; ``None`` or ``local`` starts an
    instance on this machine with ``num_cpus``), unless this process already is. Returns
    ``(ray, started)``; ``started`` says whether the caller should ``ray.shutdown()``.

    A ``host:port`` or ``ray://host:port`` is first reached directly (``check_reachable``:
    the head must answer as a gRPC server within ``RAY_CONNECT_TIMEOUT_S``), since
    ``ray.init`` itself waits minutes on an address that does not answer. Ray's logging
    stays off the terminal (errors only, workers' output not forwarded).

    Raises:
        InputError: a malformed address.
        MissingExtraError: Ray (or Ray Client, for ``ray://``) is not installed.
        SimgapError: the cluster did not answer, or refused to be joined.
    """
    if address is not None:
        address = parse_ray_address(address)
    try:
        import ray
    except ImportError as e:
        raise MissingExtraError("ray", "ray", "Running on Ray") from e
    if ray.is_initialized():
        return ray, False
    quiet: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
    }
    if address in (None, "local"):
        ray.init(num_cpus=num_cpus or (os.cpu_count() or 1), **quiet)
        return ray, True
    check_reachable(address)
    try:
        ray.init(address=address, **quiet)
    except SimgapError:
        raise
    except Exception as e:  # noqa: BLE001  (Ray raises ConnectionError, RuntimeError, ...)
        raise _unreachable(address, f"{type(e).__name__}: {str(e)[:200]}") from None
    return ray, True
