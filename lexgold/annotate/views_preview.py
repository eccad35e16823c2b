"""The shareable preview: ``/preview/<token>`` walks the study as a rater sees it,
for whoever has the link (:mod:`lexgold.study.preview_links`: signed, expiring, revocable),
without the admin password. Every page type in a rater's order: consent, the instructions, the
qualification question (a wrong answer shows the screened-out page), each page of a tranche
(groups, checkpoints, Best-Worst tuples) and the completion page; the codes are replaced by
``PREVIEW`` (a real completion code would let anyone claim payment). Nothing is written: no
rater, no place taken, no answer, no throttle; sending a page only moves to the next. The
admin's own preview (``/admin/preview``, :func:`lexgold.annotate.views_admin.preview`) is the
same walk through one tranche's pages.
"""

from __future__ import annotations

from flask import (Blueprint, abort, current_app, g, redirect, render_template, request,
                   url_for)
from sqlalchemy import select

from lexgold.annotate import flow
from lexgold.annotate.context import db, fill, now, state
from lexgold.annotate.views_rater import _consent_page, render_step
from lexgold.study import models as m
from lexgold.study import preview_links

preview = Blueprint("preview", __name__, url_prefix="/preview")
#: what replaces the completion and screen-out codes in a preview
CODE = "PREVIEW"


def _checked(token: str) -> None:
    if preview_links.check(db(), current_app.secret_key, token, now()) is None:
        abort(404, LINK_GONE)


LINK_GONE = ("This preview link has expired, was revoked, or was never made. Ask the "
             "researcher for a new one.")


@preview.errorhandler(404)
def _gone(error):
    gone = error.description == LINK_GONE
    return render_template("message.html", heading="Preview link not valid" if gone else
                           "No such page", body=LINK_GONE if gone else
                           "The study has no such tranche or page; the link's first page "
                           "starts the walk again.", link=""), 404


def _pages(tranche: m.Tranche) -> list[tuple[str, int]]:
    """The pages of the walk: ``(kind, index)``, kind consent / instructions / qualification /
    step / done."""
    config = state().config
    pages = [("consent", 0)] + [("instructions", k) for k in range(len(config.texts.instructions))]
    if config.qualification is not None:
        pages.append(("qualification", 0))
    return pages + [("step", k) for k in range(tranche.n_steps)] + [("done", 0)]


@preview.get("/<token>")
def start(token: str):
    _checked(token)
    first = db().scalar(select(m.Tranche.number).order_by(m.Tranche.number).limit(1))
    return redirect(url_for("preview.page", token=token, tranche=first or 1, number=0))


@preview.route("/<token>/<int(max=999999999):tranche>/<int(max=999999999):number>",
               methods=["GET", "POST"])
def page(token: str, tranche: int, number: int):
    """Page ``number`` of the walk through tranche ``tranche``."""
    _checked(token)
    row = db().scalars(select(m.Tranche).where(m.Tranche.number == tranche)).first()
    if row is None:
        abort(404)
    pages = _pages(row)
    if number >= len(pages):
        abort(404)
    kind, index = pages[number]
    if request.method == "POST":
        qualification = state().config.qualification
        if kind == "qualification" and \
                flow.parse_int(request.form.get("choice", "")) != qualification.answer:
            return redirect(url_for("preview.screened_out", token=token, tranche=tranche))
        return redirect(url_for("preview.page", token=token, tranche=tranche,
                                number=min(number + 1, len(pages) - 1)))
    n_tranches = db().scalar(select(m.Tranche.number).order_by(m.Tranche.number.desc())
                             .limit(1))
    banner = (f"Preview of tranche {tranche} of {n_tranches}: {_where(kind, index, row)}, as a "
              f"rater sees it. Nothing is stored and no place is taken.")
    action = url_for("preview.page", token=token, tranche=tranche, number=number)
    g.preview_skip = url_for("preview.page", token=token, tranche=tranche, number=number + 1) \
        if kind != "done" else ""
    return _render(kind, index, row, banner, action, token, tranche)


def _where(kind: str, index: int, row: m.Tranche) -> str:
    """Where a page of the walk is, counted as the rater's own progress line counts it (the
    tranche's pages, ``texts.progress``), so the banner and the page never disagree."""
    instructions = len(state().config.texts.instructions)
    return {"consent": f"the consent page, before the tranche's {row.n_steps} pages",
            "instructions": f"instructions page {index + 1} of {instructions}",
            "qualification": "the qualification question",
            "step": f"page {index + 1} of {row.n_steps}",
            "done": "the completion page"}[kind]


def _code_page(heading: str, text: str, link_template: str):
    """The completion (or screen-out) page as a rater gets it, code box, copy button and the
    button back to the platform included, with the placeholder code (the link carries it too,
    never the study's real code)."""
    link = link_template.replace("{code}", CODE) if link_template else ""
    return render_template("completion.html", heading=heading, code=CODE,
                           body=fill(text, code=CODE), link=link)


@preview.get("/<token>/<int(max=999999999):tranche>/screened-out")
def screened_out(token: str, tranche: int):
    _checked(token)
    texts = state().config.texts
    g.preview = {"banner": "Preview: the page of a rater who answered the qualification "
                           "question wrong (the code is a placeholder).", "action": ""}
    return _code_page(texts.screened_out_heading, texts.screened_out_text,
                      db().scalar(select(m.Study.completion_url)) or "")


def _render(kind, index, row, banner, action, token, tranche):

    texts = state().config.texts
    g.preview = {"banner": banner, "action": action}
    if kind == "consent":
        return _consent_page(False, None)
    if kind == "instructions":
        return render_template("instructions.html", page=index,
                               paragraphs=texts.instructions[index].split("\n\n"))
    if kind == "qualification":
        return render_template("qualification.html", qualification=state().config.qualification)
    if kind == "step":
        step, items, n_steps = flow.page_content(db(), row.id, index)
        return render_step(step, items, n_steps, index, rater_id=0, action=action,
                           banner=banner)
    g.preview["banner"] = ("Preview: the completion page (the code is a placeholder). End of "
                           "the preview.")
    return _code_page(texts.completion_heading, texts.completion_text,
                      db().scalar(select(m.Study.completion_url)) or "")


@preview.context_processor
def _context():
    """Every template of a preview request: the banner above the page and the form's target
    (``action``: the rater templates post to the rater's routes otherwise)."""
    return {**(g.get("preview") or {"banner": "Preview: nothing is stored and no place is "
                                              "taken.", "action": ""}),
            "skip": g.get("preview_skip", "")}
