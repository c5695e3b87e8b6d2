"""How long ``simgap --help`` takes (target: under 0.4 s wall), and where the import time goes.

1. Wall time of ``python -m simgap --help`` in a fresh interpreter, the median of ``--runs``
   runs (a cold first run is reported apart), against a bare ``python -c pass`` for scale.
2. Import time of ``simgap.cli`` by ``python -X importtime``: the total, and the five slowest
   modules it pulls in (cumulative). numpy, scipy, mujoco and torch must not be among them.

Run: ``PYTHONPATH=src python benchmarks/cli_help.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ENV = {**os.environ, "PYTHONPATH": str(SRC)}


def wall(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, *args],
        env=ENV,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def import_times() -> tuple[float, list[tuple[float, str]], set[str]]:
    """(cumulative seconds of simgap.cli, the five slowest modules by cumulative time, every
    module imported)."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import simgap.cli"],
        env=ENV,
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in err.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.split("|")
        try:
            cum = int(parts[1]) / 1e6
        except ValueError:
            continue  # the header line
        rows.append((cum, parts[2].strip()))
    total = next(c for c, name in rows if name == "simgap.cli")
    return total, sorted(rows, reverse=True)[1:6], {name for _, name in rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    cold = wall(["-m", "simgap", "--help"])
    helps = [wall(["-m", "simgap", "--help"]) for _ in range(runs)]
    bare = statistics.median(wall(["-c", "pass"]) for _ in range(runs))
    total, top, imported = import_times()
    med = statistics.median(helps)
    print(
        f"simgap --help wall: median {med:.3f} s over {runs} runs (min {min(helps):.3f}, "
        f"max {max(helps):.3f}; first, cold {cold:.3f}); bare interpreter {bare:.3f} s; "
        f"target 0.4 s: {'met' if med < 0.4 else 'NOT met'}"
    )
    print(f"import simgap.cli: {total:.3f} s cumulative; slowest modules it imports:")
    for cum, name in top:
        print(f"  {cum:.3f} s  {name}")
    heavy = [m for m in ("numpy", "scipy", "mujoco", "torch") if m in imported]
    print("heavy modules imported at --help:", ", ".join(heavy) or "none")


if __name__ == "__main__":
    main()
