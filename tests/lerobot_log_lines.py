"""Builders of LeRobot v0.6.1 async-inference log files: a stand-in that copies the log
lines written by ``src/lerobot/async_inference/policy_server.py`` and ``robot_client.py``
of LeRobot release 0.6.1, so the default suite runs without LeRobot. The real package's
own server and client write and are read in
``tests/lerobot_real/test_lerobot_061.py::test_async_policy_server_and_robot_client_logs``
(CI's Python 3.12 step). Line formats from that source:
``"%(levelname)s %(asctime)s %(lerobot_location)15s %(message)s"``, 1-second asctime; a
filtered observation logs a ``Skipping observation`` line and its ``has been filtered out``
twin; a (re)connecting client logs ``Client {peer} connected and ready``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

USER_LINE = (
    "INFO 2025-11-01 20:28:23 y_server.py:362 Preprocessing and inference took "
    "0.3386s, action shape: torch.Size([1, 50, 32])"
)


def _stamp(i: int) -> str:
    return f"2025-11-01 20:{28 + i // 60:02d}:{i % 60:02d}"


def line(level: str, i: int, loc: str, msg: str) -> str:
    return f"{level} {_stamp(i)} {loc[-15:]:>15s} {msg}"


def server_log(
    path: Path,
    stages_ms: Sequence[Sequence[float]],
    *,
    must_go: bool = True,
    one_way_ms: float = 4.2,
    extra_total_ms: float = 0.0,
) -> Path:
    """One block per inference: (prepare, preprocessing, inference, postprocessing) [ms]."""
    out = [
        line("INFO", 0, "policy_server.py:140", "Time taken to put policy on cuda: 3.2100 seconds")
    ]
    for k, (pr, pp, inf, post) in enumerate(stages_ms):
        t = k + 1
        total = pr + pp + inf + post + extra_total_ms
        out += [
            line(
                "DEBUG",
                t,
                "policy_server.py:181",
                f"Received observation #{t} | Avg FPS: "
                f"29.80 | Target: 30.00 | One-way latency: {one_way_ms:.2f}ms",
            ),
            line(
                "DEBUG",
                t,
                "policy_server.py:190",
                "Server timestamp: 1730492903.123456 | "
                "Client timestamp: 1730492903.119256 | Deserialization time: 0.001234s",
            ),
            line(
                "INFO",
                t,
                "policy_server.py:330",
                f"Running inference for observation #{t} (must_go: {must_go})",
            ),
            line(
                "INFO",
                t,
                "policy_server.py:362",
                f"Preprocessing and inference took "
                f"{(pp + inf) / 1e3:.4f}s, action shape: torch.Size([1, 50, 6])",
            ),
            line(
                "DEBUG",
                t,
                "policy_server.py:371",
                f"Observation {t} | Prepare time: "
                f"{pr:.2f}ms | Preprocessing time: {pp:.2f}ms | Inference time: {inf:.2f}ms | "
                f"Postprocessing time: {post:.2f}ms | Total time: {total:.2f}ms",
            ),
            line("INFO", t, "policy_server.py:373", f"Observation {t} | Total time: {total:.2f}ms"),
            line(
                "INFO",
                t,
                "policy_server.py:250",
                f"Action chunk #{t} generated | Total time: {total + 1.3:.2f}ms",
            ),
            line(
                "DEBUG",
                t,
                "policy_server.py:278",
                f"Skipping observation #{t + 1000} - Observation too similar to last obs "
                "predicted!",
            ),
            line(
                "DEBUG", t, "policy_server.py:210", f"Observation #{t + 1000} has been filtered out"
            ),
        ]
    path.write_text("\n".join(out) + "\n")
    return path


def client_log(path: Path, queue: Sequence[int], loop_ms: Sequence[float]) -> Path:
    out = []
    for k, q in enumerate(queue):
        out += [
            line("DEBUG", k, "robot_client.py:300", f"QUEUE SIZE: {q} (Must go: {q == 0})"),
            line("DEBUG", k, "robot_client.py:310", "Observation serialization time: 0.000812s"),
            line("DEBUG", k, "robot_client.py:320", f"Sent observation #{k} | "),
        ]
    for k, ms in enumerate(loop_ms):
        out.append(line("DEBUG", k // 30, "robot_client.py:420", f"Control loop (ms): {ms:.2f}"))
    path.write_text("\n".join(out) + "\n")
    return path
