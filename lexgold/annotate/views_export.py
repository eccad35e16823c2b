"""Export blueprint: the raw ratings in the long format (admin only), as a download whose
cells cannot start a spreadsheet formula (:func:`lexgold.annotate.study.escape_formulas`),
streamed a few hundred raters at a time (:func:`lexgold.annotate.study.export_chunks`)."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

from flask import Blueprint, Response, request, stream_with_context

from lexgold.annotate.context import db, state
from lexgold.annotate.study import escape_formulas, export_chunks
from lexgold.annotate.views_admin import admin_required

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


def attachment(name: str) -> str:
    """``Content-Disposition`` for a download called ``name`` (RFC 6266): a plain-ASCII
    ``filename`` for old clients and the exact name as UTF-8 in ``filename*`` (RFC 5987).
    Control characters (CR/LF: header injection) are dropped from both."""
    name = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Zl", "Zp"))
    simple = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    simple = "".join(c for c in simple if c not in '"\\').strip(" -") or "ratings.csv"
    return f"attachment; filename=\"{simple}\"; filename*=UTF-8''{quote(name, safe='')}"
