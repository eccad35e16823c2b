"""``lexgold study create|report|export`` and ``lexgold serve`` (issue #4)."""

from __future__ import annotations

import json
import os
import secrets
import threading
import urllib.request
from pathlib import Path

import click

from lexgold.cliutil import seed_option

STUDY_HELP = "Study database: a SQLite file path or a database URL (postgresql+psycopg://...)."


@click.group()
def study():
    """Create and manage rating studies.

    \b
    Example:
        lexgold study create --protocol simlex --pairs pairs.csv --db study.sqlite
    """


@study.command()
@click.option("--protocol", required=True,
              help="Protocol file, or simlex / hyperlex / tr9856 for the packaged ones.")
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Pair set CSV: a builder's pairs.csv or word1,word2,pos.")
@click.option("--db", default="study.sqlite", show_default=True, help=STUDY_HELP)
@seed_option
@click.option("--name", help="Study name shown in the admin view (default: the protocol's).")
@click.option("--completion-code", help="Code shown on completion (default: random).")
@click.option("--screenout-code", help="Code shown to screened-out raters (default: random).")
@click.option("--completion-url", default="",
              help="Link shown on completion, {code} filled in (e.g. "
                   "https://app.prolific.com/submissions/complete?cc={code}).")
@click.option("--topics", type=click.Path(exists=True, dir_okay=False),
              help="Topic studies (TR9856): the topics file given to `lexgold build tr9856`; "
                   "its definitions are shown as the topics' titles.")
@click.option("--json", "as_json", is_flag=True, help="Print the full design report as JSON.")
def create(protocol, pairs, db, seed, name, completion_code, screenout_code, completion_url,
           topics, as_json):
    """Create a study from a protocol file and a pair set.

    Lays out tranches and groups (SPEC section 2), stores the design and prints what it could
    not satisfy.

    \b
    Example:
        lexgold study create --protocol simlex --pairs out/simlex/pairs.csv --db study.sqlite
    """
    from lexgold.annotate.db import database_url
    from lexgold.annotate.study import create_study

    report = create_study(protocol, pairs, database_url(db), seed=seed, name=name,
                          completion_code=completion_code, screenout_code=screenout_code,
                          completion_url=completion_url, topics=topics)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    sizes = sorted({row["showings"] for row in report["per_tranche"]})
    click.echo(f"study created in {db}: {report['pairs']} pairs, {report['tranches']} tranches "
               f"({sizes[0]}-{sizes[-1]} showings each), {report['consistency']} consistency "
               f"pairs, {report['slots']} rater slots")
    skipped = {k: v for k, v in report.get("skipped_pairs", {}).items() if v}
    if skipped:
        click.echo("  not rated (aligned pair set): "
                   + ", ".join(f"{n} {flag} rows" for flag, n in skipped.items()))
    for message in report["unmet"][:20]:
        click.echo(f"  not satisfied: {message}")
    if len(report["unmet"]) > 20:
        click.echo(f"  ... and {len(report['unmet']) - 20} more (see --json)")


@study.command()
@click.argument("study_db")
def report(study_db):
    """Print a study's design report and progress per tranche as JSON.

    \b
    Example:
        lexgold study report study.sqlite
    """
    from sqlalchemy import select

    from lexgold.annotate import models as m
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.study import progress

    engine = open_study(study_db)
    with session_factory(engine)() as session:
        design = session.scalars(select(m.Study)).one().report
        table = progress(session).to_dict("records")
    click.echo(json.dumps({"design": design, "progress": table}, indent=2, default=int))


@study.command("export")
@click.argument("study_db")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="CSV file to write (long format of SPEC section 5).")
@click.option("--complete-only", is_flag=True, help="Only raters who finished their tranche.")
def export_command(study_db, out_file, complete_only):
    """Export the raw ratings in the long format read by `lexgold agree` and `lexgold process`.

    \b
    Example:
        lexgold study export study.sqlite --out ratings.csv
    """
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.study import export_ratings

    engine = open_study(study_db)
    with session_factory(engine)() as session:
        frame = export_ratings(session, complete_only=complete_only)
    Path(out_file).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out_file, index=False)
    click.echo(f"{len(frame)} answers of {frame['rater_id'].nunique()} raters -> {out_file}")


@study.command("upgrade")
@click.argument("study_db")
def upgrade_command(study_db):
    """Bring a study database made by an older lexgold to the current schema (Alembic).

    \b
    Example:
        lexgold study upgrade study.sqlite
    """
    from lexgold.annotate.db import database_url, make_engine, upgrade

    engine = make_engine(database_url(study_db, must_exist=True))
    upgrade(engine)
    engine.dispose()
    click.echo(f"{study_db}: schema up to date")


@click.command()
@click.argument("study_db", metavar="STUDY")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=int, default=8000, show_default=True, help="Port (0: any free one).")
@click.option("--threads", type=int, default=8, show_default=True, help="Waitress worker threads.")
@click.option("--connection-limit", type=int, default=1000, show_default=True,
              help="Open connections accepted at once (each rater's browser keeps one open).")
@click.option("--secure-cookies/--no-secure-cookies", default=None,
              help="Secure session cookies (default: on unless serving on loopback).")
@click.option("--check", is_flag=True,
              help="Start, fetch the entry page once, print the URL and status, and exit.")
def serve(study_db, host, port, threads, connection_limit, secure_cookies, check):
    """Serve a study's rating site under waitress (a production WSGI server).

    The admin password comes from LEXGOLD_ADMIN_PASSWORD (or a werkzeug hash in
    LEXGOLD_ADMIN_PASSWORD_HASH); without either, a random one is printed at start.

    \b
    Example:
        lexgold serve study.sqlite --port 8000
    """
    from waitress.server import create_server
    from werkzeug.security import generate_password_hash

    from lexgold.annotate.app import create_app
    from lexgold.annotate.db import database_url, open_study

    open_study(study_db).dispose()          # one-line error for a missing / foreign database
    db_url = database_url(study_db)
    loopback = host in ("127.0.0.1", "localhost", "::1")
    password_hash = os.environ.get("LEXGOLD_ADMIN_PASSWORD_HASH")
    if not password_hash:
        password = os.environ.get("LEXGOLD_ADMIN_PASSWORD")
        if not password:
            password = secrets.token_urlsafe(12)
            click.echo(f"admin password (this run only): {password}")
        password_hash = generate_password_hash(password)
    secure = (not loopback) if secure_cookies is None else secure_cookies
    app = create_app({"DATABASE_URL": db_url, "ADMIN_PASSWORD_HASH": password_hash,
                      "SESSION_COOKIE_SECURE": secure})
    server = create_server(app, host=host, port=port, threads=threads,
                           connection_limit=connection_limit)
    url = f"http://{'localhost' if host in ('0.0.0.0', '::') else host}:{server.effective_port}/"
    click.echo(f"serving {study_db} at {url} (admin: {url}admin/)")
    if secure:
        click.echo("session cookies are Secure: serve behind HTTPS (or --no-secure-cookies)")
    if check:
        _check(server, url)
        return
    server.run()


def _check(server, url: str) -> None:
    """Serve from this thread until one fetch of the entry page (in another) is done."""
    from waitress import wasyncore

    result = {}

    def fetch():
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                result["status"] = response.status
        except OSError as err:
            result["error"] = str(err)

    thread = threading.Thread(target=fetch, daemon=True)
    thread.start()
    while thread.is_alive():
        wasyncore.loop(timeout=0.1, map=server._map, count=1)
    server.close()
    if result.get("status") != 200:
        raise click.ClickException(f"entry page failed: {result}")
    click.echo(f"entry page OK (HTTP {result['status']})")
