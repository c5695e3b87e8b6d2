from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError
from simgap.evidence.lerobot_logs import read_lerobot_log
from tests.lerobot_log_lines import USER_LINE, client_log, line, server_log


def test_user_reported_info_line(tmp_path: Path) -> None:
    (tmp_path / "policy_server_1730492900.log").write_text(USER_LINE + "\n")
    log = read_lerobot_log(tmp_path / "policy_server_1730492900.log")
    assert log.role == "server"
    st = log.server_stages
    assert st is not None and st.stage_names == ("inference",)
    assert st.stages["inference"][0] == pytest.approx(0.3386)
    assert log.action_shape == (1, 50, 32)
    assert any("DEBUG" in w for w in log.warnings)


def test_server_debug_per_stage_line(tmp_path: Path) -> None:
    stages = [(1.2, 5.3, 330.1, 2.0), (1.0, 5.0, 300.0, 1.5), (0.9, 4.8, 310.4, 1.7)]
    log = read_lerobot_log(server_log(tmp_path / "policy_server_1.log", stages, extra_total_ms=0.5))
    st = log.server_stages
    assert st is not None
    assert st.stage_names == (
        "prepare",
        "preprocessing",
        "inference",
        "postprocessing",
        "unaccounted",
    )
    np.testing.assert_allclose(st.stages["inference"], [0.3301, 0.3000, 0.3104])
    np.testing.assert_allclose(st.stages["prepare"], [0.0012, 0.0010, 0.0009])
    # the logged total is the sum plus 0.5 ms, kept as 'unaccounted'
    np.testing.assert_allclose(st.stages["unaccounted"], [0.0005] * 3, atol=1e-6)
    np.testing.assert_allclose(st.total(), [sum(s) / 1e3 + 0.0005 for s in stages], atol=1e-6)
    assert log.must_go.tolist() == [True, True, True]
    assert log.filtered == 3
    np.testing.assert_allclose(log.one_way_latency_s, [0.0042] * 3)
    np.testing.assert_allclose(
        log.chunk_total_s, [sum(s) / 1e3 + 0.0018 for s in stages], atol=1e-6
    )
    assert log.device == ("cuda", pytest.approx(3.21))
    assert log.debug_lines and log.warnings == ()
    # asctime has 1-second resolution: t are whole seconds
    assert np.all(np.diff(st.t) == 1.0)


def test_client_queue_and_control_loop(tmp_path: Path) -> None:
    log = read_lerobot_log(
        client_log(tmp_path / "robot_client_1.log", [25, 12, 3, 0, 0], [2.31, 1.5, 40.0])
    )
    assert log.role == "client" and log.server_stages is None
    assert log.queue_size.tolist() == [25, 12, 3, 0, 0]
    assert log.queue_must_go.tolist() == [False, False, False, True, True]
    np.testing.assert_allclose(log.control_loop_s, [0.00231, 0.0015, 0.040])
    np.testing.assert_allclose(log.serialization_s, [0.000812] * 5)
    times = log.control_loop_times()
    assert times is not None and times.stage_names == ("control_loop",)


def test_padded_location_tracebacks_and_verbose_lines(tmp_path: Path) -> None:
    text = "\n".join(
        [
            line("DEBUG", 0, "client.py:45", "QUEUE SIZE: 7 (Must go: False)"),
            "Traceback (most recent call last):",
            '  File "x.py", line 1, in <module>',
            line(
                "INFO",
                1,
                "robot_client.py:500",
                "Received action chunk for step #3 | Network "
                "latency (server->client): 12.50ms | Deserialization time: 0.40ms",
            ),
            line(
                "INFO",
                1,
                "robot_client.py:510",
                "Ts=1730492903.1 | Action #4 performed | Queue size: 6",
            ),
        ]
    )
    (tmp_path / "robot_client_2.log").write_text(text + "\n")
    log = read_lerobot_log(tmp_path / "robot_client_2.log")
    assert log.queue_size.tolist() == [7]
    np.testing.assert_allclose(log.network_s, [0.0125])
    assert log.pop_queue_size.tolist() == [6]


def test_log_without_timing_lines_says_debug(tmp_path: Path) -> None:
    text = "\n".join(
        [
            line("INFO", 0, "policy_server.py:90", "PolicyServer started on 127.0.0.1:8080"),
            line(
                "INFO",
                1,
                "policy_server.py:330",
                "Running inference for observation #1 (must_go: True)",
            ),
        ]
    )
    (tmp_path / "policy_server_3.log").write_text(text + "\n")
    with pytest.raises(InputError) as e:
        read_lerobot_log(tmp_path / "policy_server_3.log")
    msg = str(e.value)
    assert "DEBUG" in msg and "logs/policy_server_" in msg and "2 LeRobot log lines" in msg
    (tmp_path / "other.log").write_text("hello\nworld\n")
    with pytest.raises(InputError, match="none in LeRobot's log format.*DEBUG"):
        read_lerobot_log(tmp_path / "other.log")
    with pytest.raises(InputError, match="no such file"):
        read_lerobot_log(tmp_path / "missing.log")


def test_filtered_once_sessions_split_and_client_config(tmp_path: Path) -> None:
    """Lines as LeRobot 0.6.1's policy_server.py / robot_client.py write them (copied from
    a run of the real server and client; the real run is tests/lerobot_real/)."""
    stages = (
        "| Prepare time: 1.00ms | Preprocessing time: 2.00ms | Inference time: {}ms | "
        "Postprocessing time: 1.00ms | Total time: {}ms"
    )
    srv = [
        line("INFO", 0, "y_server.py:110", "Client ipv4:127.0.0.1:43182 connected and ready"),
        line(
            "INFO",
            0,
            "y_server.py:136",
            "Receiving policy instructions from ipv4:127.0.0."
            "1:43182 | Policy type: act | Pretrained name or path: /p | Actions per chunk: "
            "10 | Device: cpu",
        ),
    ]
    rng = np.random.default_rng(5)
    truth: list[tuple[int, int]] = []  # (inferences, filtered) per session
    for session in range(3):
        if session:
            srv.append(
                line(
                    "INFO",
                    9 * session,
                    "y_server.py:110",
                    f"Client ipv4:127.0.0.1:{50000 + session} connected and ready",
                )
            )
        n_inf, n_filt = int(rng.integers(2, 6)), int(rng.integers(0, 5))
        for k in range(n_inf):
            inf = 100.0 + k
            srv.append(
                line(
                    "DEBUG",
                    9 * session + 1,
                    "y_server.py:396",
                    f"Observation {k} " + stages.format(inf, inf + 4.0),
                )
            )
        for k in range(n_filt):
            srv += [
                line(
                    "DEBUG",
                    9 * session + 2,
                    "y_server.py:274",
                    f"Skipping observation #{k} - Timestep predicted already!",
                ),
                line(
                    "DEBUG",
                    9 * session + 2,
                    "y_server.py:210",
                    f"Observation #{k} has been filtered out",
                ),
            ]
        truth.append((n_inf, n_filt))
    (tmp_path / "policy_server_9.log").write_text("\n".join(srv) + "\n")
    log = read_lerobot_log(tmp_path / "policy_server_9.log")
    assert log.sessions == ("ipv4:127.0.0.1:43182", "ipv4:127.0.0.1:50001", "ipv4:127.0.0.1:50002")
    assert log.filtered_per_session == tuple(f for _, f in truth)
    assert log.filtered == sum(f for _, f in truth)
    st = log.server_stages
    assert st is not None
    assert np.bincount(st.episode).tolist() == [n for n, _ in truth]
    assert st.step.tolist() == [k for n, _ in truth for k in range(n)]
    assert log.actions_per_chunk == 10 and any("3 client sessions" in w for w in log.warnings)
    client = [
        line("INFO", 0, "t_client.py:486", "{'actions_per_chunk': 10,"),
        " 'aggregate_fn_name': 'weighted_average',",
        " 'chunk_size_threshold': 0.6,",
        " 'fps': 15,",
        " 'robot': {'cameras': {'wrist': {'fps': 30, 'height': 32}},",
        "           'id': 'ci'},",
        " 'task': 'wave'}",
        line("DEBUG", 1, "t_client.py:434", "QUEUE SIZE: 0 (Must go: True)"),
    ]
    (tmp_path / "robot_client_9.log").write_text("\n".join(client) + "\n")
    c = read_lerobot_log(tmp_path / "robot_client_9.log")
    assert (c.actions_per_chunk, c.chunk_size_threshold, c.client_fps) == (10, 0.6, 15.0)
    assert c.sessions == ()
