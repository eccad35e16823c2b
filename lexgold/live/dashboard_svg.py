"""The admin dashboard's charts as inline SVG, drawn by the figures refresher from
:mod:`lexgold.live.dashboard`'s data and stored with the figures: no JavaScript, no CDN, no
``style`` attribute (the site's Content-Security-Policy allows none of them). Each chart is an
``<svg role="img">`` with a ``<title>`` and a ``<desc>`` saying what it shows in words; the page
adds a table of the same figures (WCAG 1.1.1, text alternatives). The pattern is
:mod:`lexgold.live.adaptive_svg`'s.
"""

from __future__ import annotations

import math
from html import escape

import pandas as pd

WIDTH, HEIGHT = 460, 260
PLOT = (56, 16, 380, 196)            # left, top, width, height
BLUE, GREY, ORANGE, GREEN, RED, PURPLE = ("#1f5fa8", "#6b737b", "#b45309", "#2e7d32",
                                          "#b3261e", "#6a3d9a")
#: rows of the ratings heat map at most (the table lists them all)
ROWS = 40
#: cell of the rater scatter in pixels: raters drawn at the same cell are one dot (bounded
#: page size at any number of raters; the summary counts them all)
CELL = 3


def _open(ident: str, title: str, desc: str, height: int = HEIGHT) -> list[str]:
    return [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" role="img" id="{ident}" '
             f'aria-labelledby="{ident}-title {ident}-desc" '
             f'font-family="sans-serif" font-size="11">'),
            f'<title id="{ident}-title">{escape(title)}</title>',
            f'<desc id="{ident}-desc">{escape(desc)}</desc>']


def _frame(xlabel: str, ylabel: str, height: int = HEIGHT) -> list[str]:
    left, top, width, plot_h = PLOT
    return [f'<rect x="{left}" y="{top}" width="{width}" height="{plot_h}" fill="none" '
            f'stroke="{GREY}"/>',
            f'<text x="{left + width / 2}" y="{height - 6}" text-anchor="middle">'
            f'{escape(xlabel)}</text>',
            f'<text x="12" y="{top + plot_h / 2}" text-anchor="middle" '
            f'transform="rotate(-90 12 {top + plot_h / 2})">{escape(ylabel)}</text>']


def _scale(low: float, high: float, start: float, length: float, flip: bool = False):
    span = (high - low) or 1.0

    def at(v: float) -> float:
        share = min(max((v - low) / span, 0.0), 1.0)
        return start + length * ((1 - share) if flip else share)
    return at


def _ticks(low: float, high: float, n: int = 4) -> list[float]:
    if high <= low:
        return [low]
    raw = (high - low) / n
    step = 10 ** math.floor(math.log10(raw))
    step = next(s * step for s in (1, 2, 5, 10) if s * step >= raw)
    first = math.ceil(low / step) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def _num(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1 or v == 0 else f"{v:.2g}"


def completions_chart(points: list[dict], target: int) -> str:
    """Completed raters over time (a step line), the target of places as a dashed line.
    ``points``: ``at`` (ISO text), ``completed``."""
    n = points[-1]["completed"] if points else 0
    out = _open("chart-completions", "Completions over time",
                f"{n} of {target} places completed" + (
                    f", from {points[0]['at'][:16]} to {points[-1]['at'][:16]} UTC"
                    if points else "; none yet"))
    out += _frame("time (UTC)", "raters completed")
    left, top, width, height = PLOT
    top_v = max(target, n, 1)
    y = _scale(0, top_v, top, height, flip=True)
    for v in _ticks(0, top_v):
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{_num(v)}</text>')
    out.append(f'<line x1="{left}" x2="{left + width}" y1="{y(target):.1f}" y2="{y(target):.1f}" '
               f'stroke="{GREEN}" stroke-dasharray="4 3"/><text x="{left + width - 4}" '
               f'y="{y(target) + 13:.1f}" text-anchor="end" fill="{GREEN}">target {target}</text>')
    if points:
        times = pd.to_datetime([p["at"] for p in points])
        t0, t1 = times[0].value, times[-1].value
        x = _scale(t0, t1 if t1 > t0 else t0 + 1, left, width)
        path, last = [], y(0)
        for t, p in zip(times, points):
            path.append(f"{x(t.value):.1f},{last:.1f} {x(t.value):.1f},{y(p['completed']):.1f}")
            last = y(p["completed"])
        out.append(f'<polyline fill="none" stroke="{BLUE}" stroke-width="2" '
                   f'points="{" ".join(path)}"/>')
        for t, anchor, xx in ((times[0], "start", left), (times[-1], "end", left + width)):
            out.append(f'<text x="{xx}" y="{top + height + 14}" text-anchor="{anchor}">'
                       f'{t.strftime("%m-%d %H:%M")}</text>')
    out.append("</svg>")
    return "".join(out)


def ratings_chart(counts: list[dict]) -> str:
    """A heat map: one row per tranche (at most :data:`ROWS`), one column per value bin, the
    darker the larger the bin's share of the tranche's ratings. ``counts``: ``tranche, low,
    high, n``."""
    frame = pd.DataFrame(counts, columns=["tranche", "low", "high", "n"])
    tranches = sorted(frame["tranche"].unique())
    shown = tranches[:ROWS]
    edges = frame[["low", "high"]].drop_duplicates().sort_values("low").to_records(index=False)
    total = int(frame["n"].sum())
    row_h = min(18.0, 196 / max(len(shown), 1))
    height = int(16 + row_h * max(len(shown), 1) + 40)
    desc = (f"{total} ratings in {len(tranches)} tranches, shade: share of the tranche's "
            "ratings in each value bin (the darkest: the largest share)" + (f"; the first {ROWS} tranches drawn"
                                          if len(tranches) > ROWS else ""))
    out = _open("chart-ratings", "Distribution of ratings per tranche", desc, height)
    left, top, width = PLOT[0], PLOT[1], PLOT[2]
    cell_w = width / max(len(edges), 1)
    shares = frame.assign(share=frame["n"] / frame.groupby("tranche")["n"].transform("sum")
                          .where(lambda s: s > 0))
    most = float(shares["share"].max()) if len(shares) and shares["share"].notna().any() \
        else 1.0
    for r, tranche in enumerate(shown):
        yy = top + r * row_h
        out.append(f'<text x="{left - 6}" y="{yy + row_h * 0.7:.1f}" text-anchor="end" '
                   f'font-size="{min(11, row_h * 0.8):.0f}">{int(tranche)}</text>')
        rows = shares[shares["tranche"] == tranche].sort_values("low")
        for c, share in enumerate(rows["share"].fillna(0)):
            shade = 0.04 + 0.96 * share / (most or 1.0)
            out.append(f'<rect x="{left + c * cell_w:.1f}" y="{yy:.1f}" width="{cell_w:.1f}" '
                       f'height="{row_h:.1f}" fill="{BLUE}" fill-opacity="{shade:.2f}" '
                       f'stroke="#ffffff"/>')
            if row_h >= 14:
                out.append(f'<text x="{left + (c + 0.5) * cell_w:.1f}" '
                           f'y="{yy + row_h * 0.7:.1f}" text-anchor="middle" font-size="10" '
                           f'fill="{"#ffffff" if shade > 0.5 else "#1a1a1a"}">'
                           f'{100 * share:.0f}%</text>')
    base = top + row_h * max(len(shown), 1)
    for c, (low, high) in enumerate(edges):
        label = f"{low}" if low == high else f"{low}-{high}"
        out.append(f'<text x="{left + (c + 0.5) * cell_w:.1f}" y="{base + 14:.1f}" '
                   f'text-anchor="middle">{label}</text>')
    out.append(f'<text x="{left + width / 2}" y="{height - 6}" text-anchor="middle">rating '
               f'(value bin)</text><text x="12" y="{top + (base - top) / 2:.1f}" '
               f'text-anchor="middle" transform="rotate(-90 12 {top + (base - top) / 2:.1f})">'
               'tranche</text>')
    out.append("</svg>")
    return "".join(out)


def quality_chart(raters: list[dict], too_fast_s: float) -> str:
    """Each rater's agreement with the mean of the others against its median seconds per
    pair (log scale); marked or excluded raters as red crosses, the others as blue dots; the
    too-fast limit as a dashed line. Raters falling in the same :data:`CELL` are drawn once."""
    drawn = [r for r in raters if r.get("agreement") is not None and r.get("median_s")]
    flagged = [r for r in drawn if r.get("marked") or r.get("excluded")]
    out = _open("chart-quality", "Rater quality: agreement against time",
                f"{len(drawn)} raters with both figures ({len(raters) - len(drawn)} without), "
                f"{len(flagged)} flagged (red crosses: too fast, one value throughout, a "
                f"checkpoint failed, or excluded by the protocol's rules); dashed line: "
                f"{too_fast_s:g} s per pair")
    out += _frame("median seconds per pair (log scale)", "rho with the others' mean")
    left, top, width, height = PLOT
    seconds = [r["median_s"] for r in drawn] + [too_fast_s or 1.0]
    lo = math.log10(max(min(seconds) / 1.5, 0.1))
    hi = math.log10(max(max(seconds) * 1.5, 10 ** lo * 10))
    x = _scale(lo, hi, left, width)
    y = _scale(-1, 1, top, height, flip=True)
    for v in (-1, -0.5, 0, 0.5, 1):
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    for k in range(math.floor(lo), math.ceil(hi) + 1):
        for m in (1, 3):
            v = m * 10 ** k
            if lo <= math.log10(v) <= hi:
                out.append(f'<text x="{x(math.log10(v)):.1f}" y="{top + height + 14}" '
                           f'text-anchor="middle">{_num(v)}</text>')
    if too_fast_s > 0:
        fx = x(math.log10(too_fast_s))
        out.append(f'<line x1="{fx:.1f}" x2="{fx:.1f}" y1="{top}" y2="{top + height}" '
                   f'stroke="{RED}" stroke-dasharray="4 3"/>')
    seen: set[tuple[int, int, bool]] = set()
    for r in sorted(drawn, key=lambda r: bool(r.get("marked") or r.get("excluded"))):
        px, py = x(math.log10(max(r["median_s"], 1e-3))), y(r["agreement"])
        bad = bool(r.get("marked") or r.get("excluded"))
        cell = (int(px // CELL), int(py // CELL), bad)
        if cell in seen:
            continue
        seen.add(cell)
        if bad:
            out.append(f'<path d="M{px - 3:.1f},{py - 3:.1f}l6,6m0,-6l-6,6" stroke="{RED}" '
                       'stroke-width="1.5"/>')
        else:
            out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{BLUE}" '
                       'fill-opacity="0.6"/>')
    out.append("</svg>")
    return "".join(out)


SERIES = (("iaa1", "IAA-1", BLUE), ("alpha_interval", "alpha", PURPLE),
          ("split_half", "split-half", GREEN))


def growth_chart(points: list[dict], curve: list[dict] | None, pairs: int,
                 budget: int = 0) -> str:
    """IAA-1, alpha and split-half against ratings collected, up to the design's ``budget``
    of ratings (every place completed); the planner's predicted reliability (``curve``:
    ``raters, reliability`` per raters per pair, drawn at raters times ``pairs`` ratings, within
    the budget) dashed in orange when there is one."""
    last = points[-1] if points else {}
    said = ", ".join(f"{name} {last[key]:.3f}" for key, name, _ in SERIES
                     if last.get(key) is not None) or "not yet computable"
    out = _open("chart-growth", "Agreement as ratings come in",
                f"after {last.get('ratings', 0)} ratings from {last.get('raters', 0)} completed "
                f"raters: {said}" + ("; dashed: the planner's predicted split-half reliability"
                                     if curve else ""))
    out += _frame("ratings collected", "agreement")
    left, top, width, height = PLOT
    planned = [(float(c["raters"]) * pairs, c["reliability"]) for c in curve or []
               if c.get("reliability") is not None]
    most = max([p["ratings"] for p in points] + [budget, 1])
    planned = [(v, r) for v, r in planned if v <= most]
    x = _scale(0, most, left, width)
    y = _scale(-0.2, 1, top, height, flip=True)
    for v in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    for v in _ticks(0, most, 3):
        out.append(f'<text x="{x(v):.1f}" y="{top + height + 14}" text-anchor="middle">'
                   f'{_num(v)}</text>')
    if planned:
        out.append(f'<polyline fill="none" stroke="{ORANGE}" stroke-dasharray="3 2" '
                   f'stroke-width="1.5" points="'
                   + " ".join(f"{x(v):.1f},{y(r):.1f}" for v, r in planned) + '"/>')
    for n, (key, name, colour) in enumerate(SERIES):
        pts = [(x(p["ratings"]), y(p[key])) for p in points if p.get(key) is not None]
        if len(pts) > 1:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
                       + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
        out.extend(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2.5" fill="{colour}"/>' for a, b in pts)
        out.append(f'<rect x="{left + n * 90}" y="{top - 9}" width="10" '
                   f'height="3" fill="{colour}"/><text x="{left + 14 + n * 90}" '
                   f'y="{top - 5}">{name}</text>')
    if planned:
        out.append(f'<rect x="{left + 270}" y="{top - 9}" width="10" height="3" '
                   f'fill="{ORANGE}"/><text x="{left + 284}" y="{top - 5}">planner</text>')
    out.append("</svg>")
    return "".join(out)
