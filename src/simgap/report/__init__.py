"""The report: one self-contained HTML file (opens offline) built from the findings JSON."""

from simgap.report.html import render_report, write_report

__all__ = ["render_report", "write_report"]
