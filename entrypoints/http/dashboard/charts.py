"""Server-side SVG charts for the analytics pages: horizontal bars for a breakdown, stacked
columns for a series. No script and no ``style=`` (the CSP): colours and patterns are SVG presentation
attributes, text sizes come from ``svg.chart`` in app.css.

Every chart is ``<svg role="img" aria-labelledby=…>`` with a title and a description; every bar or
point carries a ``<title>`` with its exact label and value (screen readers, hover). A prior period
is drawn hatched, and ``legend`` says so in words. All
text goes through ``markupsafe.escape``; the results are ``Markup``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 400
TONES = ("#0b5cad", "#a4161a", "#1a6b34", "#6f42c1")  # AA contrast on white
GRID = "#d0d7de"
AXIS = "#4f5965"


@dataclass(frozen=True)
class Series:
    """One series: a value per category (None: no value), the exact words of each (``<title>``),
    the short text drawn beside a bar, its colour (``tone``) and whether it is the prior period."""

    name: str
    values: Sequence[float | None]
    titles: Sequence[str]
    texts: Sequence[str] = ()
    tone: int = 0
    prior: bool = False


def ticks(top: float, *, whole: bool = True, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``top`` (steps of 1, 2, 2.5 or 5 × 10^k)."""
    top = top if top > 0 else 1.0
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if whole:
        step = max(1.0, float(math.ceil(step)))
    return [round(i * step, 10) for i in range(math.ceil(top / step - 1e-9) + 1)]


def _colour(series: Series) -> str:
    return TONES[series.tone % len(TONES)]


def _fill(chart_id: str, series: Series) -> str:
    return f"url(#{chart_id}-hatch-{series.tone})" if series.prior else _colour(series)


def _defs(chart_id: str, series: Sequence[Series]) -> str:
    patterns = []
    for tone in sorted({s.tone for s in series if s.prior}):
        colour = TONES[tone % len(TONES)]
        patterns.append(
            f'<pattern id="{chart_id}-hatch-{tone}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{colour}" stroke-width="3"/></pattern>')
    return f"<defs>{''.join(patterns)}</defs>" if patterns else ""


def _open(chart_id: str, title: str, description: str, height: float, series: Sequence[Series]) -> str:
    return (f'<svg class="chart" id="{escape(chart_id)}" role="img" viewBox="0 0 {WIDTH} {height:.0f}" '
            f'aria-labelledby="{escape(chart_id)}-title {escape(chart_id)}-desc" xmlns="http://www.w3.org/2000/svg">'
            f'<title id="{escape(chart_id)}-title">{escape(title)}</title>'
            f'<desc id="{escape(chart_id)}-desc">{escape(description)}</desc>{_defs(chart_id, series)}')


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bars(chart_id: str, title: str, description: str, categories: Sequence[str], series: Sequence[Series],
         axis: Callable[[float], str], *, whole: bool = True) -> Markup:
    """Horizontal bars, one group per category (its label above it), one bar per series; ticks
    along the bottom."""
    left, right, top_pad, axis_height, label = 22, 64, 4, 24, 17
    bar = 18 if len(series) == 1 else 15
    gap = 8
    group = label + len(series) * bar + gap
    plot = len(categories) * group
    height = top_pad + plot + axis_height
    found = [v for s in series for v in s.values if v is not None]
    steps = ticks(max(found or [0.0]), whole=whole)
    scale = (WIDTH - left - right) / steps[-1]
    out = [_open(chart_id, title, description, height, series), '<g aria-hidden="true">']
    for value in steps:
        x = left + value * scale
        out.append(f'<line x1="{x:.1f}" y1="{top_pad}" x2="{x:.1f}" y2="{top_pad + plot}" stroke="{GRID}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{top_pad + plot + 16}" text-anchor="middle">'
                   f'{escape(axis(value))}</text>')
    out.append(f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot}" stroke="{AXIS}"/></g>')
    for index, category in enumerate(categories):
        y0 = top_pad + index * group + gap / 2
        out.append(f'<text class="label" x="{left + 2}" y="{y0 + label - 5:.1f}">{escape(_short(category, 40))}</text>')
        for number, one in enumerate(series):
            value = one.values[index]
            width = 0.0 if value is None else max(value, 0.0) * scale
            y = y0 + label + number * bar
            text = one.texts[index] if one.texts else ""
            out.append(
                f'<g class="bar{" prior" if one.prior else ""}"><title>{escape(one.titles[index])}</title>'
                f'<rect x="{left}" y="{y:.1f}" width="{max(width, 1.0 if value else 0.0):.1f}" '
                f'height="{bar - 2}" fill="{_fill(chart_id, one)}" stroke="{_colour(one)}" stroke-width="1"/>'
                f'<text class="value" x="{left + width + 4:.1f}" y="{y + bar - 5:.1f}">{escape(text)}</text></g>')
    out.append("</svg>")
    return Markup("".join(out))


def columns(chart_id: str, title: str, description: str, ticks_x: Sequence[str], series: Sequence[Series],
            axis: Callable[[float], str]) -> Markup:
    """A series over time as stacked columns, one per bucket: the current series stack in one column,
    the prior period's (``prior``) in a hatched column beside it."""
    left, right, top_pad, plot, bottom = 40, 8, 10, 170, 30
    height = top_pad + plot + bottom
    count = max(len(ticks_x), 1)
    groups = [[s for s in series if not s.prior], [s for s in series if s.prior]]
    groups = [group for group in groups if group]
    totals = [sum(s.values[i] or 0 for s in group) for group in groups for i in range(len(ticks_x))]
    steps = ticks(max(totals or [0.0]))
    slot = (WIDTH - left - right) / count
    width = slot * (0.72 if count < 40 else 0.9) / len(groups)

    def y_of(value: float) -> float:
        return top_pad + plot - value * plot / steps[-1]

    out = [_open(chart_id, title, description, height, series), '<g aria-hidden="true">']
    for value in steps:
        y = y_of(value)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{WIDTH - right}" y2="{y:.1f}" stroke="{GRID}"/>'
                   f'<text class="tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(axis(value))}</text>')
    every = math.ceil(count / 6)
    for index, label in enumerate(ticks_x):
        if index % every == 0:
            out.append(f'<text class="tick" x="{left + (index + 0.5) * slot:.1f}" y="{top_pad + plot + 18}" '
                       f'text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{left}" y1="{top_pad + plot}" x2="{WIDTH - right}" y2="{top_pad + plot}" '
               f'stroke="{AXIS}"/></g>')
    for index in range(len(ticks_x)):
        for number, group in enumerate(groups):
            x = left + index * slot + (slot - width * len(groups)) / 2 + number * width
            base = 0.0
            for one in group:
                value = one.values[index]
                if value is None:
                    continue
                y_top, y_bottom = y_of(base + value), y_of(base)
                base += value
                out.append(f'<g class="bar{" prior" if one.prior else ""}"><title>{escape(one.titles[index])}</title>'
                           f'<rect x="{x:.1f}" y="{y_top:.1f}" width="{max(width - 1, 1):.1f}" '
                           f'height="{y_bottom - y_top:.1f}" fill="{_fill(chart_id, one)}" stroke="{_colour(one)}" '
                           f'stroke-width="{1 if value else 0}"/></g>')
    out.append("</svg>")
    return Markup("".join(out))


def legend(chart_id: str, series: Sequence[Series]) -> Markup:
    """The chart's legend in words, each entry with a swatch drawn as in the chart."""
    items = []
    for one in series:
        swatch = f'<rect x="1" y="1" width="22" height="12" fill="{_fill(chart_id, one)}" stroke="{_colour(one)}"/>'
        how = "hatched" if one.prior else "solid"
        items.append(f'<li><svg class="swatch" width="24" height="14" viewBox="0 0 24 14" aria-hidden="true">'
                     f'{swatch}</svg> {escape(one.name)} <span class="muted">({how})</span></li>')
    return Markup(f'<ul class="chart-legend" aria-label="Legend">{"".join(items)}</ul>')
