"""Export blueprint: the raw ratings in the long format and the raters' quality flags (admin
only), as downloads whose
cells cannot start a spreadsheet formula (:func:`lexgold.study.export.escape_formulas`),
streamed a few hundred raters at a time (:func:`lexgold.study.export.export_chunks`)."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

import pandas as pd
from flask import Blueprint, Response, request, stream_with_context

from lexgold.annotate.context import db, state
from lexgold.study.export import escape_formulas, export_chunks
from lexgold.annotate.views_admin import QUALITY_COLUMNS, admin_required
from lexgold.live import figures

export = Blueprint("export", __name__, url_prefix="/admin")


@export.get("/ratings.csv")
@admin_required
def ratings_csv():
    complete = request.args.get("complete") == "1"

    def pieces():             # a few hundred raters at a time: memory flat at any size
        for number, frame in enumerate(export_chunks(db(), complete_only=complete)):
            # escaped: a download opened in spreadsheets
            yield escape_formulas(frame).to_csv(index=False, header=number == 0)
    return Response(stream_with_context(pieces()), content_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": attachment(f"{state().name}-ratings.csv")})


@export.get("/quality.csv")
@admin_required
def quality_csv():
    """Every rater's quality flags, as stored with the figures (the page shows the first
    :data:`lexgold.live.figures.SHOWN`, marked raters first)."""
    stored = figures.load(db(), details=True)
    frame = pd.DataFrame(stored.figures.get("quality", []) if stored is not None else [],
                         columns=QUALITY_COLUMNS)
    return Response(escape_formulas(frame).to_csv(index=False),
                    content_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": attachment(f"{state().name}-quality.csv")})



def attachment(name: str) -> str:
    """``Content-Disposition`` for a download called ``name`` (RFC 6266): a plain-ASCII
    ``filename`` for old clients and the exact name as UTF-8 in ``filename*`` (RFC 5987).
    Control characters (CR/LF: header injection) are dropped from both."""
    name = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Zl", "Zp"))
    simple = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    simple = "".join(c for c in simple if c not in '"\\').strip(" -") or "ratings.csv"
    return f"attachment; filename=\"{simple}\"; filename*=UTF-8''{quote(name, safe='')}"
