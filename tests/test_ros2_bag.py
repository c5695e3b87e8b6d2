"""ROS 2 bags as evidence: a bag written with real CDR encoding (mcap-ros2-support's writer)
holding an SO-101 bench dataset's recording reads back as the same Trajectories, and its
identification agrees with the dataset's; bad bags get one message naming topic and fix."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mcap_ros2", reason="the ros2 extra (mcap, mcap-ros2-support) is absent")

from mcap_ros2.writer import Writer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from simgap.cli import app  # noqa: E402
from simgap.errors import InputError  # noqa: E402
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset  # noqa: E402
from simgap.evidence.ros2_bag import read_ros2_bags, rig_recording  # noqa: E402
from simgap.rig import load_rig  # noqa: E402

SEP = "=" * 80 + "\n"
TIME = "int32 sec\nuint32 nanosec\n"
HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"
DEFS = {  # the ROS 2 message definitions as rosbag2 embeds them (dependencies after SEP)
    "sensor_msgs/msg/JointState": (
        "std_msgs/Header header\nstring[] name\nfloat64[] position\n"
        "float64[] velocity\nfloat64[] effort\n"
    )
    + SEP
    + "MSG: std_msgs/Header\n"
    + HEADER
    + SEP
    + "MSG: builtin_interfaces/Time\n"
    + TIME,
    "trajectory_msgs/msg/JointTrajectory": (
        "std_msgs/Header header\nstring[] joint_names\nJointTrajectoryPoint[] points\n"
    )
    + SEP
    + "MSG: std_msgs/Header\n"
    + HEADER
    + SEP
    + "MSG: builtin_interfaces/Time\n"
    + TIME
    + SEP
    + "MSG: trajectory_msgs/JointTrajectoryPoint\nfloat64[] positions\n"
    "float64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n"
    "builtin_interfaces/Duration time_from_start\n"
    + SEP
    + "MSG: builtin_interfaces/Duration\n"
    + TIME,
    "std_msgs/msg/Float64MultiArray": "MultiArrayLayout layout\nfloat64[] data\n"
    + SEP
    + "MSG: std_msgs/MultiArrayLayout\n"
    "MultiArrayDimension[] dim\nuint32 data_offset\n"
    + SEP
    + "MSG: std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n",
    "std_msgs/msg/String": "string data\n",
}
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
T0_NS = 1_760_000_000_000_000_000
STATE_LATENCY_S = (0.0015, 0.0035)
"""The planted hop from the driver's stamp to the recorder's log time [s] (uniform)."""
COMMAND_AFTER_S = 0.008
"""When the policy's command is logged after the state it answers [s] (< one frame)."""


def _stamp(ns: int) -> dict[str, int]:
    return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


def write_bag(
    path: Path,
    t: np.ndarray,
    q: np.ndarray,
    q_cmd: np.ndarray,
    *,
    command: str = "trajectory_msgs/msg/JointTrajectory",
    names: Sequence[str] = JOINTS,
    state_topic: str = "/joint_states",
    command_topic: str = "/arm_controller/commands",
    seed: int = 0,
    extra: Sequence[tuple[str, str]] = (),
) -> Path:
    """One episode as ``ros2 bag record`` would hold it: JointState stamped at each read
    (``t`` [s]), logged after a random hop; the command (``q_cmd`` [rad], the frame's
    action) logged ``COMMAND_AFTER_S`` after its state; ``extra`` (topic, type) channels."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        w = Writer(f)
        schemas = {k: w.register_msgdef(k, v) for k, v in DEFS.items()}
        for k in range(len(t)):
            stamp = T0_NS + int(round(t[k] * 1e9))
            log = stamp + int(rng.uniform(*STATE_LATENCY_S) * 1e9)
            w.write_message(
                state_topic,
                schemas["sensor_msgs/msg/JointState"],
                {
                    "header": {"stamp": _stamp(stamp), "frame_id": ""},
                    "name": list(names),
                    "position": [float(x) for x in q[k]],
                    "velocity": [],
                    "effort": [],
                },
                log_time=log,
                publish_time=stamp,
            )
            clog = stamp + int(COMMAND_AFTER_S * 1e9)
            pos = [float(x) for x in q_cmd[k]]
            if command == "trajectory_msgs/msg/JointTrajectory":
                msg: dict[str, Any] = {
                    "header": {"stamp": _stamp(clog - 500_000), "frame_id": ""},
                    "joint_names": list(names),
                    "points": [
                        {
                            "positions": pos,
                            "velocities": [],
                            "accelerations": [],
                            "effort": [],
                            "time_from_start": {"sec": 0, "nanosec": 0},
                        }
                    ],
                }
            elif command == "std_msgs/msg/Float64MultiArray":
                msg = {"layout": {"dim": [], "data_offset": 0}, "data": pos}
            else:
                msg = {"data": "open"}
            w.write_message(command_topic, schemas[command], msg, log_time=clog, publish_time=clog)
            for topic, ty in extra:
                w.write_message(topic, schemas[ty], {"data": "x"}, log_time=log)
        w.finish()
    return path


BAG_RIG = """name = "so101-bag"
seed = {seed}
[model]
path = "{model}"
ee_site = "gripperframe"
[control]
dt_s = {dt!r}
real_dt_s = {dt!r}
[noise]
encoder_rad = {enc!r}
[evidence]
ros2_bags = {bags}
ros2_command_topic = "/arm_controller/commands"
{extra}
""" + "".join(f"[joints.{j}]\n" + ("gripper = true\n" if j == "gripper" else "") for j in JOINTS)


def bag_rig(folder: Path, rig: Any, bags: Sequence[Path], extra: str = "") -> Path:
    """A rig reading ``bags`` for the bench rig ``rig``: same model, seed and noise, the
    joints named as the bag names them, in radians (ROS's unit)."""
    path = folder / "bag_rig.toml"
    path.write_text(
        BAG_RIG.format(
            seed=rig.seed,
            model=rig.model_path,
            dt=rig.control_dt_s,
            enc=rig.encoder_rad,
            extra=extra,
            bags="[" + ", ".join(f'"{b}"' for b in bags) + "]",
        )
    )
    return path


def bench_bags(
    tmp: Path, so101: Path, seed: int, seconds: float, episodes: int, faults: Any = None, **kw: Any
) -> tuple[Any, Any, Any, Any]:
    """(bench rig, its dataset, bag rig, its bag dataset): the bench's episodes in bags."""
    from simgap.demo.factory import make_so101_bench

    b = make_so101_bench(
        tmp / "bench",
        so101,
        seed,
        fps=30,
        n_episodes=episodes,
        duration_s=seconds,
        faults=faults,
        n_heldout=0,
    )
    rig = load_rig(b.rig)
    ds = read_lerobot_dataset(rig.evidence.dataset)
    bags = [
        write_bag(
            tmp / "bags" / f"ep{tr.episode}" / f"ep{tr.episode}_0.mcap",
            tr.t,
            tr.q,
            tr.q_cmd,
            seed=tr.episode,
            **kw,
        )
        for tr in dataset_trajectories(ds, rig)
    ]
    brig = load_rig(bag_rig(tmp, rig, [p.parent for p in bags]))
    return rig, ds, brig, read_ros2_bags(brig)


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


@pytest.mark.parametrize(
    "command", ["trajectory_msgs/msg/JointTrajectory", "std_msgs/msg/Float64MultiArray"]
)
def test_bag_reads_back_as_the_datasets_trajectories(
    so101: Path, tmp_path: Path, command: str
) -> None:
    rig, ds, brig, bds = bench_bags(tmp_path, so101, 3, 2.0, 2, command=command)
    assert bds.fps == ds.fps == 30  # a whole rate within 100 ppm is that rate
    assert bds.info["ros2"]["fps_from_stamps"] == pytest.approx(30, rel=1e-9)
    a, b = dataset_trajectories(ds, rig), dataset_trajectories(bds, brig)
    assert [tr.episode for tr in a] == [tr.episode for tr in b] == [0, 1]
    for x, y in zip(a, b, strict=True):
        assert x.joint_names == y.joint_names
        np.testing.assert_array_equal(y.t, x.t)
        np.testing.assert_allclose(y.q, x.q, atol=1e-12)
        np.testing.assert_allclose(y.q_cmd, x.q_cmd, atol=1e-12)
    ros2 = bds.info["ros2"]["bags"]
    assert [r["frames"] for r in ros2] == [len(tr.t) for tr in a]
    assert ros2[0]["types"]["/arm_controller/commands"] == command
    st = ros2[0]["transport_latency"][0]
    assert st["topic"] == "/joint_states" and not st["clocks_disagree"]
    assert STATE_LATENCY_S[0] <= st["p50_s"] <= STATE_LATENCY_S[1]
    assert st["max_s"] <= STATE_LATENCY_S[1]
    # a stamped JointTrajectory also gives the command's hop (0.5 ms planted)
    assert len(ros2[0]["transport_latency"]) == (2 if command.startswith("trajectory") else 1)


def test_bag_on_its_own_clock_jitter_and_a_dropped_state(
    tmp_path: Path,
    demo_model: Path,
) -> None:
    """Read stamps jitter around their slots and one state is lost: the frames keep their
    slots (a gap, as LeRobot's frame_index would show), the action is the last command
    logged before the next read."""
    t = np.arange(60) / 30.0
    rng = np.random.default_rng(1)
    t_read = t + rng.uniform(-0.003, 0.003, t.size)
    t_read[0] = 0.0
    q = np.tile(np.linspace(0, 1, 60)[:, None], (1, 6))
    keep = np.ones(60, bool)
    keep[30] = False
    write_bag(tmp_path / "b.mcap", t_read[keep], q[keep], q[keep] + 0.1)
    rig = load_rig(_tiny_rig(tmp_path, demo_model, ["b.mcap"]))
    ds = read_ros2_bags(rig)
    (tr,) = dataset_trajectories(ds, rig)
    assert ds.fps == pytest.approx(30.0, rel=1e-3)
    assert tr.t.size == 59 and tr.t[30] == pytest.approx(31 / ds.fps)
    np.testing.assert_allclose(tr.q_cmd, q[keep] + 0.1)
    assert ds.info["ros2"]["bags"][0]["gaps"] == 1


def _tiny_rig(
    folder: Path, model: Path, bags: Sequence[str], extra: str = "", joints: Sequence[str] = JOINTS
) -> Path:
    path = folder / "rig.toml"
    path.write_text(
        f'name = "t"\n[model]\npath = "{model}"\n[control]\ndt_s = 0.0333\n'
        f"[evidence]\nros2_bags = {list(bags)!r}\n".replace("'", '"')
        + 'ros2_command_topic = "/arm_controller/commands"\n'
        + extra
        + "".join(f"[joints.{j}]\n" for j in joints)
    )
    return path


def _error(rig_path: Path) -> str:
    with pytest.raises(InputError) as e:
        read_ros2_bags(load_rig(rig_path))
    return str(e.value)


def test_missing_topics_other_names_and_unknown_types_name_the_topic_and_fix(
    tmp_path: Path, demo_model: Path
) -> None:
    t = np.arange(10) / 30.0
    q = np.zeros((10, 6))
    write_bag(tmp_path / "ok.mcap", t, q, q, extra=[("/gui/status", "std_msgs/msg/String")])
    # a state topic the bag lacks: its topics are listed, the JointState one offered
    msg = _error(
        _tiny_rig(
            tmp_path, demo_model, ["ok.mcap"], 'ros2_state_topic = "/follower/joint_states"\n'
        )
    )
    assert "/follower/joint_states" in msg and "ros2_state_topic" in msg
    assert "set evidence.ros2_state_topic to one of: /joint_states" in msg
    # a command topic of a type simgap does not read
    rig = (
        _tiny_rig(tmp_path, demo_model, ["ok.mcap"])
        .read_text()
        .replace("/arm_controller/commands", "/gui/status")
    )
    (tmp_path / "rig.toml").write_text(rig)
    msg = _error(tmp_path / "rig.toml")
    assert "/gui/status" in msg and "std_msgs/msg/String" in msg
    assert "trajectory_msgs/msg/JointTrajectory" in msg and "/arm_controller/commands" in msg
    # the rig's joints are not the bag's: the bag's names and the key to map them
    msg = _error(
        _tiny_rig(tmp_path, demo_model, ["ok.mcap"], joints=["j1", "j2", "j3", "j4", "j5", "j6"])
    )
    assert "/joint_states" in msg and "shoulder_pan" in msg and "joints.<name>.recorded" in msg
    # a Float64MultiArray command of another width than the named joints
    write_bag(tmp_path / "arr.mcap", t, q, q, command="std_msgs/msg/Float64MultiArray")
    msg = _error(
        _tiny_rig(
            tmp_path,
            demo_model,
            ["arr.mcap"],
            'ros2_command_joints = ["shoulder_pan", "shoulder_lift", '
            '"elbow_flex", "wrist_flex", "wrist_roll", "gripper", "x"]\n',
        )
    )
    assert "ros2_command_joints" in msg and "6 in a message" in msg
    # not MCAP at all, a sqlite3 bag folder
    (tmp_path / "junk.mcap").write_bytes(b"not a bag")
    assert "readable MCAP" in _error(_tiny_rig(tmp_path, demo_model, ["junk.mcap"]))
    (tmp_path / "sq").mkdir()
    (tmp_path / "sq" / "sq_0.db3").write_bytes(b"")
    assert "ros2 bag convert" in _error(_tiny_rig(tmp_path, demo_model, ["sq"]))


def test_rig_keys_are_checked_on_load(tmp_path: Path, demo_model: Path) -> None:
    from simgap.rig import rig_from_dict

    base = {
        "name": "t",
        "model": {"path": str(demo_model)},
        "control": {"dt_s": 0.03},
        "joints": {"a": {}},
    }
    with pytest.raises(InputError, match="ros2_command_topic"):
        rig_from_dict({**base, "evidence": {"ros2_bags": ["b.mcap"]}})
    with pytest.raises(InputError, match="one recording of record"):
        rig_from_dict(
            {**base, "evidence": {"ros2_bags": ["b"], "dataset": "d", "ros2_command_topic": "/c"}}
        )
    with pytest.raises(InputError, match="evidence.ros2_bags beside it"):
        rig_from_dict({**base, "evidence": {"ros2_command_topic": "/c"}})
    rig = rig_from_dict(
        {
            **base,
            "evidence": {
                "ros2_bags": ["b"],
                "ros2_command_topic": "/c",
                "ros2_command_joints": ["a"],
            },
        },
        source=tmp_path / "rig.toml",
    )
    assert rig.evidence.ros2_bags == (tmp_path / "b",)
    assert rig.evidence.ros2_state_topic == "/joint_states"
    assert rig.evidence.recording == (tmp_path / "b",)
    assert ("ros2_bags", tmp_path / "b") in rig.evidence.missing()


def test_diagnose_on_a_bad_bag_is_one_message_and_exit_2(tmp_path: Path, demo_model: Path) -> None:
    t = np.arange(10) / 30.0
    write_bag(tmp_path / "ok.mcap", t, np.zeros((10, 6)), np.zeros((10, 6)), command_topic="/other")
    res = CliRunner().invoke(
        app,
        [
            "diagnose",
            str(_tiny_rig(tmp_path, demo_model, ["ok.mcap"])),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "/arm_controller/commands" in res.output
    assert "set evidence.ros2_command_topic to one of: /other" in res.output


def test_diagnose_reads_the_bag_wherever_it_reads_a_dataset(
    so101: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wiring: the evidence gate, the joint identification (actuator and controller) and the
    latency branch's transport finding read the bags; the identification is handed the
    same trajectories the bench's dataset gives (the fit itself is stubbed here)."""
    import simgap.branches.joint_dynamics as jd
    from simgap.diagnose import diagnose_rig

    rig, ds, brig, bds = bench_bags(tmp_path, so101, 3, 1.0, 2)
    seen: list[Any] = []
    real = jd.identify_rig

    def stub(r: Any, d: Any, **kw: Any) -> dict[str, Any]:
        seen.append(d)
        return real(
            r,
            d,
            **{
                **kw,
                "options": {
                    **(kw.get("options") or {}),
                    "joint_id_seconds": 0.5,
                    "joint_id_kinds": ("kp",),
                    "joint_id_profile_delay": False,
                    "joint_id_fine_iters": 2,
                },
            },
        )

    monkeypatch.setattr(jd, "identify_rig", stub)
    diag = diagnose_rig(brig.source, tmp_path / "out").to_dict()
    by = {(f["branch"], f["title"]): f for f in diag["findings"]}
    assert by[("evidence", "Time base")]["verdict"] != "not_measured"
    assert by[("actuator", "Actuator dynamics")]["verdict"] != "not_measured"
    assert by[("controller", "Controller")]["verdict"] != "not_measured"
    tr = by[("latency", "ROS 2 transport")]
    assert tr["verdict"] == "eliminated"  # ~2.5 ms against a 33 ms period
    assert STATE_LATENCY_S[0] <= tr["figures"]["transport_p50_s"] <= STATE_LATENCY_S[1]
    assert len(seen) == 1 and isinstance(seen[0].info.get("ros2"), dict)
    for x, y in zip(
        dataset_trajectories(ds, rig), dataset_trajectories(seen[0], brig), strict=True
    ):
        np.testing.assert_allclose(y.q, x.q, atol=1e-12)
    assert rig_recording(rig).root == ds.root  # a dataset rig still reads its dataset


@pytest.mark.slow  # two identifications of 2 x 4 s of the SO-101 (see the test's timing)
def test_bag_identification_agrees_with_the_datasets(so101: Path, tmp_path: Path) -> None:
    """A faulty bench recorded once, read as its LeRobot dataset and as ROS 2 bags: every
    delay and parameter the dataset identifies lies in the bag's interval and vice versa,
    with the same verdicts."""
    from simgap.branches.joint_dynamics import identify_rig

    rig, ds, brig, bds = bench_bags(tmp_path, so101, 7, 4.0, 2, faults="random")
    opts = {"joint_id_seconds": 3.0, "joint_id_episodes": 1}
    a = identify_rig(rig, ds, seed=7, options=opts)
    b = identify_rig(brig, bds, seed=7, options=opts)
    assert a["joint_verdicts"] == b["joint_verdicts"]
    for j in a["delay_s"]:
        for x, y in ((a, b), (b, a)):
            lo, hi = y["delay_interval_s"][j]
            assert lo - 1e-9 <= x["delay_s"][j] <= hi + 1e-9, j
    for j, kinds in a["params_interval"].items():
        for k, (lo, hi) in kinds.items():
            assert k in b["params"][j], (j, k)
            assert lo <= b["params"][j][k] <= hi, (j, k)
            blo, bhi = b["params_interval"][j][k]
            assert blo <= a["params"][j][k] <= bhi, (j, k)
