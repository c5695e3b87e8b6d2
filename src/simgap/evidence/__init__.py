"""Evidence readers: one per source format; files in, values out.

A reader parses, checks at the boundary (an ``InputError`` naming file, field and fix) and
converts to SI (through the rig's units where a file records others); it fits nothing and
gives no verdict: that is the methods' and the branches' work."""
