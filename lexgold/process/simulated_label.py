"""Simulated ratings in a release: how many there are, and the words that say so.

A rating is simulated when its ``platform`` column (docs/contract.md, long format) is
``simulated`` (:data:`lexgold.ratings.SIMULATED`): the answers of ``lexgold study rehearse``'s
raters, which the site stores with that platform and ``lexgold study export`` writes with it,
and every row of ``lexgold simulate``. No person gave such a rating: it was drawn from
lexgold's rater model (:mod:`lexgold.crowd.simulate`), so the scores, agreement, exclusions,
rater counts and dates of a release built from it describe the model, not people. A release
with any simulated rating says so where a reader looks first: the dataset card and
``report.md`` open with :func:`banner`, ``report.json`` carries ``simulated``
(:func:`simulated_ratings`), ``croissant.json`` and ``datapackage.json`` state it
(:func:`statement`), and the gold files carry the mark of :mod:`lexgold.simulated`
(:func:`mark_gold`: a ``simulated`` column; HyperLex's file a ``# simulated`` first line), as
``CITATION.cff`` does in its title and abstract. A release of people's ratings alone is
written as before, byte for byte.

>>> import pandas as pd
>>> frame = pd.DataFrame({"rater_id": ["a", "a", "b", "b"], "kind": ["unique"] * 3 + ["checkpoint"],
...                       "platform": ["prolific", "prolific", "simulated", "simulated"]})
>>> simulated_ratings(frame)
{'ratings': 1, 'of': 3, 'share': 0.3333, 'raters': 1}
>>> simulated_ratings(frame.assign(platform="prolific")) is None
True
"""

from __future__ import annotations

import pandas as pd

from lexgold.simulated import SIMULATED, simulated_rows

#: where simulated ratings come from, as the banner names it
MODEL = "lexgold's simulated rater model (`lexgold study rehearse`, `lexgold simulate`)"


def simulated_ratings(ratings: pd.DataFrame) -> dict | None:
    """``{"ratings", "of", "share", "raters"}``: the simulated ratings among the ratings
    (checkpoint answers left out), their share (4 decimals) and their raters; ``None`` when no
    rating is simulated (no ``platform`` column, or none ``simulated``)."""
    if ratings.empty:
        return None
    rated = ratings
    if "kind" in ratings.columns:
        rated = ratings[ratings["kind"].astype(str).to_numpy() != "checkpoint"]
    mark = simulated_rows(rated).to_numpy()       # lexgold.simulated: the one rule
    if not mark.any():
        return None
    return {"ratings": int(mark.sum()), "of": int(len(rated)),
            "share": round(float(mark.mean()), 4),
            "raters": int(rated.loc[mark, "rater_id"].nunique())}


def mark_gold(gold: pd.DataFrame, simulated: dict | None) -> pd.DataFrame:
    """``gold`` with a last column ``simulated`` (True on every row) when the release holds
    simulated ratings (:mod:`lexgold.simulated`); ``gold`` itself otherwise.

    >>> mark_gold(pd.DataFrame({"word1": ["a"]}), {"ratings": 1}).columns.tolist()
    ['word1', 'simulated']
    """
    return gold.assign(**{SIMULATED: True}) if simulated else gold


def statement(simulated: dict, noun: str = "ratings") -> str:
    """Plain sentences (no Markdown): which ratings (or Best-Worst answers: ``noun``) are
    simulated and what that means."""
    lead = "Simulated data: " if simulated["ratings"] == simulated["of"] else \
        "Partly simulated data: "
    return lead + _facts(simulated, noun, MODEL.replace("`", ""))


def banner(simulated: dict, noun: str = "ratings") -> list[str]:
    """The lines a dataset card or ``report.md`` opens with (a Markdown block quote)."""
    title = (f"Simulated {noun}, not people's." if simulated["ratings"] == simulated["of"]
             else f"Partly simulated {noun}.")
    facts = _facts(simulated, noun, MODEL)
    return [f"> **{title}** {facts[0].upper()}{facts[1:]}", ""]


def _facts(simulated: dict, noun: str, model: str) -> str:
    if simulated["ratings"] == simulated["of"]:
        return (f"all {simulated['ratings']} {noun} were drawn from {model}, not given by "
                "people. The scores, agreement figures, exclusions, rater counts and dates "
                "describe that simulation: they are not evidence about real raters or about "
                "the word pairs.")
    return (f"{simulated['ratings']} of the {simulated['of']} {noun} "
            f"({100 * simulated['share']:.1f} %, from {simulated['raters']} raters) were drawn "
            f"from {model}, not given by people. The scores, agreement figures, exclusions, "
            "rater counts and dates mix people and that simulation: they are not evidence "
            "about real raters alone.")
