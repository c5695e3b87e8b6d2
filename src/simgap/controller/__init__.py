"""Controller identification: SIMPLER's per-joint kp/kv fit on the end-effector pose
(``pose_fit``)."""
