"""Security round 3, item 4: ``HEAD`` never changes state (docs/hardening.md, "Round 3").

Flask routes ``HEAD`` to a route's GET view, and flask-wtf checks no CSRF token on ``HEAD``:
a view that tells ``GET`` from ``POST`` by ``request.method == "GET"`` took a ``HEAD`` for a
``POST``. Each test failed before the fix it names.
"""

import httpx
import pytest
from sqlalchemy import create_engine, func, select, update
from werkzeug.security import generate_password_hash

from lexgold.study import models as m
from lexgold.annotate.app import create_app
from test_hardening_security import (CSRF, login, pairs, rater_client, serve,  # noqa: F401
                                     small_study)

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site


def test_head_on_the_admin_login_is_no_password_attempt(tmp_path, pairs, serve):
    """Before: ``HEAD /admin/login`` with ``password=...`` (no CSRF token) -> 302 and a working
    admin cookie; ten wrong ones -> the real admin locked out (429)."""
    _, base = serve(small_study(tmp_path, pairs))
    client = httpx.Client(base_url=base, timeout=30)
    for k in range(12):
        wrong = client.request("HEAD", "/admin/login", data={"password": f"wrong-{k}"})
        assert wrong.status_code == 200
    right = client.request("HEAD", "/admin/login", data={"password": "admin-pw"})
    assert right.status_code == 200 and "location" not in right.headers
    assert client.get("/admin/").headers.get("location", "").endswith("/admin/login")
    admin = login(base)                                    # not locked out
    assert admin.get("/admin/").status_code == 200


def _expire_slots(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(update(m.Slot).values(expires_at=m.utcnow().replace(year=2000)))
    engine.dispose()


def _stages(url: str) -> dict:
    engine = create_engine(url)
    with engine.connect() as connection:
        rows = dict(connection.execute(select(m.Rater.external_id, m.Rater.stage)).all())
    engine.dispose()
    return rows


def test_head_on_the_task_page_claims_no_place(tmp_path, pairs, serve):
    """Before: ``HEAD /task`` of a rater turned away (study full) retried the claim and took a
    place that had come free."""
    url = small_study(tmp_path, pairs, study={"tranches": 1, "raters_per_tranche": 1})
    _, base = serve(url)
    holder = rater_client(base, "?PROLIFIC_PID=holder01")
    assert 'name="position"' in holder.get("/task").text
    waiting = rater_client(base, "?PROLIFIC_PID=waiting01")
    assert "all the participants" in waiting.get("/task").text
    _expire_slots(url)                                     # the holder's claim runs out
    assert waiting.head("/task").status_code == 200
    assert _stages(url) == {"holder01": "rating", "waiting01": "full"}
    assert 'name="position"' in waiting.get("/task").text  # GET does take the free place
    assert _stages(url)["waiting01"] == "rating"


def _snapshot(app) -> dict:
    """Every row of every table of the study (the state a request could change)."""
    with app.extensions["lexgold_engine"].connect() as connection:
        return {table.name: sorted(map(repr, connection.execute(select(table)).all()))
                for table in m.Base.metadata.sorted_tables}


def test_no_route_of_the_url_map_writes_on_head(tmp_path, pairs):
    """Every route that answers ``HEAD``, sent by an admin and by a rater turned away (with a
    password in the body): the database is unchanged."""
    url = small_study(tmp_path, pairs, study={"tranches": 1, "raters_per_tranche": 1})
    app = create_app({"DATABASE_URL": url, "SESSION_COOKIE_SECURE": False,
                      "SECRET_KEY": "k" * 64,
                      "ADMIN_PASSWORD_HASH": generate_password_hash("admin-pw")})
    from test_hardening_input import enter_with_csrf
    enter_with_csrf(app.test_client(), "?PROLIFIC_PID=holder02")
    waiting = enter_with_csrf(app.test_client(), "?PROLIFIC_PID=waiting02")
    admin = app.test_client()
    token = CSRF.search(admin.get("/admin/login").get_data(as_text=True)).group(1)
    assert admin.post("/admin/login", data={"csrf_token": token,
                                            "password": "admin-pw"}).status_code == 302
    _expire_slots(url)
    values = {"tranche": 1, "position": 0}
    routes = [rule for rule in app.url_map.iter_rules() if "HEAD" in rule.methods]
    assert {"/admin/login", "/task", "/", "/admin/"} <= {rule.rule for rule in routes}
    before = _snapshot(app)
    for rule in routes:
        path = rule.rule.replace("<path:filename>", "lexgold.css")
        for name, value in values.items():
            path = path.replace(f"<int:{name}>", str(value))
        for client in (admin, waiting, app.test_client()):
            response = client.head(path, data={"password": "admin-pw"})
            assert response.status_code < 500, path
            assert _snapshot(app) == before, f"HEAD {path} changed the database"
    with app.extensions["lexgold_engine"].connect() as connection:
        assert connection.scalar(select(func.count()).select_from(m.Rater)
                                 .where(m.Rater.stage == "full")) == 1    # still turned away
