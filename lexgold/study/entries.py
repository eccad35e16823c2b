"""A study's entry links: the link each platform it accepts is given, and how it is given.

A study accepts some of :data:`~lexgold.study.models.ENTRY_KINDS` (``study create --accept``);
the rating site reads the platform parameters of these links (:mod:`lexgold.annotate.flow`),
``lexgold study create`` and the admin view print them (docs/annotate.md, "Commands").
"""

from __future__ import annotations

from lexgold.study import models as m

#: each platform's entry parameters: the participant ID, the study and the session
PLATFORMS = {"prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
             "mturk": ("workerId", "hitId", "assignmentId")}

#: how each entry link is given to its platform (shown next to the links)
ENTRY_NOTES = {"prolific": "the study URL there; Prolific fills in the placeholders",
               "mturk": "the HIT's ExternalQuestion URL; MTurk adds workerId, assignmentId "
                        "and hitId",
               "anonymous": "shared as it is; without a platform ID one browser is one rater"}


def entry_links(site: str, entries: dict | None) -> dict[str, str]:
    """The entry link to give each platform the study accepts (in ``ENTRY_KINDS`` order).

    ``site`` is the rating site's root URL, ending in ``/``. Prolific's link carries its
    placeholders (``PROLIFIC_PID={{%PROLIFIC_PID%}}`` ...); MTurk appends its own parameters
    to the ExternalQuestion URL and the anonymous link has none, so both are ``site``.

    >>> links = entry_links("https://r.example.org/", {"platforms": ["prolific", "anonymous"]})
    >>> print(links["prolific"].removeprefix("https://r.example.org/"))
    ?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}
    >>> links["anonymous"], "mturk" in links
    ('https://r.example.org/', False)
    """
    accepted = m.ENTRY_KINDS if entries is None else entries.get("platforms", m.ENTRY_KINDS)
    prolific = "&".join(f"{key}={{{{%{key}%}}}}" for key in PLATFORMS["prolific"])
    links = {"prolific": f"{site}?{prolific}", "mturk": site, "anonymous": site}
    return {kind: links[kind] for kind in m.ENTRY_KINDS if kind in accepted}
