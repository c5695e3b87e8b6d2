"""rig.toml is a trust boundary and --ray addresses are checked (issue 33): a rig file's
``[compute]`` section no longer makes a command join a Ray cluster by itself; ``--ray``
takes ``auto``, ``local``, ``host:port`` or ``ray://host:port`` (with the extra that serves
it); an address that does not answer is a clear error within a stated time.

Only loopback addresses are ever reached here (ports nothing listens on, or listeners this
test opens), with the timeout made short; ``ray.init`` is never called."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simgap.cli import app
from simgap.demo.timing import write_timing_log
from simgap.diagnose import compute_backend
from simgap.errors import InputError, MissingExtraError, SimgapError
from simgap.fit import backends, ray_backend, ray_cluster
from simgap.rig import load_rig
from tests.factories import write_rig

runner = CliRunner()


@pytest.fixture(autouse=True, scope="module")
def _ray_installed() -> Iterator[None]:
    """These tests never start or join Ray: they run where the ray extra is not installed,
    as if it were (Ray Client is left as it is)."""
    real = ray_cluster._installed
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ray_cluster, "_installed", lambda m: m == "ray" or real(m))
        yield


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_cluster, "RAY_CONNECT_TIMEOUT_S", 0.5)


@pytest.fixture
def no_ray_init(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("a test must never join a Ray cluster")

    monkeypatch.setattr(ray_cluster, "ray_init", refuse)
    monkeypatch.setattr(ray_backend, "ray_init", refuse)  # where RayBackend looks it up


def _compute_rig(folder: Path, address: str) -> Path:
    write_timing_log(folder / "timing.jsonl", seed=0, n_episodes=4, steps=30)
    return write_rig(
        folder,
        "m.xml",
        '[evidence]\ntiming_logs = ["timing.jsonl"]\n'
        f'[compute]\nbackend = "ray"\naddress = "{address}"\n',
    )


@pytest.mark.parametrize(
    "address",
    ["auto", "local", "127.0.0.1:6379", "head.example:6379", "[::1]:6379", " 10.0.0.5:6379 "],
)
def test_valid_addresses(address: str) -> None:
    assert ray_cluster.parse_ray_address(address) == address.strip()


@pytest.mark.parametrize(
    "address",
    [
        "http://127.0.0.1:8265",
        "127.0.0.1",
        "127.0.0.1:0",
        "127.0.0.1:99999",
        "",
        "ray://",
        "foo bar:1",
        "/tmp/cluster",
        "ray://h:1/x",
        "auto ; rm -rf /",
        "-h:1",
        "h:-1",
    ],
)
def test_malformed_addresses_name_the_valid_forms(address: str) -> None:
    with pytest.raises(InputError, match="ray://HOST:PORT") as e:
        ray_cluster.parse_ray_address(address)
    assert "'auto'" in str(e.value) and "'local'" in str(e.value)


def test_ray_client_address_needs_ray_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: m != "grpc")
    with pytest.raises(MissingExtraError, match=r"ray\[client\]"):
        ray_cluster.parse_ray_address("ray://127.0.0.1:10001")
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: True)
    assert ray_cluster.parse_ray_address("ray://127.0.0.1:10001") == "ray://127.0.0.1:10001"
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: False)
    with pytest.raises(MissingExtraError, match="simgap\\[ray\\]"):
        ray_cluster.parse_ray_address("auto")


@pytest.mark.parametrize("command", ["diagnose", "fleet", "controller"])
@pytest.mark.parametrize("address", ["http://127.0.0.1:8265", "nonsense"])
def test_cli_refuses_a_malformed_address(tmp_path: Path, command: str, address: str) -> None:
    rig = _compute_rig(tmp_path, "auto")
    args = [command, str(rig), "--ray", address]
    if command != "controller":
        args += ["--out", str(tmp_path / "o")]
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    msg = " ".join(r.stderr.split())
    assert "ray://HOST:PORT" in msg and "Traceback" not in msg and "internal" not in msg
    assert not (tmp_path / "o").exists()


def test_cli_ray_client_without_the_extra_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: m != "grpc")
    rig = _compute_rig(tmp_path, "auto")
    r = runner.invoke(
        app, ["diagnose", str(rig), "--out", str(tmp_path / "o"), "--ray", "ray://127.0.0.1:10001"]
    )
    assert r.exit_code == 2 and "ray[client]" in r.stderr and "internal" not in r.stderr


def test_a_rig_file_alone_never_chooses_a_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduction: the rig's [compute] made every fit join its cluster."""
    rig = load_rig(_compute_rig(tmp_path, f"127.0.0.1:{_free_port()}"))
    backends._NOTED.clear()
    assert compute_backend(rig) == backends.LOCAL  # local threads: no Ray backend selected
    assert compute_backend(rig) == backends.LOCAL
    err = capsys.readouterr().err
    assert err.count("ignored") == 1 and "--allow-rig-compute" in err and "--ray" in err


def test_allow_rig_compute_uses_the_rigs_cluster(tmp_path: Path, short_timeout: None) -> None:
    port = _free_port()
    rig = load_rig(_compute_rig(tmp_path, f"127.0.0.1:{port}"))
    with pytest.raises(SimgapError, match="did not answer"):  # checked, nothing listens
        compute_backend(rig, allow_rig_compute=True)
    bad = load_rig(_compute_rig(tmp_path / "b", "http://127.0.0.1:1"))
    with pytest.raises(InputError, match="compute.address"):
        compute_backend(bad, allow_rig_compute=True)


def test_diagnose_ignores_the_rigs_cluster_and_says_so(tmp_path: Path, no_ray_init: None) -> None:
    rig = _compute_rig(tmp_path, f"127.0.0.1:{_free_port()}")
    backends._NOTED.clear()
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert " ".join(r.stderr.split()).count("[compute] section of") == 1


def test_fleet_says_once_that_the_rigs_cluster_is_ignored(
    tmp_path: Path, no_ray_init: None
) -> None:
    rigs = [_compute_rig(tmp_path / f"r{i}", f"127.0.0.1:{_free_port()}") for i in range(2)]
    backends._NOTED.clear()
    r = runner.invoke(app, ["fleet", *map(str, rigs), "--out", str(tmp_path / "o"), "--jobs", "1"])
    assert r.exit_code == 0, r.output
    assert " ".join(r.stderr.split()).count("was ignored") == 1


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A loopback port that accepts connections and never says a word."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield int(srv.getsockname()[1])
    stop.set()
    t.join(1)
    for c in held:
        c.close()
    srv.close()


def test_a_cluster_that_does_not_answer_is_a_clear_error(
    short_timeout: None, silent_listener: int
) -> None:
    t0 = time.monotonic()
    with pytest.raises(SimgapError, match="did not answer.*0.5 s"):
        ray_cluster.check_reachable(f"127.0.0.1:{silent_listener}")
    assert time.monotonic() - t0 < 3
    with pytest.raises(SimgapError, match="did not answer"):
        ray_cluster.check_reachable(f"127.0.0.1:{_free_port()}")  # refused


def test_something_else_on_the_port_is_not_a_ray_head(short_timeout: None) -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def answer() -> None:
        c, _ = srv.accept()
        c.recv(64)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        c.close()

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    with pytest.raises(SimgapError, match="not a Ray head"):
        ray_cluster.check_reachable(f"127.0.0.1:{srv.getsockname()[1]}")
    t.join(2)
    srv.close()


def test_fleet_on_an_unanswering_cluster_fails_fast_with_nothing_written(tmp_path: Path) -> None:
    """The reproduction: ``--ray 127.0.0.1:1`` hung for minutes with Ray's warnings. Run as
    a subprocess so a hang is a failure, not a stuck suite."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("the subprocess needs the ray extra to get past --ray's check")
    rig = _compute_rig(tmp_path / "r", "auto")
    out = tmp_path / "o"
    code = (
        "import sys; from simgap.fit import ray_cluster; ray_cluster.RAY_CONNECT_TIMEOUT_S = 1.0;"
        "from simgap.cli import main; sys.argv[0] = 'simgap'; main()"
    )
    t0 = time.monotonic()
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "fleet",
            str(rig),
            "--out",
            str(out),
            "--ray",
            f"127.0.0.1:{_free_port()}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert time.monotonic() - t0 < 60
    assert p.returncode == 2, p.stderr
    assert "did not answer" in p.stderr and "Traceback" not in p.stderr
    assert "rpc_client" not in p.stderr and "GCS" not in p.stderr  # no Ray noise
    assert not out.exists()


_VALID = ("auto", "local")


@given(
    st.one_of(
        st.text(max_size=60),
        st.builds(
            lambda pre, host, port: f"{pre}{host}:{port}",
            st.sampled_from(["", "ray://", "http://", "RAY://", "ray:/", " "]),
            st.text(max_size=20),
            st.integers(-5, 70000),
        ),
    )
)
def test_fuzzed_addresses_are_valid_or_refused_with_the_forms(address: str) -> None:
    """Never an exception other than the input error that names the forms (or the missing
    extra); what is accepted is one of the four forms."""
    try:
        got = ray_cluster.parse_ray_address(address)
    except InputError as e:
        assert "ray://HOST:PORT" in str(e)
        return
    except MissingExtraError as e:
        assert "ray[client]" in str(e) and address.strip().startswith("ray://")
        return
    assert got in _VALID or ray_cluster._host_port(got) is not None
    assert got == address.strip() and "/" not in got.removeprefix("ray://")


@settings(max_examples=25)
@given(st.text(min_size=1, max_size=30))
def test_fuzzed_cli_addresses_never_end_in_an_internal_error(address: str) -> None:
    if address.strip() in _VALID or ray_cluster._ADDRESS.fullmatch(address.strip()):
        return  # valid forms are reached elsewhere; this test never connects
    r = runner.invoke(app, ["fleet", "nope.toml", "--out", "o", "--ray", address])
    assert r.exit_code == 2 and "Traceback" not in r.output and "internal" not in r.output


def test_compute_checks_the_form_but_not_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selecting the backend needs no Ray (a machine without the extra runs the tests);
    joining needs it."""
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: False)
    assert backends.Compute("ray", address="local").kind == "ray"
    with pytest.raises(InputError, match="ray://HOST:PORT"):
        backends.Compute("ray", address="http://127.0.0.1:1")
