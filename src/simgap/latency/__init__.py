"""Latency statistics: percentiles with cluster-bootstrap intervals and the added-delay fit
(``stats``), and the starvation of LeRobot's async action queue (``queue``)."""
