"""The fake arm's camera stream: frames at the configured rate, and a warning when the
computer cannot render them that fast.

Frames are captured at multiples of ``1 / fps`` on the arm's clock. On the virtual clock a
frame is rendered when ``latest()`` finds its capture instant new (on the caller's thread,
deterministic). On the real clock a background thread renders each capture instant as it
comes, with a renderer of its own, and ``latest()`` only hands over the newest frame, so
the control loop never waits for a render (LeRobot's ``read_latest``).

Where one frame takes longer to render than ``1 / fps``, the configured rate cannot be met:
the stream warns once (``CameraRateWarning``) with the measured rate and what to change.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

RATE_WINDOW = 10
"""Renders the rate check looks at (the median of the last ones)."""
RATE_MIN_RENDERS = 5
"""Renders (after the first, which warms the GL pipeline up) before the rate is judged."""
FIRST_FRAME_TIMEOUT_S = 60.0
"""How long ``start()`` waits for the background thread's first frame [s]."""

Frame = tuple[float, np.ndarray, str]
"""(capture instant [s] on the arm's clock, uint8 image (H, W, 3), sha1 of its bytes)."""


class CameraRateWarning(UserWarning):
    """A simulated camera renders slower than its configured rate."""


class CameraStream:
    """Frames of one simulated camera at ``fps`` (see the module docstring).

    Args:
        key: the camera's key (``wrist``), named in the warning.
        fps: capture rate [1/s].
        size: (height, width) [px], named in the warning.
        now: the arm's clock [s].
        sim: the arm's ``ArmSim`` (``render``, ``make_camera``, ``camera_state``).
        sync: advances physics to the clock's time (called under ``lock``).
        lock: held while physics advances and while the state is copied.
        background: render on a thread of its own (real clock) instead of on demand.
        realtime: whether the clock is the wall clock (only then can a rate be missed).
    """

    def __init__(
        self,
        key: str,
        fps: float,
        size: tuple[int, int],
        now: Callable[[], float],
        sim: Any,
        sync: Callable[[], None],
        lock: threading.RLock,
        background: bool,
        realtime: bool,
    ) -> None:
        self.key = key
        self.fps = float(fps)
        self.size = size
        self._now = now
        self._sim = sim
        self._sync = sync
        self._lock = lock
        self.background = background
        self.realtime = realtime
        self.render_s: deque[float] = deque(maxlen=RATE_WINDOW)
        """Wall time of the latest renders [s]."""
        self.n_renders = 0
        self.warned: str | None = None
        """The rate warning, once given."""
        self._frame: Frame | None = None
        self._frame_lock = threading.Lock()
        self._new_frame = threading.Condition(self._frame_lock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.renderer: Any = None
        """The background thread's ``CameraRenderer`` (None on demand: the arm's own)."""

    # ---- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Render the first frame (this warms the renderer up: the first render costs most);
        with ``background``, start the thread and wait for its first frame."""
        if not self.background:
            self.latest()
            return
        self._thread = threading.Thread(
            target=self._run, name=f"simgap-camera-{self.key}", daemon=True
        )
        self._thread.start()
        atexit.register(self.stop)  # a render thread must not outlive the interpreter's GL
        with self._new_frame:
            self._new_frame.wait_for(
                lambda: self._frame is not None or self._error is not None,
                timeout=FIRST_FRAME_TIMEOUT_S,
            )
        if self._error is not None:
            self.stop()
            raise self._error
        if self._frame is None:
            self.stop()
            raise TimeoutError(
                f"the simulated camera {self.key!r} rendered no frame in "
                f"{FIRST_FRAME_TIMEOUT_S:.0f} s"
            )

    def stop(self) -> None:
        """Stop the thread (its renderer is closed on it); idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
            self._thread = None
            atexit.unregister(self.stop)

    @property
    def running(self) -> bool:
        """Whether the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    # ---- frames ------------------------------------------------------------------------
    def slot(self, t: float) -> float:
        """The latest capture instant at or before ``t`` [s]."""
        return math.floor(t * self.fps + 1e-9) / self.fps

    def latest(self) -> Frame:
        """The frame of the latest capture instant (rendered now when on demand and new)."""
        if self.background:
            with self._frame_lock:
                if self._error is not None:
                    raise self._error
                if self._frame is None:
                    raise RuntimeError(f"the simulated camera {self.key!r} is not started")
                return self._frame
        t = self.slot(self._now())
        if self._frame is None or t > self._frame[0] + 1e-12:
            t0 = time.perf_counter()
            image = self._sim.render()
            self._rendered(time.perf_counter() - t0)
            self._frame = (t, image, hashlib.sha1(image.tobytes()).hexdigest())
        return self._frame

    def wait_newer(self, t: float | None, timeout_s: float) -> Frame | None:
        """A frame captured after ``t`` [s] (any frame when None), waiting up to
        ``timeout_s`` [s] for the background thread; None when none came."""
        if not self.background:
            f = self.latest()
            return f if t is None or f[0] > t else None
        with self._new_frame:
            self._new_frame.wait_for(
                lambda: (
                    self._error is not None
                    or (self._frame is not None and (t is None or self._frame[0] > t))
                ),
                timeout=timeout_s,
            )
        f = self.latest()
        return f if t is None or f[0] > t else None

    def _run(self) -> None:
        try:
            self.renderer = self._sim.make_camera()
            try:
                self._loop()
            finally:
                self.renderer.close()
        except BaseException as e:  # handed to the control thread by latest()/start()
            with self._new_frame:
                self._error = e
                self._new_frame.notify_all()

    def _loop(self) -> None:
        k = math.floor(self._now() * self.fps + 1e-9)
        while not self._stop.is_set():
            t = k / self.fps
            wait = t - self._now()
            if wait > 0 and self._stop.wait(wait):
                break
            with self._lock:
                self._sync()
                state = self._sim.camera_state()
            t0 = time.perf_counter()
            image = self.renderer.render(*state)
            self._rendered(time.perf_counter() - t0)
            frame = (t, image, hashlib.sha1(image.tobytes()).hexdigest())
            with self._new_frame:
                self._frame = frame
                self._new_frame.notify_all()
            # the next capture instant not yet past (instants missed while rendering are lost)
            k = max(k + 1, math.floor(self._now() * self.fps + 1e-9) + 1)

    # ---- the rate ----------------------------------------------------------------------
    def _rendered(self, seconds: float) -> None:
        self.n_renders += 1
        if self.n_renders == 1:
            return  # the first render compiles shaders and uploads meshes
        self.render_s.append(seconds)
        if (
            self.warned is None
            and self.realtime
            and len(self.render_s) >= RATE_MIN_RENDERS
            and float(np.median(self.render_s)) > 1.0 / self.fps
        ):
            self._warn(float(np.median(self.render_s)))

    def _warn(self, per_frame_s: float) -> None:
        rate = 1.0 / per_frame_s
        h, w = self.size
        slower = max(1, int(rate * 0.8))
        self.warned = (
            f"the simulated camera {self.key!r} renders {rate:.1f} frames/s on this machine "
            f"({per_frame_s * 1e3:.0f} ms a {w}x{h} frame), below its configured {self.fps:g} "
            f"fps, so frames repeat and a loop that waits for them runs slower. Lower its fps "
            f"(fps: {slower}) or its size (width/height), render on a GPU (MUJOCO_GL=egl with a "
            "GPU driver), or leave the CPU to the camera (busy processes slow software GL)."
        )
        warnings.warn(self.warned, CameraRateWarning, stacklevel=2)
