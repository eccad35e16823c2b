"""The admin view's picture of an adaptive study: an inline SVG, drawn by the
background refresher and stored with the figures, so the page only prints it (no JavaScript,
no CDN: the site's Content-Security-Policy allows neither). Presentation attributes only (no
``style``), so ``style-src`` needs no exception either.

Left: reliability of the pair means (split-half, Spearman-Brown corrected;
:func:`lexgold.live.allocator.pair_mean_reliability`) against ratings collected, with the target and
the budget, and the planner's predicted curve when given (raters per pair times the pairs,
as ratings). Right: the budget spent, and one progress bar per tranche (completed of its
slots; top-up tranches marked).
"""

from __future__ import annotations

from html import escape

import pandas as pd

WIDTH, HEIGHT = 760, 300
PLOT = (50, 20, 360, 240)            # left, top, width, height of the reliability plot
BARS_X, BARS_W = 480, 220
BLUE, GREY, ORANGE, GREEN = "#1f5fa8", "#9aa3ad", "#c8641e", "#2e7d32"


def picture(state: dict, tranches: list[dict], curve: pd.DataFrame | None = None) -> str:
    """The SVG text (see the module docstring). ``state``:
    :func:`lexgold.live.allocator.adaptive_state` (``budget, spent, committed, target, reliability, path, first_tranches, pairs``);
    ``tranches``: the figures' tranche rows (``tranche, slots, completed``); ``curve``: the
    planner's ``raters, reliability`` (and ``low, high``) frame, or None."""
    budget = max(int(state.get("budget") or 0), int(state.get("committed") or 0), 1)
    path = [p for p in state.get("path", []) if p.get("reliability") is not None]
    left, top, width, height = PLOT

    def x(v):
        return left + width * min(max(v / budget, 0), 1)

    def y(r):
        return top + height * (1 - min(max(r, 0), 1))

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" id="adaptive-picture" '
            f'font-family="sans-serif" font-size="11">'),
           f"<title>{escape(_summary(state))}</title>",
           (f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" '
            f'stroke="{GREY}"/>')]
    for r in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<text x="{left - 6}" y="{y(r) + 4:.1f}" text-anchor="end">{r:g}</text>')
    for share in (0, 0.5, 1):
        out.append(f'<text x="{x(share * budget):.1f}" y="{top + height + 14}" '
                   f'text-anchor="middle">{int(share * budget)}</text>')
    out.append(f'<text x="{left + width / 2}" y="{HEIGHT - 6}" text-anchor="middle">ratings '
               f'collected (budget {budget})</text>')
    out.append(f'<text x="12" y="{top + height / 2}" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + height / 2})">reliability</text>')
    target = state.get("target")
    if target is not None:
        out.append(f'<line x1="{left}" x2="{left + width}" y1="{y(target):.1f}" '
                   f'y2="{y(target):.1f}" stroke="{GREEN}" stroke-dasharray="4 3"/>'
                   f'<text x="{left + width - 4}" y="{y(target) - 4:.1f}" text-anchor="end" '
                   f'fill="{GREEN}">target {target:g}</text>')
    if curve is not None and state.get("pairs"):
        points = [(x(float(k) * state["pairs"]), y(float(r)))
                  for k, r in zip(curve["raters"], curve["reliability"]) if pd.notna(r)]
        if points:
            out.append(f'<polyline fill="none" stroke="{ORANGE}" stroke-dasharray="2 2" '
                       f'points="{_points(points)}"/><text x="{points[-1][0]:.1f}" '
                       f'y="{points[-1][1] + 14:.1f}" text-anchor="end" fill="{ORANGE}">'
                       "planner</text>")
    if path:
        points = [(x(p["ratings"]), y(p["reliability"])) for p in path]
        out.append(f'<polyline fill="none" stroke="{BLUE}" stroke-width="2" '
                   f'points="{_points(points)}"/>')
        out.extend(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{BLUE}"/>'
                   for px, py in points)
    out.extend(_bars(state, tranches, budget))
    out.append("</svg>")
    return "".join(out)


def _bars(state: dict, tranches: list[dict], budget: int) -> list[str]:
    first = int(state.get("first_tranches") or 0)
    spent = int(state.get("spent") or 0)
    out = [f'<text x="{BARS_X}" y="14">budget: {spent} of {budget} ratings spent</text>',
           f'<rect x="{BARS_X}" y="20" width="{BARS_W}" height="10" fill="#e6e9ec"/>',
           (f'<rect x="{BARS_X}" y="20" width="{BARS_W * min(spent / budget, 1):.1f}" '
            f'height="10" fill="{BLUE}"/>')]
    rows = tranches[:40]
    step = min(18.0, 240 / max(len(rows), 1))
    for k, row in enumerate(rows):
        top = 44 + k * step
        slots = max(int(row.get("slots") or 0), 1)
        done = int(row.get("completed") or 0)
        number = int(row["tranche"])
        label = f"{'top-up ' if first and number > first else ''}{number}"
        out.append(f'<text x="{BARS_X - 4}" y="{top + step * 0.6:.1f}" text-anchor="end" '
                   f'font-size="{min(11, step * 0.8):.0f}">{escape(label)}</text>'
                   f'<rect x="{BARS_X}" y="{top:.1f}" width="{BARS_W}" '
                   f'height="{step * 0.7:.1f}" fill="#e6e9ec"/>'
                   f'<rect x="{BARS_X}" y="{top:.1f}" width="{BARS_W * done / slots:.1f}" '
                   f'height="{step * 0.7:.1f}" fill="{GREEN if done >= slots else BLUE}"/>'
                   f'<text x="{BARS_X + BARS_W + 4}" y="{top + step * 0.6:.1f}" '
                   f'font-size="{min(11, step * 0.8):.0f}">{done}/{slots}</text>')
    if len(tranches) > len(rows):
        out.append(f'<text x="{BARS_X}" y="{HEIGHT - 6}">... and {len(tranches) - len(rows)} '
                   "more tranches</text>")
    return out


def _summary(state: dict) -> str:
    r = state.get("reliability")
    return (f"reliability {'not yet computable' if r is None else f'{r:.3f}'} after "
            f"{state.get('spent', 0)} of {state.get('budget', 0)} ratings; target "
            f"{state.get('target')}")


def _points(points) -> str:
    return " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
