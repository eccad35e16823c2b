"""Shareable preview links (issue 37): signed with the session-signing key, expiring,
revocable, made by `lexgold study preview-link` and the admin view; whoever has one walks every
page type as a rater sees it, with no password, and nothing is written."""

import re
from datetime import timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select, update

from lexgold.cli import cli
from lexgold.study import models as m
from lexgold.study import preview_links
from lexgold.study.db import database_url
from lexgold.study.secret import write_key_file
from lexgold.study.store import create_study
from test_annotate_app import make_app, protocol_variant, tr9856_pair_file, usf_pair_file
from test_annotate_bws import BWS_COUNTS, bws_protocol

KEY = "test-key-" + "k" * 32


def row_counts(app) -> dict:
    """Rows of every table of the study."""
    with app.extensions["lexgold"].reads() as session:
        return {t.name: session.scalar(select(func.count()).select_from(t))
                for t in m.Base.metadata.sorted_tables}


def _study(tmp_path, usf, name, **values):
    url = database_url(tmp_path / f"{name}.sqlite")
    if name == "tr9856":
        create_study("tr9856", tr9856_pair_file(usf, tmp_path / "t.csv"), url,
                     completion_code="REAL-CODE")
    elif name == "bws":
        pairs = usf_pair_file(usf, tmp_path / "p.csv", counts=BWS_COUNTS)
        create_study(bws_protocol(tmp_path), pairs, url, seed=4, completion_code="REAL-CODE")
    else:
        pairs = usf_pair_file(usf, tmp_path / "p.csv", (("N", "N", 60), ("V", "V", 20)))
        create_study(protocol_variant(tmp_path, name, tranches=2, raters_per_tranche=2,
                                      **values), pairs, url, completion_code="REAL-CODE",
                     screenout_code="REAL-OUT")
    (tmp_path / f"{name}.key").unlink(missing_ok=True)
    key_file = write_key_file(tmp_path / "site.key")
    key = key_file.read_text().strip()
    return make_app(url, SECRET_KEY=key), url, key_file


def cli_link(url, key_file, *extra) -> str:
    result = CliRunner().invoke(cli, ["study", "preview-link", url, "--secret-key-file",
                                      str(key_file), "--url", "https://r.example.org/", *extra])
    assert result.exit_code == 0, result.output
    return result.output


def walk(client, path, wrong_qualification=False) -> list[str]:
    """Follow a preview from ``path`` to its last page, answering each form; returns the kind
    of each page seen."""
    seen, response = [], client.get(path)
    if response.status_code == 302:
        path = response.headers["Location"]
        response = client.get(path)
    while True:
        assert response.status_code == 200, path
        html = response.get_data(as_text=True)
        assert "Nothing is stored" in html or "placeholder" in html
        kind = ("consent" if 'name="consent"' in html else
                "instructions" if 'name="page"' in html else
                "qualification" if "Qualification question" in html else
                "bws" if "data-tuple=" in html else
                "checkpoint" if 'name="choice"' in html else
                "group" if 'name="r' in html else "message")
        seen.append(kind)
        progress = re.search(r'id="progress">Page (\d+) of (\d+)<', html)
        if progress:                    # the banner counts the tranche's pages as the page does
            assert f"page {progress.group(1)} of {progress.group(2)}," in html
        if kind == "message":
            assert "PREVIEW" in html and "REAL-" not in html
            # the real end page, in preview form: the code in its box, copy, the way back
            assert '<code id="code">PREVIEW</code>' in html and 'id="copy"' in html
            assert 'id="skip"' not in html
            return seen
        action = re.search(r'<form method="post"[^>]*action="([^"]+)"', html).group(1)
        assert action.startswith("/preview/")
        data = {"choice": 0 if wrong_qualification else 1} if kind == "qualification" else {}
        moved = client.post(action, data=data)
        assert moved.status_code == 302
        path = moved.headers["Location"]
        response = client.get(path)


@pytest.mark.parametrize("name", ["simlex", "hyperlex", "tr9856", "bws"])
def test_a_link_walks_every_page_type_and_writes_nothing(name, tmp_path, usf):
    app, url, key_file = _study(tmp_path, usf, name)
    output = cli_link(url, key_file, "--days", "7")
    token = re.search(r"https://r\.example\.org/preview/(\S+)", output).group(1)
    before = row_counts(app)
    seen = walk(app.test_client(), f"/preview/{token}")
    assert seen[0] == "consent" and seen[-1] == "message" and "instructions" in seen
    with app.extensions["lexgold"].reads() as session:
        tranche = session.scalars(select(m.Tranche).order_by(m.Tranche.number)).first()
    assert len(seen) == 1 + sum(k == "instructions" for k in seen) + \
        (name == "hyperlex") + tranche.n_steps + 1
    if name == "hyperlex":
        assert "qualification" in seen
        wrong = walk(app.test_client(), f"/preview/{token}", wrong_qualification=True)
        assert wrong[-2] == "qualification" and len(wrong) < len(seen)
    if name == "bws":
        assert "bws" in seen
    else:
        assert "group" in seen
    assert row_counts(app) == before


def test_the_end_pages_carry_the_return_button_and_any_page_can_be_skipped(tmp_path, usf):
    url = database_url(tmp_path / "h.sqlite")
    pairs = usf_pair_file(usf, tmp_path / "p.csv", (("N", "N", 60), ("V", "V", 20)))
    create_study(protocol_variant(tmp_path, "hyperlex", tranches=2, raters_per_tranche=2), pairs,
                 url, completion_code="REAL-CODE", screenout_code="REAL-OUT",
                 completion_url="https://app.prolific.com/submissions/complete?cc={code}")
    key_file = write_key_file(tmp_path / "site.key")
    app = make_app(url, SECRET_KEY=key_file.read_text().strip())
    token = re.search(r"/preview/(\S+)", cli_link(url, key_file)).group(1)
    client = app.test_client()
    before = row_counts(app)
    html = client.get(f"/preview/{token}/1/0").get_data(as_text=True)
    skip = re.search(r'<a id="skip" href="([^"]+)">Skip this page</a>', html).group(1)
    assert skip == f"/preview/{token}/1/1"          # the consent page, skipped unanswered
    pages, path = 1, skip
    while True:                                      # skipping every page reaches the end
        html = client.get(path).get_data(as_text=True)
        pages += 1
        found = re.search(r'<a id="skip" href="([^"]+)">', html)
        if found is None:
            break
        path = found.group(1)
    assert '<code id="code">PREVIEW</code>' in html
    assert 'id="return" class="button" href="https://app.prolific.com/submissions/complete?' \
           'cc=PREVIEW"' in html and "REAL-" not in html
    out = client.get(f"/preview/{token}/1/screened-out").get_data(as_text=True)
    assert '<code id="code">PREVIEW</code>' in out and "cc=PREVIEW" in out and "REAL-" not in out
    assert row_counts(app) == before


def test_links_expire_are_revoked_and_cannot_be_forged(tmp_path, usf):
    app, url, key_file = _study(tmp_path, usf, "simlex")
    client = app.test_client()
    first = re.search(r"/preview/(\S+)", cli_link(url, key_file)).group(1)
    second = re.search(r"/preview/(\S+)", cli_link(url, key_file, "--days", "1")).group(1)
    assert client.get(f"/preview/{first}/1/0").status_code == 200
    with app.extensions["lexgold"].sessions() as session:          # link 2's time is up
        session.execute(update(m.PreviewLink).where(m.PreviewLink.id == 2).values(
            expires_at=m.PreviewLink.created_at - timedelta(seconds=1)))
        session.commit()
    gone = client.get(f"/preview/{second}/1/0")
    assert gone.status_code == 404 and "expired" in gone.get_data(as_text=True)
    with app.extensions["lexgold"].sessions() as session:
        row = session.get(m.PreviewLink, 1)
        forged = preview_links.token_of(session, "another-key-" + "x" * 32, row)
    assert client.get(f"/preview/{forged}/1/0").status_code == 404
    assert client.get(f"/preview/{first[:-2]}xx/1/0").status_code == 404
    missing = client.get(f"/preview/{first}/9/0")
    assert missing.status_code == 404 and "no such tranche" in missing.get_data(as_text=True)
    assert "1 preview link revoked" in CliRunner().invoke(
        cli, ["study", "preview-link", url, "--revoke"]).output
    assert client.get(f"/preview/{first}/1/0").status_code == 404
    bad = CliRunner().invoke(cli, ["study", "preview-link", url, "--days", "400"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_admin_view_makes_lists_and_revokes_links(tmp_path, usf):
    app, url, _ = _study(tmp_path, usf, "simlex")
    anyone = app.test_client()
    assert anyone.post("/admin/preview-links", data={"days": 3}).status_code == 302
    assert row_counts(app)["preview_link"] == 0                 # not logged in: nothing made
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    assert admin.post("/admin/preview-links", data={"days": 0}).status_code == 400
    assert admin.post("/admin/preview-links", data={"days": 3}).status_code == 302
    html = admin.get("/admin/").get_data(as_text=True)
    link = re.search(r"<code>http://localhost(/preview/[^<]+)</code>", html).group(1)
    assert anyone.get(link).status_code == 302
    admin.post("/admin/preview-links/1/revoke")
    assert anyone.get(link).status_code == 404
    assert "No live preview link." in admin.get("/admin/").get_data(as_text=True)
