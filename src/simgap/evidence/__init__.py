"""Evidence readers: one per source format; files in, values out. Readers never compute."""
