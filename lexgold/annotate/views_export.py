"""Export blueprint: the raw ratings in the long format of SPEC section 5 (admin only)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from lexgold.annotate.app import db, state
from lexgold.annotate.study import export_ratings
from lexgold.annotate.views_admin import admin_required

export = Blueprint("export", __name__, url_prefix="/admin")


@export.get("/ratings.csv")
@admin_required
def ratings_csv():
    complete = request.args.get("complete") == "1"
    frame = export_ratings(db(), complete_only=complete)
    body = frame.to_csv(index=False)
    name = f"{state().name}-ratings.csv".replace('"', "")
    return Response(body, mimetype="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})
