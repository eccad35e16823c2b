"""Preview as rater: an admin walks any tranche page by page; nothing is stored, no slot taken."""

import re

from sqlalchemy import func, select

from lexgold.study import models as m
from test_annotate_app import simlex_pairs, simlex_study  # noqa: F401  (fixtures)
from test_annotate_app import enter, page


def counts(app):
    with app.extensions["lexgold"].sessions() as session:
        tables = (m.Rater, m.Answer, m.CheckpointAnswer, m.Throttle)
        rows = {t.__tablename__: session.scalar(select(func.count()).select_from(t))
                for t in tables}
        rows["slots"] = sorted(session.execute(select(m.Slot.status, m.Slot.rater_id)).all(),
                               key=str)
        return rows


def design(app, number):
    """The tranche's pages from the database: (kind, item ids in order)."""
    with app.extensions["lexgold"].sessions() as session:
        tranche = session.scalars(select(m.Tranche).where(m.Tranche.number == number)).one()
        steps = session.scalars(select(m.Step).where(m.Step.tranche_id == tranche.id)
                                .order_by(m.Step.position)).all()
        return [(s.kind, list(session.scalars(select(m.Item.id).where(m.Item.step_id == s.id)
                                              .order_by(m.Item.position))))
                for s in steps]


def login(app):
    admin = app.test_client()
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    return admin


def test_preview_walks_a_tranche_without_storing_anything(simlex_study):
    app = simlex_study
    before = counts(app)
    admin = login(app)
    expected = design(app, 2)
    seen, url = [], "/admin/preview/2/0"
    while True:
        response = admin.get(url)
        assert response.status_code == 200
        html = response.get_data(as_text=True)
        if "End of the preview" in html:
            break
        assert f"page {len(seen) + 1} of {len(expected)}" in html and "Nothing is stored" in html
        action = re.search(r'<form method="post"[^>]*action="([^"]+)"', html).group(1)
        assert action == url
        ids = [int(i) for i in re.findall(r'data-item="(\d+)"', html)]
        checkpoint = 'name="choice"' in html
        seen.append(("checkpoint" if checkpoint else "group", ids))
        data = {"choice": 1} if checkpoint else {f"r{i}": 3 for i in ids}
        moved = admin.post(url, data=data)
        assert moved.status_code == 302
        url = moved.headers["Location"]
    assert [ids for _, ids in seen] == [ids for _, ids in expected]
    assert [kind == "checkpoint" for kind, _ in seen] == \
        [kind == "checkpoint" for kind, _ in expected]
    assert counts(app) == before


def test_preview_leaves_every_place_to_raters(simlex_study):
    admin = login(simlex_study)
    for tranche in (1, 2):
        assert admin.get(f"/admin/preview/{tranche}/0").status_code == 200
        assert admin.post(f"/admin/preview/{tranche}/0", data={}).status_code == 302
        assert admin.get(f"/admin/preview/{tranche}/1").status_code == 200
    raters = []
    for k in range(4):                        # 2 tranches x 2 raters: all four get a place
        client = simlex_study.test_client()
        enter(client)
        raters.append(page(client)[1])
    assert raters == [0, 0, 0, 0]


def test_preview_is_for_the_admin_only_and_knows_its_tranches(simlex_study):
    client = simlex_study.test_client()
    response = client.get("/admin/preview/1/0")
    assert response.status_code == 302 and "/admin/login" in response.headers["Location"]
    assert client.post("/admin/preview/1/0", data={}).status_code == 302
    assert counts(simlex_study)["answer"] == 0
    admin = login(simlex_study)
    assert admin.get("/admin/preview/9/0").status_code == 404
    overview = admin.get("/admin/").get_data(as_text=True)
    assert '<a href="/admin/preview/1/0">as rater</a>' in overview
