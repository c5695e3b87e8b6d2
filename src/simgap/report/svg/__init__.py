"""Small inline SVG plots for the report: no JavaScript, no network, no plotting library.

Every chart function (``distribution``: histogram and ECDF; ``bars``; ``intervals``;
``lines``; ``scatter``) returns an ``<svg class="plot">`` string sized in CSS pixels, with a
title (``<title>`` and a visible heading), an x-axis label (``class="xlabel"``) and a y-axis
label (``class="ylabel"``), or the empty string when there is nothing to draw: a plot of no
data, or of nothing but zeros, is never drawn. Inputs are plain arrays. ``frame`` holds what
they share (size, axes, title, legend), ``scale`` the axes' ranges and ticks, ``text`` the
width of text, ``png`` an inline image.

A plot says only what it draws: a title too long for the width wraps to a second line
(``text.fit_text``), an axis never spreads values that are equal to their precision across
its span (``scale.axis_range``), a legend names each mark drawn and no other, and a caption
under the plot says what its bars and hollow points mean where it has them.
"""
