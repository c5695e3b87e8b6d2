"""Readers of LeRobot's async-inference logs (``policy_server_*.log``, ``robot_client_*.log``).

LeRobot (v0.6.1, ``src/lerobot/async_inference/``) writes ``logs/{policy_server|
robot_client}_{unix time}.log`` in the folder it was started from, at DEBUG level, in the
format ``"%(levelname)s %(asctime)s %(lerobot_location)15s %(message)s"`` with a 1-second
``asctime``. The timings therefore come from the message text:

- server, DEBUG: ``Observation {t} | Prepare time: {ms}ms | Preprocessing time: {ms}ms |
  Inference time: {ms}ms | Postprocessing time: {ms}ms | Total time: {ms}ms``
- server, INFO: ``Preprocessing and inference took {s}s, action shape: torch.Size([B, T, D])``,
  ``Running inference for observation #{t} (must_go: {b})``,
  ``Observation {t} | Total time: {ms}ms``, ``Action chunk #{t} generated | Total time: {ms}ms``
- server, DEBUG: ``Received observation #{t} | Avg FPS: {f} | Target: {f} | One-way latency:
  {ms}ms``, ``Skipping observation #{t} - ...``, ``Observation #{t} has been filtered out``
- client, DEBUG: ``QUEUE SIZE: {n} (Must go: {b})``, ``Control loop (ms): {ms}``,
  ``Observation serialization time: {s}s``; behind ``verbose``: ``... | Network latency
  (server->client): {ms}ms | ...`` and ``... Action #{t} performed | Queue size: {n}``.

A filtered observation logs two DEBUG lines (``Skipping observation #N - ...`` then
``Observation #N has been filtered out``, policy_server.py); the pair counts once. The server
logs INFO ``Client {peer} connected and ready`` whenever a client (re)connects, and resets
its state there: each such line starts a new session, read as its own episode. The client
logs its whole ``RobotClientConfig`` at start (INFO, pretty-printed over several lines), from
which ``actions_per_chunk``, ``chunk_size_threshold`` and ``fps`` are read; the server logs
``Actions per chunk: N`` with the policy instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.evidence._checks import check_durations
from simgap.rig import Rig
from simgap.series import StageTimes
from simgap.validate import check_input_file

_F = r"([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
_LINE = re.compile(
    r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+"
    r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s+(\S+)\s(.*)$"
)
_STAGES = re.compile(
    r"Observation #?(\d+) \| Prepare time: "
    + _F
    + r"\s*ms \| Preprocessing time: "
    + _F
    + r"\s*ms \| Inference time: "
    + _F
    + r"\s*ms \| Postprocessing time: "
    + _F
    + r"\s*ms \| Total time: "
    + _F
    + r"\s*ms"
)
_PRED = re.compile(
    r"Preprocessing and inference took "
    + _F
    + r"\s*s(?:, action shape: torch\.Size\(\[([\d,\s]*)\]\))?"
)
_RUN = re.compile(r"Running inference for observation #(\d+) \(must_go: (True|False)\)")
_OBS_TOTAL = re.compile(r"^Observation #?(\d+) \| Total time: " + _F + r"\s*ms\s*$")
_CHUNK = re.compile(r"Action chunk #(\d+) generated \| Total time: " + _F + r"\s*ms")
_RECV = re.compile(r"Received observation #(\d+) \|.*One-way latency: " + _F + r"\s*ms")
_SKIP = re.compile(r"Skipping observation #(\d+)")
_FILTERED = re.compile(r"Observation #(\d+) has been filtered out")
_READY = re.compile(r"Client (\S+) connected and ready")
_APC = re.compile(r"Receiving policy instructions from .*\| Actions per chunk: (\d+)")
_CFG = re.compile(r"^\{?\s?'(actions_per_chunk|chunk_size_threshold|fps)': ([-+0-9.eE]+),?\s*$")
_DEVICE = re.compile(r"Time taken to put policy on (\S+): " + _F + r"\s*seconds")
_QUEUE = re.compile(r"QUEUE SIZE: (\d+) \(Must go: (True|False)\)")
_LOOP = re.compile(r"Control loop \(ms\): " + _F)
_SER = re.compile(r"Observation serialization time: " + _F + r"\s*s")
_NET = re.compile(r"Network latency \(server->client\): " + _F + r"\s*ms")
_POP = re.compile(r"Action #\d+ performed \| Queue size: (\d+)")

SERVER_STAGES = ("prepare", "preprocessing", "inference", "postprocessing")
DEBUG_FIX = (
    "LeRobot writes its DEBUG timing lines only to the log file, logs/"
    "policy_server_<unix time>.log and logs/robot_client_<unix time>.log in the folder "
    "the server and client were started from; pass those files, not the console output "
    "(the console shows INFO only). If your setup lowered the level, set it back to "
    "DEBUG before starting, e.g. logging.getLogger().setLevel(logging.DEBUG)"
)


def _arr(
    values: Sequence[float] | Sequence[int] | Sequence[bool],
    dtype: type = float,
) -> np.ndarray:
    a: np.ndarray = np.asarray(values, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class LeRobotLog:
    """The timing content of one LeRobot async-inference log.

    Attributes:
        source: the file read.
        server_stages: per inferred observation, durations [s] of ``prepare``,
            ``preprocessing``, ``inference``, ``postprocessing`` (and ``unaccounted``: the
            logged total minus their sum, when positive) from the DEBUG line; or ``inference``
            alone from the INFO line when the DEBUG line is absent; ``t`` = the line's
            ``asctime`` [s] (1-second resolution). None for a client log.
        must_go: one flag per ``Running inference`` line, shape (I,).
        filtered: observations the server skipped or filtered out.
        one_way_latency_s: client-to-server latency of each received observation [s].
        chunk_total_s: inference + pickling per generated action chunk [s].
        action_shape: the logged action shape ``(B, T, D)``, when logged.
        device: (device, seconds) of ``Time taken to put policy on``, when logged.
        queue_size: the client's action-queue size at each observation send, shape (Q,).
        queue_must_go: the must-go flag of each send, shape (Q,).
        queue_t: ``asctime`` of each send [s], shape (Q,).
        control_loop_s: the client's per-tick control-loop time [s], shape (L,).
        control_loop_t: ``asctime`` of each control-loop line [s], shape (L,).
        serialization_s: the client's observation serialisation times [s].
        network_s: server-to-client latency of each received chunk [s] (verbose only).
        pop_queue_size: the queue size after each performed action (verbose only).
        debug_lines: whether any DEBUG line was present.
        warnings: oddities, with counts.
        sessions: the peer of each client session, in order (server log; one
            ``connected and ready`` line each); a server log without one is one session.
        filtered_per_session: observations filtered out in each session (server log).
        actions_per_chunk: from the client's config or the server's policy instructions.
        chunk_size_threshold: from the client's config (None: not logged).
        client_fps: the client's ``fps`` from its config [1/s] (None: not logged).
    """

    source: str
    server_stages: StageTimes | None = None
    must_go: np.ndarray = field(default_factory=lambda: _arr([], bool))
    filtered: int = 0
    one_way_latency_s: np.ndarray = field(default_factory=lambda: _arr([]))
    chunk_total_s: np.ndarray = field(default_factory=lambda: _arr([]))
    action_shape: tuple[int, ...] | None = None
    device: tuple[str, float] | None = None
    queue_size: np.ndarray = field(default_factory=lambda: _arr([], int))
    queue_must_go: np.ndarray = field(default_factory=lambda: _arr([], bool))
    queue_t: np.ndarray = field(default_factory=lambda: _arr([]))
    control_loop_s: np.ndarray = field(default_factory=lambda: _arr([]))
    control_loop_t: np.ndarray = field(default_factory=lambda: _arr([]))
    serialization_s: np.ndarray = field(default_factory=lambda: _arr([]))
    network_s: np.ndarray = field(default_factory=lambda: _arr([]))
    pop_queue_size: np.ndarray = field(default_factory=lambda: _arr([], int))
    debug_lines: bool = False
    warnings: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    filtered_per_session: tuple[int, ...] = ()
    actions_per_chunk: int | None = None
    chunk_size_threshold: float | None = None
    client_fps: float | None = None

    @property
    def role(self) -> str:
        """``server``, ``client`` or ``mixed``: which side's timing lines the log holds."""
        server = self.server_stages is not None
        client = bool(self.queue_size.size or self.control_loop_s.size)
        return "mixed" if server and client else ("server" if server else "client")

    def control_loop_times(self) -> StageTimes | None:
        """The client's control-loop times as StageTimes (stage ``control_loop``)."""
        if not self.control_loop_s.size:
            return None
        n = self.control_loop_s.size
        return StageTimes(
            t=self.control_loop_t,
            episode=np.zeros(n, np.int64),
            step=np.arange(n),
            stages={"control_loop": self.control_loop_s},
            source=self.source,
        )


class _Sessions:
    """Client sessions of a server log, split at ``Client {peer} connected and ready``, and
    the filtered observations of each (a ``Skipping`` line and its ``filtered out`` twin count
    once)."""

    def __init__(self) -> None:
        self._peers: list[str] = []
        self._events = 0
        self.filtered: list[int] = [0]
        self._pending: list[int] = []

    @property
    def current(self) -> int:
        return max(0, len(self._peers) - 1)

    def ready(self, peer: str) -> None:
        if self._events and not self._peers:
            self._peers.append("(before the first 'connected and ready')")
        if self._peers:
            self.filtered.append(0)
        self._peers.append(peer)
        self._events, self._pending = 0, []

    def event(self) -> None:
        self._events += 1

    def skipped(self, timestep: int) -> None:
        self.event()
        self.filtered[self.current] += 1
        self._pending.append(timestep)

    def filtered_out(self, timestep: int) -> None:
        self.event()
        if timestep in self._pending:
            self._pending.remove(timestep)  # the twin of a counted 'Skipping' line
        else:
            self.filtered[self.current] += 1

    def peers(self) -> tuple[str, ...]:
        return (
            tuple(self._peers)
            if self._peers
            else (("(one session)",) if any(self.filtered) or self._events else ())
        )


def _steps(session: list[float] | list[int]) -> np.ndarray:
    """Step index within each session, shape (N,)."""
    e = np.asarray(session, dtype=np.int64)
    out = np.zeros(e.size, np.int64)
    for k in np.unique(e):
        idx = np.flatnonzero(e == k)
        out[idx] = np.arange(idx.size)
    return out


def _epoch(stamp: str, path: Path, line: int) -> float:
    """Seconds since the epoch of a log line's ``YYYY-MM-DD HH:MM:SS`` stamp."""
    try:
        return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").timestamp()
    except ValueError:
        raise InputError(
            file=path,
            field=f"line {line}: time stamp",
            expected="a date and time YYYY-MM-DD HH:MM:SS",
            got=stamp,
            fix="the line is damaged: restore it from the original log, or delete it",
        ) from None


def read_lerobot_log(path: str | Path) -> LeRobotLog:
    """Parse one ``policy_server_*.log`` or ``robot_client_*.log`` (either role, or both).

    Raises:
        InputError: the file is missing, or holds no timing line at all (the message says
            how to get LeRobot's DEBUG lines).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(
            file=path,
            expected="a LeRobot log file",
            got="no such file",
            fix="pass logs/policy_server_*.log or logs/robot_client_*.log",
        )
    check_input_file(path, "a LeRobot log file")
    st: dict[str, list[float]] = {k: [] for k in (*SERVER_STAGES, "unaccounted", "t", "session")}
    pred: list[float] = []
    pred_t: list[float] = []
    pred_session: list[int] = []
    must_go: list[bool] = []
    one_way: list[float] = []
    chunk: list[float] = []
    qs: list[int] = []
    qmg: list[bool] = []
    qt: list[float] = []
    loop: list[float] = []
    loop_t: list[float] = []
    ser: list[float] = []
    net: list[float] = []
    pop: list[int] = []
    shape: tuple[int, ...] | None = None
    device: tuple[str, float] | None = None
    lines = matched_prefix = 0
    debug = False
    sessions = _Sessions()
    cfg: dict[str, float] = {}
    in_cfg = False
    apc_server: int | None = None
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            lines += 1
            m = _LINE.match(raw.rstrip("\r\n"))
            if m is None:
                if in_cfg and (c := _CFG.match(raw.rstrip("\r\n"))) is not None:
                    cfg[c.group(1)] = float(c.group(2))
                continue  # tracebacks, continuation lines, other output
            matched_prefix += 1
            level, stamp, msg = m.group(1), m.group(2), m.group(4)
            debug = debug or level == "DEBUG"
            in_cfg = msg.startswith("{'actions_per_chunk'")
            if in_cfg and (c := _CFG.match(msg)) is not None:
                cfg[c.group(1)] = float(c.group(2))
            if (s := _STAGES.search(msg)) is not None:
                sessions.event()
                st["session"].append(sessions.current)
                vals = [float(s.group(i)) * 1e-3 for i in range(2, 7)]
                for k, v in zip(SERVER_STAGES, vals[:4], strict=True):
                    st[k].append(v)
                st["unaccounted"].append(max(0.0, vals[4] - sum(vals[:4])))
                st["t"].append(_epoch(stamp, path, lines))
            elif (s := _PRED.search(msg)) is not None:
                pred.append(float(s.group(1)))
                pred_t.append(_epoch(stamp, path, lines))
                sessions.event()
                pred_session.append(sessions.current)
                if s.group(2):
                    shape = tuple(int(x) for x in s.group(2).split(",") if x.strip())
            elif (s := _RUN.search(msg)) is not None:
                must_go.append(s.group(2) == "True")
            elif (s := _QUEUE.search(msg)) is not None:
                qs.append(int(s.group(1)))
                qmg.append(s.group(2) == "True")
                qt.append(_epoch(stamp, path, lines))
            elif (s := _LOOP.search(msg)) is not None:
                loop.append(float(s.group(1)) * 1e-3)
                loop_t.append(_epoch(stamp, path, lines))
            elif (s := _RECV.search(msg)) is not None:
                one_way.append(float(s.group(2)) * 1e-3)
            elif (s := _CHUNK.search(msg)) is not None:
                chunk.append(float(s.group(2)) * 1e-3)
            elif (s := _SER.search(msg)) is not None:
                ser.append(float(s.group(1)))
            elif (s := _NET.search(msg)) is not None:
                net.append(float(s.group(1)) * 1e-3)
            elif (s := _POP.search(msg)) is not None:
                pop.append(int(s.group(1)))
            elif (s := _SKIP.search(msg)) is not None:
                sessions.skipped(int(s.group(1)))
            elif (s := _FILTERED.search(msg)) is not None:
                sessions.filtered_out(int(s.group(1)))
            elif (s := _READY.search(msg)) is not None:
                sessions.ready(s.group(1))
            elif (s := _APC.search(msg)) is not None:
                apc_server = int(s.group(1))
            elif (s := _DEVICE.search(msg)) is not None:
                device = (s.group(1), float(s.group(2)))
            elif _OBS_TOTAL.search(msg) is not None:
                pass  # INFO twin of the DEBUG per-stage line
    notes: list[str] = []
    server: StageTimes | None = None
    if st["t"]:
        n = len(st["t"])
        stages = {k: np.asarray(st[k]) for k in SERVER_STAGES}
        if any(st["unaccounted"]):
            stages["unaccounted"] = np.asarray(st["unaccounted"])
        server = StageTimes(
            t=np.asarray(st["t"]),
            episode=np.asarray(st["session"], np.int64),
            step=_steps(st["session"]),
            stages=stages,
            source=str(path),
        )
    elif pred:
        n = len(pred)
        server = StageTimes(
            t=np.asarray(pred_t),
            episode=np.asarray(pred_session, np.int64),
            step=_steps(pred_session),
            stages={"inference": np.asarray(pred)},
            source=str(path),
        )
        notes.append(
            f"{path.name}: only the INFO line 'Preprocessing and inference took' "
            f"({n} inferences); the per-stage breakdown needs the DEBUG lines. " + DEBUG_FIX
        )
    if server is not None:
        check_durations(server.stages, path, "log line with the stage")
    has_client = bool(qs or loop)
    if server is None and not has_client:
        what = (
            f"{matched_prefix} LeRobot log lines, none with timing"
            if matched_prefix
            else f"{lines} lines, none in LeRobot's log format"
        )
        raise InputError(
            file=path,
            field="timing lines",
            expected="LeRobot's DEBUG timing lines (server: 'Observation N | Prepare time: ... "
            "| Total time: ...ms'; client: 'QUEUE SIZE: n (Must go: b)' and 'Control "
            "loop (ms): x'); DEBUG logging must be on",
            got=what,
            fix=DEBUG_FIX,
        )
    for vals, name in ((loop, "Control loop (ms)"), (one_way, "One-way latency")):
        neg = sum(1 for v in vals if v < 0)
        if neg:
            notes.append(
                f"{path.name}: {neg} negative '{name}' values (client and server "
                "clocks differ); left out"
            )
    peers = sessions.peers()
    if len(peers) > 1:
        notes.append(
            f"{path.name}: {len(peers)} client sessions (the server reset at each "
            "'connected and ready': " + ", ".join(peers) + "); each is its own episode"
        )
    apc = int(cfg["actions_per_chunk"]) if "actions_per_chunk" in cfg else apc_server
    return LeRobotLog(
        source=str(path),
        server_stages=server,
        must_go=_arr(must_go, bool),
        filtered=sum(sessions.filtered),
        sessions=peers,
        filtered_per_session=tuple(sessions.filtered),
        actions_per_chunk=apc,
        chunk_size_threshold=cfg.get("chunk_size_threshold"),
        client_fps=cfg.get("fps"),
        one_way_latency_s=_arr([v for v in one_way if v >= 0]),
        chunk_total_s=_arr(chunk),
        action_shape=shape,
        device=device,
        queue_size=_arr(qs, int),
        queue_must_go=_arr(qmg, bool),
        queue_t=_arr(qt),
        control_loop_s=_arr([v for v in loop if v >= 0]),
        control_loop_t=_arr([t for v, t in zip(loop, loop_t, strict=True) if v >= 0]),
        serialization_s=_arr(ser),
        network_s=_arr(net),
        pop_queue_size=_arr(pop, int),
        debug_lines=debug,
        warnings=tuple(notes),
    )


def read_lerobot_logs(paths: Sequence[str | Path]) -> tuple[LeRobotLog, ...]:
    """Parse several LeRobot logs, in the order given."""
    return tuple(read_lerobot_log(p) for p in paths)


def load_server_logs(rig: Rig) -> tuple[LeRobotLog, ...]:
    """Loader for ``ctx.evidence.get``: the rig's ``evidence.server_logs``."""
    return read_lerobot_logs(rig.evidence.server_logs)


def load_client_logs(rig: Rig) -> tuple[LeRobotLog, ...]:
    """Loader for ``ctx.evidence.get``: the rig's ``evidence.client_logs``."""
    return read_lerobot_logs(rig.evidence.client_logs)
