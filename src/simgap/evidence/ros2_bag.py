"""ROS 2 bags (MCAP, what ``ros2 bag record`` writes by default) as the recording of record.

Read with ``mcap`` and ``mcap-ros2-support`` (the ``ros2`` extra): the CDR messages are
decoded from the definitions the bag embeds, so no ROS installation is needed. One bag (an
``.mcap`` file, or a ``ros2 bag record`` folder of them) is one episode. The rig names two
topics (``[evidence] ros2_state_topic``, ``ros2_command_topic``):

- the measured joints, ``sensor_msgs/msg/JointState`` (``name``, ``position``; the header
  stamp is when the driver read them);
- the commands, ``trajectory_msgs/msg/JointTrajectory`` (``joint_names``, the first point's
  ``positions``: a streaming controller's next target) or ``std_msgs/msg/Float64MultiArray``
  (``data``, in the order ``ros2_command_joints`` gives, else the rig's).

Joint names map through ``joints.<name>.recorded`` and ``unit`` exactly as a dataset's
element names do. The bags become one in-memory ``LeRobotDataset`` whose frames follow
LeRobot's record loop: frame k is the k-th joint state on the period its header stamps keep
(``timestamp = frame_index / fps``, as LeRobot writes it), and its action is the last command
the recorder logged before the next state was read (LeRobot sends action k after reading
observation k). So ``dataset_trajectories`` gives the same Trajectories a LeRobot dataset of
the same recording gives, and every fit that reads a dataset reads the bags. Each message's
log time against its header stamp is its transport latency (``info["ros2"]``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from simgap.errors import InputError, MissingExtraError
from simgap.evidence.lerobot import CODEBASE_VERSION, LeRobotDataset, read_lerobot_dataset
from simgap.rig import Rig

JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
FLOAT64_ARRAY = "std_msgs/msg/Float64MultiArray"
STATE_TYPES = (JOINT_STATE,)
COMMAND_TYPES = (JOINT_TRAJECTORY, FLOAT64_ARRAY)
MAX_JITTER_PERIODS = 0.45
"""Largest distance of a state's stamp from its frame's slot, in periods: further, two
states could take one slot and the stamps keep no period."""
RATE_LABEL_PPM = 100.0
"""A rate from the stamps within this many parts per million of a whole number of Hz is
that rate (the driver's timer; LeRobot labels its datasets so): at most 2 ms over 20 s."""


@dataclass(frozen=True)
class TransportLatency:
    """Log time minus header stamp of one topic's messages: the hop from the stamping
    driver to the recorder (both clocks ROS time; negative values: they disagree).

    Attributes:
        topic: the topic.
        latency_s: per message [s], shape (N,).
    """

    topic: str
    latency_s: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Median, 95th percentile, extremes [s] and the message count."""
        x = self.latency_s
        return {
            "topic": self.topic,
            "messages": int(x.size),
            "p50_s": float(np.median(x)),
            "p95_s": float(np.percentile(x, 95)),
            "min_s": float(x.min()),
            "max_s": float(x.max()),
            "clocks_disagree": bool(x.min() < 0),
        }


@dataclass(frozen=True)
class BagEpisode:
    """One bag on its frame grid, in recorded units and rig joint order.

    Attributes:
        path: the bag (file or folder).
        frame_index: frame of each state, shape (T,), from 0 (gaps: states not logged).
        period_s: the states' period from their stamps [s].
        state: measured joints, shape (T, J), recorded units.
        action: the command in force at each frame, shape (T, J), recorded units.
        stamp_jitter_s: stamps' distance from their slots [s], shape (T,).
        latency: transport latency of the state topic (and of a stamped command topic).
        dropped_leading: states before the first command (not an episode's frames).
        stamps: ``header`` (the states' stamps) or ``log`` (unstamped: log times used).
        types: topic -> message type.
    """

    path: Path
    frame_index: np.ndarray
    period_s: float
    state: np.ndarray
    action: np.ndarray
    stamp_jitter_s: np.ndarray
    latency: tuple[TransportLatency, ...]
    dropped_leading: int
    stamps: str
    types: dict[str, str]

    def summary(self) -> dict[str, Any]:
        """What ``info["ros2"]`` says of this bag."""
        return {
            "bag": str(self.path),
            "frames": int(self.frame_index.size),
            "period_s": self.period_s,
            "gaps": int(np.count_nonzero(np.diff(self.frame_index) > 1)),
            "stamp_jitter_p95_s": float(np.percentile(np.abs(self.stamp_jitter_s), 95)),
            "dropped_leading_states": self.dropped_leading,
            "stamps": self.stamps,
            "types": dict(self.types),
            "transport_latency": [lt.to_dict() for lt in self.latency],
        }


def _mcap() -> Any:
    try:
        from mcap.reader import make_reader
        from mcap_ros2.decoder import DecoderFactory
    except ImportError as e:  # the optional extra
        raise MissingExtraError(
            "ros2", "mcap-ros2-support", "Reading ROS 2 bags (evidence.ros2_bags)"
        ) from e
    return make_reader, DecoderFactory


def bag_files(path: Path) -> list[Path]:
    """The MCAP files of a bag: the file itself, or a ``ros2 bag record`` folder's."""
    if path.is_file():
        return [path]
    files = sorted(path.glob("*.mcap"))
    if files:
        return files
    db3 = sorted(path.glob("*.db3"))
    raise InputError(
        file=path,
        field="evidence.ros2_bags",
        expected="an MCAP bag (.mcap)",
        got="a sqlite3 bag (.db3)" if db3 else "no .mcap file in the folder",
        fix="convert it with 'ros2 bag convert' to the mcap storage, or record "
        "with 'ros2 bag record -s mcap'"
        if db3
        else "point at the bag folder ros2 bag record wrote, or its .mcap file",
    )


def _messages(files: Sequence[Path], topics: Sequence[str]) -> Iterator[tuple[str, str, int, Any]]:
    """(topic, type, log time [ns], decoded message) of ``topics``, file by file."""
    make_reader, factory = _mcap()
    from mcap.exceptions import McapError

    for f in files:
        try:
            with f.open("rb") as stream:
                reader = make_reader(stream, decoder_factories=[factory()])
                for schema, channel, msg, decoded in reader.iter_decoded_messages(topics):
                    yield channel.topic, schema.name if schema else "", msg.log_time, decoded
        except (McapError, ValueError, KeyError, EOFError, OSError) as e:
            raise InputError(
                file=f,
                expected="a readable MCAP bag with ROS 2 (CDR) messages",
                got=f"{type(e).__name__}: {str(e)[:200]}",
                fix="re-record or check the bag with 'mcap doctor'",
            ) from e


def bag_topics(files: Sequence[Path]) -> dict[str, str]:
    """Topic -> message type of every channel in the bag's files."""
    make_reader, _ = _mcap()
    from mcap.exceptions import McapError

    out: dict[str, str] = {}
    for f in files:
        try:
            with f.open("rb") as stream:
                reader = make_reader(stream)
                summary = reader.get_summary()
                if summary is not None:
                    for ch in summary.channels.values():
                        sc = summary.schemas.get(ch.schema_id)
                        out[ch.topic] = sc.name if sc else ""
                    continue
                for schema, channel, _msg in reader.iter_messages():  # no summary: a scan
                    out.setdefault(channel.topic, schema.name if schema else "")
        except (McapError, ValueError, EOFError, OSError) as e:
            raise InputError(
                file=f,
                expected="a readable MCAP bag",
                got=f"{type(e).__name__}: {str(e)[:200]}",
                fix="re-record or check the bag with 'mcap doctor'",
            ) from e
    return out


def _check_topic(
    path: Path, topics: dict[str, str], topic: str, key: str, allowed: tuple[str, ...]
) -> str:
    fitting = sorted(t for t, ty in topics.items() if ty in allowed)
    listed = ", ".join(f"{t} ({ty})" for t, ty in sorted(topics.items())) or "none"
    if topic not in topics:
        raise InputError(
            file=path,
            field=f"evidence.{key}",
            expected=f"a topic of the bag carrying {' or '.join(allowed)}",
            got=f"no topic {topic} (the bag's topics: {listed})",
            fix=f"set evidence.{key} to one of: {', '.join(fitting)}"
            if fitting
            else f"record {topic} into the bag",
        )
    if topics[topic] not in allowed:
        raise InputError(
            file=path,
            field=f"evidence.{key} ({topic})",
            expected=f"a message type simgap reads: {' or '.join(allowed)}",
            got=f"{topics[topic] or 'an untyped channel'}",
            fix=(
                f"set evidence.{key} to one of: {', '.join(fitting)}"
                if fitting
                else f"publish {' or '.join(allowed)} on it and re-record"
            ),
        )
    return topics[topic]


def _columns(
    path: Path, topic: str, names: Sequence[str], wanted: Sequence[str], key: str
) -> list[int]:
    index = {n: i for i, n in enumerate(names)}
    missing = [w for w in wanted if w not in index]
    if missing:
        raise InputError(
            file=path,
            field=f"{key} ({topic})",
            expected=f"the rig's recorded joint names {list(wanted)}",
            got=f"joint names {list(names)}, without {missing}",
            fix="map each model joint to the bag's name with joints.<name>.recorded in rig.toml",
        )
    return [index[w] for w in wanted]


def _stamp_ns(msg: Any) -> int:
    st = msg.header.stamp
    return int(st.sec) * 1_000_000_000 + int(st.nanosec)


def read_bag(path: Path, rig: Rig) -> BagEpisode:
    """One bag on LeRobot's frame grid (see the module docstring).

    Raises:
        InputError: the bag is unreadable or not MCAP, a topic is missing or carries a type
            simgap does not read, a message lacks one of the rig's joints, or the states
            keep no period.
    """
    ev = rig.evidence
    files = bag_files(path)
    topics = bag_topics(files)
    st_topic, cmd_topic = ev.ros2_state_topic, str(ev.ros2_command_topic)
    types = {
        st_topic: _check_topic(path, topics, st_topic, "ros2_state_topic", STATE_TYPES),
        cmd_topic: _check_topic(path, topics, cmd_topic, "ros2_command_topic", COMMAND_TYPES),
    }
    wanted = [j.recorded for j in rig.joints]
    cmd_names = list(ev.ros2_command_joints) or wanted
    st_stamp, st_log, st_pos, cmd_stamp, cmd_log, cmd_pos = [], [], [], [], [], []
    cols: dict[tuple[str, ...], list[int]] = {}
    for topic, ty, log_ns, msg in _messages(files, [st_topic, cmd_topic]):
        if topic == st_topic:
            names, values, field_ = tuple(msg.name), msg.position, "evidence.ros2_state_topic"
        elif ty == JOINT_TRAJECTORY:
            if not msg.points:
                continue  # an empty trajectory stops a controller; it commands nothing
            names, values = tuple(msg.joint_names), msg.points[0].positions
            field_ = "evidence.ros2_command_topic"
        else:
            names, values, field_ = tuple(cmd_names), msg.data, "evidence.ros2_command_joints"
        if names not in cols:
            cols[names] = _columns(path, topic, names, wanted, field_)
        if len(values) != len(names):
            raise InputError(
                file=path,
                field=f"{field_} ({topic})",
                expected=f"{len(names)} positions, one per joint name",
                got=f"{len(values)} in a message logged at {log_ns} ns",
                fix="list the command's joints in order in evidence.ros2_command_joints"
                if ty == FLOAT64_ARRAY
                else "re-record: the message is malformed",
            )
        row = [float(values[i]) for i in cols[names]]
        if topic == st_topic:
            st_stamp.append(_stamp_ns(msg))
            st_log.append(log_ns)
            st_pos.append(row)
        else:
            cmd_stamp.append(_stamp_ns(msg) if ty == JOINT_TRAJECTORY else 0)
            cmd_log.append(log_ns)
            cmd_pos.append(row)
    for topic, rows in ((st_topic, st_pos), (cmd_topic, cmd_pos)):
        if len(rows) < 2:
            raise InputError(
                file=path,
                field=f"topic {topic}",
                expected="at least two messages",
                got=f"{len(rows)}",
                fix="record the topic for the whole episode",
            )
    return _on_grid(
        path,
        rig,
        types,
        np.array(st_stamp),
        np.array(st_log),
        np.array(st_pos),
        np.array(cmd_stamp),
        np.array(cmd_log),
        np.array(cmd_pos),
    )


def _on_grid(
    path: Path,
    rig: Rig,
    types: dict[str, str],
    st_stamp: np.ndarray,
    st_log: np.ndarray,
    st_pos: np.ndarray,
    cmd_stamp: np.ndarray,
    cmd_log: np.ndarray,
    cmd_pos: np.ndarray,
) -> BagEpisode:
    ev = rig.evidence
    stamped = bool(np.all(st_stamp > 0))
    clock = st_stamp if stamped else st_log
    order = np.argsort(clock, kind="stable")
    clock, st_log, st_pos = clock[order], st_log[order], st_pos[order]
    keep = np.concatenate([[True], np.diff(clock) > 0])  # a repeated stamp: the same read
    clock, st_log, st_pos = clock[keep], st_log[keep], st_pos[keep]
    c_order = np.argsort(cmd_log, kind="stable")
    cmd_log, cmd_pos, cmd_stamp = cmd_log[c_order], cmd_pos[c_order], cmd_stamp[c_order]
    # frame k's action: the last command logged before state k + 1 was read
    nxt = np.append(clock[1:], np.iinfo(np.int64).max)
    which = np.searchsorted(cmd_log, nxt, side="right") - 1
    first = int(np.argmax(which >= 0)) if np.any(which >= 0) else clock.size
    if clock.size - first < 2:
        raise InputError(
            file=path,
            field=f"topic {ev.ros2_command_topic}",
            expected="commands logged while the joint states were",
            got="no command before the last state",
            fix="record the command and state topics in the same bag",
        )
    clock, st_log, st_pos, which = clock[first:], st_log[first:], st_pos[first:], which[first:]
    rel = (clock - clock[0]).astype(float) * 1e-9
    step = np.diff(rel)
    dt0 = float(np.median(step))
    idx = np.round(rel / dt0)
    period = float(np.dot(idx, rel) / np.dot(idx, idx))  # least squares through the origin
    idx = np.round(rel / period)
    jitter = rel - idx * period
    if np.any(np.diff(idx) < 1) or float(np.max(np.abs(jitter))) > MAX_JITTER_PERIODS * period:
        k = int(np.argmax(np.abs(jitter)))
        raise InputError(
            file=path,
            field=f"topic {ev.ros2_state_topic}",
            expected=f"joint states on a regular period (median {dt0 * 1e3:.3g} "
            f"ms), each within {MAX_JITTER_PERIODS:g} of a period of its "
            "slot",
            got=f"state {k} {jitter[k] * 1e3:.3g} ms off its slot",
            fix="publish the joint states at a fixed rate (the driver's read "
            "loop), stamped when they were read",
        )
    lat = (
        [TransportLatency(ev.ros2_state_topic, (st_log - clock).astype(float) * 1e-9)]
        if stamped
        else []
    )
    if np.all(cmd_stamp > 0):
        lat.append(
            TransportLatency(str(ev.ros2_command_topic), (cmd_log - cmd_stamp).astype(float) * 1e-9)
        )
    return BagEpisode(
        path=path,
        frame_index=idx.astype(np.int64),
        period_s=period,
        state=st_pos,
        action=cmd_pos[which],
        stamp_jitter_s=jitter,
        latency=tuple(lat),
        dropped_leading=first,
        stamps="header" if stamped else "log",
        types=types,
    )


def read_ros2_bags(rig: Rig) -> LeRobotDataset:
    """The rig's ``evidence.ros2_bags`` as one in-memory LeRobot dataset, one episode per
    bag in the order the rig names them; ``info["ros2"]`` holds each bag's topics, types,
    period, stamp jitter and transport latency.

    Raises:
        InputError: as ``read_bag``; or the bags keep periods more than 1 % apart.
    """
    bags = [read_bag(p, rig) for p in rig.evidence.ros2_bags]
    if not bags:
        raise InputError(file=rig.source, field="evidence.ros2_bags", expected="a bag", got="none")
    period = float(np.median([b.period_s for b in bags]))
    for b in bags:
        if abs(b.period_s - period) > 0.01 * period:
            raise InputError(
                file=b.path,
                field=f"topic {rig.evidence.ros2_state_topic}",
                expected=f"the period of the other bags ({period * 1e3:.4g} ms)",
                got=f"{b.period_s * 1e3:.4g} ms",
                fix="diagnose bags recorded at one rate together",
            )
    fps = 1.0 / period
    if round(fps) > 0 and abs(fps - round(fps)) <= RATE_LABEL_PPM * 1e-6 * fps:
        fps = float(round(fps))
    cols: dict[str, list[Any]] = {
        k: [] for k in ("timestamp", "frame_index", "episode_index", "index", "task_index")
    }
    state, action = [], []
    gi = 0
    for e, b in enumerate(bags):
        n = b.frame_index.size
        cols["timestamp"].append((b.frame_index / fps).astype(np.float32))
        cols["frame_index"].append(b.frame_index)
        cols["episode_index"].append(np.full(n, e, dtype=np.int64))
        cols["index"].append(np.arange(gi, gi + n, dtype=np.int64))
        cols["task_index"].append(np.zeros(n, dtype=np.int64))
        state.append(b.state)
        action.append(b.action)
        gi += n
    names = [j.recorded for j in rig.joints]
    width = len(names)
    arrays = {k: pa.array(np.concatenate(v)) for k, v in cols.items()}
    for key, blocks in (("action", action), ("observation.state", state)):
        flat = pa.array(np.concatenate(blocks).reshape(-1))
        arrays[key] = pa.FixedSizeListArray.from_arrays(flat, width)
    vec = {"dtype": "float64", "shape": [width], "names": names}
    scalar = {"shape": [1], "names": None}
    features = {
        "timestamp": {"dtype": "float32", **scalar},
        **{
            k: {"dtype": "int64", **scalar}
            for k in ("frame_index", "episode_index", "index", "task_index")
        },
        "action": vec,
        "observation.state": vec,
    }
    info = {
        "codebase_version": CODEBASE_VERSION,
        "fps": fps,
        "features": features,
        "total_episodes": len(bags),
        "total_frames": gi,
        "ros2": {
            "state_topic": rig.evidence.ros2_state_topic,
            "fps_from_stamps": 1.0 / period,
            "command_topic": rig.evidence.ros2_command_topic,
            "bags": [b.summary() for b in bags],
        },
    }
    episodes = tuple(
        {"episode_index": e, "length": int(b.frame_index.size), "source": str(b.path)}
        for e, b in enumerate(bags)
    )
    root = bags[0].path if len(bags) == 1 else bags[0].path.parent
    return LeRobotDataset(
        root=root, info=info, fps=fps, features=features, table=pa.table(arrays), episodes=episodes
    )


def rig_recording(rig: Rig) -> LeRobotDataset:
    """The rig's recording of record: ``evidence.dataset``, else its ROS 2 bags (the
    evidence bundle's ``lerobot_dataset``)."""
    if rig.evidence.dataset is not None:
        return read_lerobot_dataset(rig.evidence.dataset)
    if rig.evidence.ros2_bags:
        return read_ros2_bags(rig)
    raise InputError(
        file=rig.source,
        field="evidence.dataset",
        expected="a recording: evidence.dataset or evidence.ros2_bags",
        got="neither",
        fix="name the LeRobot dataset or the ROS 2 bags in rig.toml",
    )
