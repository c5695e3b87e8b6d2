"""LeRobot's calibration against the model: how recorded values map to model angles, each
joint's range, sign and zero against the MJCF, two calibrations compared, leader/follower
drift, and the command as it reached the servo."""
