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
    log = read_lerobot_log(server_log(tmp_path / "policy_server_1.log", stages,
                                      extra_total_ms=0.5))
    st = log.server_stages
    assert st is not None
    assert st.stage_names == ("prepare", "preprocessing", "inference", "postprocessing",
                              "unaccounted")
    np.testing.assert_allclose(st.stages["inference"], [0.3301, 0.3000, 0.3104])
    np.testing.assert_allclose(st.stages["prepare"], [0.0012, 0.0010, 0.0009])
    # the logged total is the sum plus 0.5 ms, kept as 'unaccounted'
    np.testing.assert_allclose(st.stages["unaccounted"], [0.0005] * 3, atol=1e-6)
    np.testing.assert_allclose(st.total(), [sum(s) / 1e3 + 0.0005 for s in stages], atol=1e-6)
    assert log.must_go.tolist() == [True, True, True]
    assert log.filtered == 3
    np.testing.assert_allclose(log.one_way_latency_s, [0.0042] * 3)
    np.testing.assert_allclose(log.chunk_total_s, [sum(s) / 1e3 + 0.0018 for s in stages],
                               atol=1e-6)
    assert log.device == ("cuda", pytest.approx(3.21))
    assert log.debug_lines and log.warnings == ()
    # asctime has 1-second resolution: t are whole seconds
    assert np.all(np.diff(st.t) == 1.0)


def test_client_queue_and_control_loop(tmp_path: Path) -> None:
    log = read_lerobot_log(client_log(tmp_path / "robot_client_1.log", [25, 12, 3, 0, 0],
                                      [2.31, 1.5, 40.0]))
    assert log.role == "client" and log.server_stages is None
    assert log.queue_size.tolist() == [25, 12, 3, 0, 0]
    assert log.queue_must_go.tolist() == [False, False, False, True, True]
    np.testing.assert_allclose(log.control_loop_s, [0.00231, 0.0015, 0.040])
    np.testing.assert_allclose(log.serialization_s, [0.000812] * 5)
    times = log.control_loop_times()
    assert times is not None and times.stage_names == ("control_loop",)


def test_padded_location_tracebacks_and_verbose_lines(tmp_path: Path) -> None:
    text = "\n".join([
        line("DEBUG", 0, "client.py:45", "QUEUE SIZE: 7 (Must go: False)"),
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        line("INFO", 1, "robot_client.py:500", "Received action chunk for step #3 | Network "
             "latency (server->client): 12.50ms | Deserialization time: 0.40ms"),
        line("INFO", 1, "robot_client.py:510", "Ts=1730492903.1 | Action #4 performed | "
             "Queue size: 6"),
    ])
    (tmp_path / "robot_client_2.log").write_text(text + "\n")
    log = read_lerobot_log(tmp_path / "robot_client_2.log")
    assert log.queue_size.tolist() == [7]
    np.testing.assert_allclose(log.network_s, [0.0125])
    assert log.pop_queue_size.tolist() == [6]


def test_log_without_timing_lines_says_debug(tmp_path: Path) -> None:
    text = "\n".join([
        line("INFO", 0, "policy_server.py:90", "PolicyServer started on 127.0.0.1:8080"),
        line("INFO", 1, "policy_server.py:330", "Running inference for observation #1 "
             "(must_go: True)"),
    ])
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
