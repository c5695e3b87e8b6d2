"""The body branch's pieces: joint zero offsets and the model's frame origin."""
