"""The appearance branch's pieces: resampling, regions, flags, camera pose, visibility."""
