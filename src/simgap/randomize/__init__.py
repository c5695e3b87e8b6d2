"""The randomisation spec: identify what you can instrument, randomise what you cannot.

From a diagnosis (``findings.json``) every identified parameter is pinned to its fitted
value; what cannot be instrumented gets a range: end-to-end latency (the control period
plus an exponential delay whose rate is fixed per episode and whose delay is redrawn every
step, Peng et al. 2018), unit-to-unit variation across arms and the object's mass between
batches. Where nothing was measured, Peng et al.'s Table I supplies the range, marked as a
default. Every entry states whether it was measured, fitted or defaulted, and a range is
never widened past the evidence without a note that says so.

Each branch names the builder of its entries (``Branch.randomization``: ``latency_entries``,
``contact_entries``, ``actuator_entries``, ``controller_entries``); ``build_spec`` runs the
builders its caller gives, in the order given (the ladder's), then adds the unit-to-unit
variation no single arm's diagnosis measures (``unit_variation_entries``). This package reads
no branch: the layer above hands it the builders. One module per branch's entries
(``latency``, ``contact``, ``actuator``, ``controller``), ``draft`` for what they share and
``spec`` for the whole.
"""

from __future__ import annotations

from simgap.randomize.actuator import actuator_entries
from simgap.randomize.contact import contact_entries
from simgap.randomize.controller import controller_entries
from simgap.randomize.draft import PENG_TABLE, Draft, EntryBuilder
from simgap.randomize.latency import latency_entries
from simgap.randomize.spec import build_spec, load_spec_from_findings, unit_variation_entries

__all__ = [
    "PENG_TABLE",
    "Draft",
    "EntryBuilder",
    "actuator_entries",
    "build_spec",
    "contact_entries",
    "controller_entries",
    "latency_entries",
    "load_spec_from_findings",
    "unit_variation_entries",
]
