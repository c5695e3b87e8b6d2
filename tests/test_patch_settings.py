"""What the offered actuator patch carries (issue 40): every identified value of an
implicated joint and the delay it found, on a delay/lag ridge too."""

from __future__ import annotations

from typing import Any

from simgap.branches.actuator_dataset import patch_settings
from simgap.figures.delay import Delay
from simgap.figures.joint_dynamics import DelayAccount

NO_LOOP = DelayAccount(loop_s=None, note="")


def _js(ridge: bool) -> dict[str, Any]:
    why = {"delay": "delay and the servo's own lag trade off ..."} if ridge else {}
    return {
        "joint_verdicts": {"a": "implicated", "b": "eliminated", "c": "implicated"},
        "params": {"a": {"damping": 0.4}, "b": {"damping": 0.7}, "c": {}},
        "not_identifiable": {"a": dict(why, kp="masked"), "b": {}, "c": {}},
        "delay_s": {"a": 0.068, "b": 0.07, "c": 0.0},
    }


def test_a_ridge_delay_goes_into_the_patch_at_its_best_point() -> None:
    for ridge in (False, True):
        s = patch_settings(_js(ridge), NO_LOOP)
        assert set(s) == {"a", "c"}  # implicated joints only
        assert s["a"].delay_s == 0.068 and s["a"].damping == 0.4 and s["a"].kp is None
        js = _js(ridge)
        js["params_fitted"] = {"a": {"damping": 0.41, "kp": 900.0}, "c": {"armature": 0.05}}
        s = patch_settings(js, NO_LOOP)
        # the best fit whole, the identified value where there is one
        assert s["a"].damping == 0.4 and s["a"].kp == 900.0 and s["c"].armature == 0.05
        assert s["c"].delay_s is None  # no delay found, none written


def test_the_loops_share_of_the_delay_is_left_to_the_latency_branch() -> None:
    account = DelayAccount(
        loop_s=0.048,
        note="",
        delays={
            "a": Delay(total_s=0.068, loop_s=0.048, servo_s=0.02),
            "b": Delay(total_s=0.07, loop_s=0.048, servo_s=0.0),
            "c": Delay(total_s=0.0, loop_s=0.048, servo_s=0.0),
        },
    )
    s = patch_settings(_js(True), account)
    assert s["a"].delay_s == 0.02


def test_the_loop_note_after_the_fix_starts_its_own_sentence() -> None:
    """The fix text read '... then re-train. the loop's own latency ...' (the note as the
    delay account words it, lower case, for the figures)."""
    from simgap.branches.actuator_dataset import then
    from simgap.branches.joint_dynamics import delay_account

    js = {"delay_s": {"a": 0.068}, "delay_interval_s": {"a": [0.06, 0.075]}}
    account = delay_account(js, {"p50_s": 0.02})
    assert account.note.startswith("the loop's own latency (20.0 ms median)")
    assert account.delays["a"].servo_s == 0.068 - 0.02 and account.loop_s == 0.02
    assert account.servo_interval_s["a"] == (0.06 - 0.02, 0.075 - 0.02)
    step = then("Apply the patch, then re-train.", account.note)
    assert step.startswith("Apply the patch, then re-train. The loop's own latency (20.0 ms")
    assert step.endswith("servo's part.") and ". the " not in step
