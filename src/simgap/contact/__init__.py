"""Contact modelling: lint an MJCF's contacts, convert bench measurements, write pair
patches, and sweep one coefficient against a logged push."""
