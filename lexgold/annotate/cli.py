"""``lexgold study create|report|export`` and ``lexgold serve``."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import secrets
import signal
import threading
import urllib.request
from pathlib import Path

import click

from lexgold.cliutil import (
    crowd_options,
    out_file_option,
    protocol_option,
    seed_option,
    study_target,
)

def shown(study) -> str:
    """A study as printed: its path, or its URL without the password."""
    from lexgold.annotate.db import shown as shown_study

    return shown_study(study)


@click.group()
def study():
    """Create and manage rating studies.

    \b
    Example:
        lexgold study create --protocol simlex --pairs pairs.csv --db study.sqlite
    """


@study.command()
@protocol_option("Its [study] table lays the study out.", required=True)
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Pair set CSV: a builder's pairs.csv or word1,word2,pos.")
@study_target("study.sqlite")
@seed_option
@click.option("--name", help="Study name shown in the admin view (default: the protocol's).")
@click.option("--completion-code", help="Code shown on completion (default: random).")
@click.option("--screenout-code", help="Code shown to screened-out raters (default: random).")
@click.option("--completion-url", default="",
              help="Link shown on completion, {code} filled in (e.g. "
                   "https://app.prolific.com/submissions/complete?cc={code}).")
@click.option("--accept", "accept", multiple=True,
              type=click.Choice(["prolific", "mturk", "anonymous"]),
              help="Entry links the study accepts (repeat the option; default: all three). A "
                   "Prolific study: --accept prolific --strict-ids.")
@click.option("--strict-ids", is_flag=True,
              help="Accept only IDs in the platform's own format (Prolific: 24 hex digits; "
                   "MTurk: A + 9-20 capitals or digits).")
@click.option("--topics", type=click.Path(exists=True, dir_okay=False),
              help="Topic studies (TR9856): the topics file given to `lexgold build tr9856`; "
                   "its definitions are shown as the topics' titles.")
@click.option("--json", "as_json", is_flag=True, help="Print the full design report as JSON.")
def create(protocol, pairs, db, seed, name, completion_code, screenout_code, completion_url,
           accept, strict_ids, topics, as_json):
    """Create a study from a protocol file and a pair set.

    Lays out tranches and groups (docs/annotate.md), stores the design, and prints the
    completion and screen-out codes, the entry links to give the platform, and what the design
    could not satisfy, summed up by kind (every item: --json, or `lexgold study report`).

    \b
    Example:
        lexgold study create --protocol simlex --pairs out/simlex/pairs.csv --db study.sqlite
    """
    from lexgold.annotate.db import database_url
    from lexgold.annotate.study import create_study

    report = create_study(protocol, pairs, database_url(db), seed=seed, name=name,
                          completion_code=completion_code, screenout_code=screenout_code,
                          completion_url=completion_url, topics=topics,
                          entries={"platforms": list(accept or ("prolific", "mturk", "anonymous")),
                                   "strict_ids": strict_ids})
    key_note = _study_key_file(db)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    if "balance" in report:                   # Best-Worst Scaling: the tuple design
        _echo_bws(db, report, accept, key_note)
        return
    sizes = sorted({row["showings"] for row in report["per_tranche"]})
    click.echo(f"study created in {shown(db)}: {report['pairs']} pairs, {report['tranches']} "
               "tranches "
               f"({sizes[0]}-{sizes[-1]} showings each), {report['consistency']} consistency "
               f"pairs, {report['slots']} rater slots")
    skipped = {k: v for k, v in report.get("skipped_pairs", {}).items() if v}
    if skipped:
        click.echo("  not rated (aligned pair set): "
                   + ", ".join(f"{n} {flag} rows" for flag, n in skipped.items()))
    _echo_codes(report, accept or ("prolific", "mturk", "anonymous"))
    click.echo(key_note)
    if report["unmet"]:
        click.echo(f"design notes ({len(report['unmet'])} constraints not met; each one in "
                   "--json and `lexgold study report`):")
    for line in report["unmet_summary"]:
        click.echo(f"  {line}")


def _echo_bws(db, report, accept, key_note) -> None:
    """What ``study create`` prints for a Best-Worst Scaling study (lexgold.annotate.bws)."""
    balance, pages = report["balance"], report["pages_per_tranche"]
    click.echo(f"study created in {shown(db)}: {balance['items']} pairs in {balance['tuples']} "
               f"{report['tuple_size']}-tuples ({balance['occurrences_min']}-"
               f"{balance['occurrences_max']} tuples a pair), {report['tranches']} tranches "
               f"({min(pages)}-{max(pages)} pages each), {len(report['consistency_tuples'])} "
               f"consistency tuples, {report['slots']} rater slots")
    _echo_codes(report, accept or ("prolific", "mturk", "anonymous"))
    click.echo(key_note)
    if not balance["balanced"]:
        click.echo(f"design note: {balance['pairs_together_more_than_once']} pairs of pairs "
                   f"share more than one tuple (at most {balance['cooccurrence_max']}; the least "
                   f"possible is {balance['cooccurrence_floor']}); --json gives the balance")


def _study_key_file(study_db: str) -> str:
    """Make a SQLite study's session-signing key file (kept if it exists); says where it is."""
    from lexgold.annotate.secret import default_key_file, how_to_make, write_key_file

    path = default_key_file(study_db)
    if path is None:
        return f"session-signing key: none for a database URL; {how_to_make(study_db)}"
    if path.exists():
        return f"session-signing key: {path} (kept; `lexgold serve` reads it)"
    write_key_file(path)
    return (f"session-signing key: {path} (new, readable by you only; `lexgold serve` reads "
            "it; keep it out of backups and shared folders)")


@study.command("secret")
@click.argument("study_db", metavar="STUDY", required=False)
@out_file_option("Write the key here (default: STUDY.key next to a SQLite study).",
                 dest="out_file", required=False)
@click.option("--force", is_flag=True,
              help="Replace an existing key (logs every rater and admin out).")
def secret_command(study_db, out_file, force):
    """Make the key that signs the rating site's session cookies, in a file only you can read.

    The key is kept out of the study database: a copy of the database (a backup, a shared
    folder) must not be enough to sign a rater's or an admin's session. `lexgold study create`
    makes one next to a SQLite study; for PostgreSQL give --out and serve with
    --secret-key-file FILE (or LEXGOLD_SECRET_KEY_FILE=FILE). Hosts serving one study share
    the same key: copy the file.

    \b
    Example:
        lexgold study secret study.sqlite
        lexgold study secret --out /etc/lexgold/secret.key
    """
    from lexgold.annotate.secret import default_key_file, write_key_file

    path = out_file or (default_key_file(study_db) if study_db else None)
    if path is None:
        raise click.ClickException("give --out FILE (a database URL has no folder to put the "
                                   "key in)")
    path = write_key_file(path, force=force)
    where = f"`lexgold serve {study_db}` reads it" if not out_file and study_db else \
        f"serve with --secret-key-file {path}"
    click.echo(f"session-signing key written to {path} (mode 0600): {where}")


def _echo_codes(report: dict, accept) -> None:
    """The codes and the entry links to give the platform (``<site>``: the served site)."""
    from lexgold.annotate.flow import ENTRY_NOTES, entry_links

    click.echo(f"completion code: {report['completion_code']}  screen-out code: "
               f"{report['screenout_code']}")
    for kind, link in entry_links("<site>/", {"platforms": list(accept)}).items():
        click.echo(f"entry link for {kind} ({ENTRY_NOTES[kind]}):\n  {link}")
    click.echo("  (<site>: the address `lexgold serve` is reached at, e.g. "
               "https://ratings.example.org; the admin view shows the links in full)")


@study.command()
@click.argument("study_db")
def report(study_db):
    """Print a study's codes, design report, progress per tranche and recruitment as JSON.

    Top-level keys: completion_code, screenout_code, design, progress, below_minimum.

    Progress rows also give the accepted raters (completed, not excluded by the protocol's
    [process.exclusions] rules) and how many are missing against [study]
    min_accepted_raters; "below_minimum" lists the tranches and pairs still short.

    \b
    Example:
        lexgold study report study.sqlite
    """
    from sqlalchemy import select

    from lexgold.annotate import models as m
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.recruit import recruitment
    from lexgold.annotate.schema import config_from_dict
    from lexgold.annotate.study import progress

    engine = open_study(study_db, read_only=True)     # a study it cannot write: read it
    with session_factory(engine, write=False)() as session:
        stored = session.scalars(select(m.Study)).one()
        design, config = stored.report, config_from_dict(stored.config)
        codes = stored.completion_code, stored.screenout_code
        table = progress(session)
        found = recruitment(session, config)
    tranches = found["tranches"]
    table = table.merge(tranches[["tranche", "excluded", "accepted", "missing"]], on="tranche")
    below = {"min_accepted_raters": found["min_accepted_raters"],
             "tranches": [int(t) for t in tranches.loc[tranches["missing"] > 0, "tranche"]],
             "pairs": found["pairs_below"].to_dict("records")}
    if found["note"]:
        below["note"] = found["note"]
    click.echo(json.dumps({"completion_code": codes[0], "screenout_code": codes[1],
                           "design": design, "progress": table.to_dict("records"),
                           "below_minimum": below}, indent=2, default=int))


@study.command("top-up")
@click.argument("study_db")
def top_up_command(study_db):
    """Add slots to tranches short of [study] min_accepted_raters accepted raters.

    The rating site does this by itself when the last open slot of a tranche is completed;
    run it by hand after changing the exclusion rules, or if the site was stopped at that
    moment. Adding is idempotent: a second run adds nothing.

    \b
    Example:
        lexgold study top-up study.sqlite
    """
    from sqlalchemy import select

    from lexgold.annotate import models as m
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.recruit import top_up
    from lexgold.annotate.schema import config_from_dict

    engine = open_study(study_db)
    with session_factory(engine)() as session:
        config = config_from_dict(session.scalars(select(m.Study.config)).one())
        added = top_up(session, config)
    engine.dispose()
    if config.min_accepted_raters <= 0:
        click.echo(f"{shown(study_db)}: no [study] min_accepted_raters: the slots are fixed")
    elif not added:
        click.echo(f"{shown(study_db)}: no tranche short of {config.min_accepted_raters} accepted "
                   "raters beyond its open slots")
    for tranche, count in added.items():
        click.echo(f"tranche {tranche}: {count} slot{'s' if count != 1 else ''} added")


@study.command("figures")
@click.argument("study_db")
@click.option("--watch", "watch_s", type=click.FloatRange(min=0.5), default=None,
              help="Keep refreshing every SECONDS (at most; stop with Ctrl-C), as `lexgold "
                   "serve` does in the background; for a host that serves with "
                   "--figures-every 0.")
@click.option("--force", is_flag=True, help="Recompute even if no answer came in since.")
def figures_command(study_db, watch_s, force):
    """Compute the figures the admin view shows (agreement, recruitment, exclusions, quality
    flags) and top up recruitment, as the server's background refresher does.

    They are recomputed only when answers or slots changed since they were stored (or with
    --force). Prints what was done as JSON.

    \b
    Example:
        lexgold study figures study.sqlite
        lexgold study figures "$LEXGOLD_DATABASE_URL" --watch 5
    """
    from lexgold.annotate import figures
    from lexgold.annotate.db import database_url, open_study, session_factory

    engine = open_study(study_db)
    if watch_s is not None:
        engine.dispose()
        try:
            figures.watch(database_url(study_db), watch_s)
        except KeyboardInterrupt:
            pass
        return
    with session_factory(engine, write=False)() as reads, session_factory(engine)() as writes:
        done = figures.refresh(reads, writes, force=force)
    engine.dispose()
    click.echo(json.dumps({"computed": done["computed"], "seconds": round(done["seconds"], 2),
                           "added": {str(k): v for k, v in done["added"].items()}}))


@study.command("export")
@click.argument("study_db")
@out_file_option("CSV file to write (long format, docs/contract.md).", dest="out_file")
@click.option("--complete-only/--all-raters", default=True, show_default=True,
              help="Only raters who finished their tranche (the default), or also those who "
                   "quit early (`lexgold process` then excludes them by its min_answers rule).")
def export_command(study_db, out_file, complete_only):
    """Export the raw ratings in the long format read by `lexgold agree` and `lexgold process`.

    By default only raters who finished their tranche are exported (--all-raters for all).
    Beside the CSV goes the study's description (ratings.csv -> ratings.study.json: its pairs,
    protocol, language pack and scale), which `lexgold process ratings.csv` reads, so that a
    pair of the study with no rating in the CSV is never released silently.

    \b
    Example:
        lexgold study export study.sqlite --out ratings.csv
    """
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.study import study_description, write_export
    from lexgold.process.source import description_path

    engine = open_study(study_db, read_only=True)     # a study it cannot write: read it
    Path(out_file).parent.mkdir(parents=True, exist_ok=True)
    with session_factory(engine, write=False)() as session, \
            open(out_file, "w", encoding="utf-8", newline="") as handle:
        answers, raters = write_export(session, handle, complete_only=complete_only)
        description = study_description(session)
    engine.dispose()
    sidecar = description_path(out_file)
    description["ratings"] = {"file": Path(out_file).name, "answers": answers,
                              "raters": raters, "complete_only": complete_only}
    sidecar.write_text(json.dumps(description, indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    click.echo(f"{answers} answers of {raters} raters -> {out_file} "
               f"(the study's {len(description['pairs'])} pairs and protocol -> {sidecar.name})")


@study.command("rehearse")
@click.argument("study_db", metavar="STUDY")
@crowd_options
@click.option("--arrivals-per-hour", type=click.FloatRange(min=0.01), default=120.0,
              show_default=True, help="Mean rate at which simulated raters arrive while the "
                                      "study has a place to give.")
@click.option("--max-raters", type=click.IntRange(min=1),
              help="Stop after this many raters (default: ten times the study's places).")
@click.option("--truth", "truth_path", type=click.Path(dir_okay=False),
              help="Also write each pair's true score to this CSV (and who was who to "
                   ".raters.csv beside it).")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def rehearse_command(study_db, arrivals_per_hour, max_raters, truth_path, seed, as_json,
                     **crowd):
    """Rehearse a study: simulated raters answer it through its own site.

    The raters (honest ones with bias and noise, spammers, quitters; see `lexgold simulate`)
    enter by the study's entry link, read its instructions, answer its checkpoints and
    qualification and rate its tranches through the site's own pages, on a simulated clock;
    the site recruits as it will for real (top-ups until [study] min_accepted_raters). Their
    answers are stored in the study like real ones, so rehearse a study no real rater has
    entered. Prints what the study needed: raters, top-ups, pages, simulated time.

    \b
    Example:
        lexgold study rehearse study.sqlite --seed 1
        lexgold process study.sqlite --out gold
    """
    import numpy as np
    from tqdm import tqdm

    from lexgold.annotate.db import database_url, open_study
    from lexgold.annotate.rehearse import rehearse
    from lexgold.process.simulate import Crowd

    open_study(study_db).dispose()           # one-line error for a missing / foreign database
    with tqdm(desc="places completed", unit="place", disable=True if as_json else None,
              leave=False, mininterval=1) as bar:
        def progress(entered, completed, total):
            bar.total = total
            bar.n = completed
            bar.set_postfix(raters=entered, refresh=False)
            bar.refresh()

        result = rehearse(database_url(study_db), rng=np.random.default_rng(seed),
                          crowd=Crowd(**crowd), arrivals_per_hour=arrivals_per_hour,
                          max_raters=max_raters, progress=progress)
    who, truth = result.pop("who"), result.pop("truth")
    if truth_path:
        Path(truth_path).parent.mkdir(parents=True, exist_ok=True)
        columns = ["word1", "word2", "truth"] if not (truth["topic"] != "").any() else \
            ["topic", "word1", "word2", "truth"]
        truth[columns].to_csv(truth_path, index=False)
        who.to_csv(Path(truth_path).with_suffix(".raters.csv"), index=False)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"rehearsal of {shown(study_db)}: {result['raters']} raters entered "
               f"({result['completed']} completed, {result['quit']} quit, "
               f"{result['screened_out']} screened out, {result['turned_away']} turned away "
               f"full, {result['expired']} lost their place by taking too long)")
    click.echo(f"places: {result['places']} at the start + {result['top_up_places']} topped "
               f"up; {result['pages']} pages answered in {result['requests']} requests")
    click.echo(f"simulated time: {result['simulated_hours']:g} h at {arrivals_per_hour:g} "
               f"arrivals per hour; {result['wall_seconds']:g} s here")
    if not result["finished"]:
        click.echo(f"stopped at --max-raters {result['raters']}: the study still has places "
                   "to fill")


@study.command("backup")
@click.argument("study_db", metavar="STUDY")
@click.argument("out_file", metavar="OUT")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def backup_command(study_db, out_file, force):
    """Copy a SQLite study into OUT, one self-contained file, safely while it is served.

    Uses SQLite's online backup API: the copy is one consistent snapshot, needs no -wal file
    and opens with lexgold like the study itself. A PostgreSQL study is backed up with
    pg_dump; given its URL, the command prints the pg_dump command line.

    \b
    Example:
        lexgold study backup study.sqlite backups/study-2026-03-01.sqlite
    """
    from lexgold.annotate.db import backup_study

    copy = backup_study(study_db, out_file, force=force)
    click.echo(f"{shown(study_db)} -> {copy['out']}: {copy['answers']} answers of {copy['raters']} "
               f"raters, {copy['bytes'] / 1e6:.1f} MB, one self-contained file")


#: the participant-ID column of each platform's own export
PARTICIPANT_COLUMNS = {"prolific": ("Participant id", "participant_id", "PROLIFIC_PID"),
                       "mturk": ("WorkerId", "workerId", "worker_id")}


@study.command("confirm")
@click.argument("study_db")
@click.option("--participants", type=click.Path(exists=True, dir_okay=False), required=True,
              help="The platform's participant list: Prolific's submissions export "
                   "('Participant id') or MTurk's batch results ('WorkerId').")
@click.option("--platform", type=click.Choice(["prolific", "mturk"]), default="prolific",
              show_default=True, help="The platform whose participant list --participants is.")
def confirm_command(study_db, participants, platform):
    """Mark raters whose platform ID is in the platform's own participant list as confirmed.

    The export's ``platform_confirmed`` column is 0 for every other rater (made-up IDs, bots,
    the anonymous link): check them before paying or keeping their ratings.

    \b
    Example:
        lexgold study confirm study.sqlite --participants prolific_export.csv
    """
    from lexgold.annotate.db import open_study, session_factory
    from lexgold.annotate.study import confirm_raters
    from lexgold.errors import InputError
    from lexgold.tables import read_text_table

    table = read_text_table(Path(participants))
    column = next((c for c in PARTICIPANT_COLUMNS[platform] if c in table.columns), None)
    if column is None:
        raise InputError(f"no participant ID column (expected one of "
                         f"{', '.join(PARTICIPANT_COLUMNS[platform])})", path=participants)
    engine = open_study(study_db)
    with session_factory(engine)() as session:
        counts = confirm_raters(session, platform, table[column])
    engine.dispose()
    click.echo(f"{counts['confirmed']} raters confirmed; {counts['unknown_in_list']} IDs of the "
               f"list never entered; {counts['unconfirmed_raters']} raters unconfirmed")


@study.command("upgrade")
@click.argument("study_db")
@click.option("--secret-key-file", type=click.Path(dir_okay=False),
              help="Key file `lexgold serve` reads (default: LEXGOLD_SECRET_KEY_FILE, or "
                   "STUDY.key next to a SQLite study): a study made before lexgold's revision "
                   "0010 holds its session-signing key, which the upgrade moves there for "
                   "14 days, so raters who started before the upgrade continue.")
def upgrade_command(study_db, secret_key_file):
    """Bring a study database made by an older lexgold to the current schema (Alembic).

    A study made before the key left the database (revision 0010): the key it held is kept
    in the key file for 14 days (the session lifetime), read only to find the raters of
    cookies it signed; raters who started before browser binding (revision 0005) are bound to
    their browser on their next visit. New cookies are signed with the key file's own key.

    \b
    Example:
        lexgold study upgrade study.sqlite
    """
    from lexgold.annotate.db import check_connects, database_url, make_engine, upgrade
    from lexgold.annotate.secret import find_key, how_to_make

    engine = make_engine(database_url(study_db, must_exist=True))
    check_connects(engine)
    old_key = _stored_key(engine)
    kept = _keep_stored_key(study_db, secret_key_file, old_key) if old_key else None
    upgrade(engine)
    engine.dispose()
    click.echo(f"{shown(study_db)}: schema up to date")
    if kept:
        click.echo(kept)
    elif old_key:
        click.echo("the session-signing key the study held is dropped: raters who started "
                   "before this upgrade start over (an upgrade given --secret-key-file FILE, "
                   "the file `lexgold serve` reads, keeps it there)")
    if find_key(study_db, secret_key_file) is None:     # revision 0010 dropped the study's
        click.echo("session cookies are signed with a key kept outside the database, and none "
                   f"is set for this study: {how_to_make(study_db)}")


def _stored_key(engine) -> str | None:
    """The session-signing key a study made before revision 0010 holds, else None."""
    from sqlalchemy import inspect, text

    with engine.connect() as connection:
        inspector = inspect(connection)
        if not inspector.has_table("study") or "secret_key" not in {
                column["name"] for column in inspector.get_columns("study")}:
            return None
        return connection.execute(text("SELECT secret_key FROM study")).scalar() or None


def _keep_stored_key(study_db: str, key_file: str | None, old_key: str) -> str | None:
    """Keep the key the study held in the key file `serve` will read (see `upgrade`); what
    was done, or None when there is no such file (the key is then in the environment, or the
    study is a database URL without a key file)."""
    from lexgold.annotate.secret import (
        ENV_KEY,
        default_key_file,
        keep_legacy_key,
        key_source,
    )

    path = key_file or key_source(study_db)
    if path == ENV_KEY:
        return None
    path = path or default_key_file(study_db)
    if path is None:
        return None
    made = not Path(path).exists()
    until = keep_legacy_key(path, old_key)
    return (f"session-signing key: {path} ({'new, readable by you only' if made else 'kept'}"
            f"); the key the study held is kept in it until {until:%Y-%m-%d %H:%M} UTC, read "
            "only from the cookies of raters who started before this upgrade (their places "
            "continue; a rater from before browser binding is bound on its next visit). Copy "
            "the file to every host serving the study")


@click.command()
@click.argument("study_db", metavar="[STUDY]", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option("--threads", type=click.IntRange(min=1), default=8, show_default=True,
              help="Threads per server process.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Server processes: 1 runs waitress; more run gunicorn (threaded workers). "
                   "All state is in the database, so any number of processes, or hosts, can "
                   "serve one study.")
@click.option("--connection-limit", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Open connections accepted at once (each rater's browser keeps one open).")
@click.option("--channel-timeout", type=click.IntRange(min=1), default=30, show_default=True,
              help="Seconds after which an idle or half-sent connection is closed (behind a "
                   "reverse proxy, keep it at or below the proxy's client timeouts).")
@click.option("--rate-limit", type=click.IntRange(min=0), default=30, show_default=True,
              help="New participants, and tranche places claimed, per client address and hour "
                   "(0: no limit). Behind a reverse proxy use --trusted-proxies.")
@click.option("--trusted-proxies", type=click.IntRange(min=0), default=0, show_default=True,
              help="Reverse proxies in front of the server whose X-Forwarded-For/-Proto/-Host "
                   "headers are trusted (0: none; 1: one nginx/Caddy in front). Client "
                   "addresses (login lock-out, rate limits) come from them.")
@click.option("--secure-cookies/--no-secure-cookies", default=None,
              help="Secure session cookies (default: on unless serving on loopback).")
@click.option("--check", is_flag=True,
              help="Start, fetch the entry page once, print the URL and status, and exit.")
@click.option("--figures-every", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Seconds between refreshes of the admin view's figures and recruitment "
                   "top-ups, in a background process (0: none here; run `lexgold study "
                   "figures --watch` on one host).")
@click.option("--secret-key-file", type=click.Path(dir_okay=False),
              help="File holding the session-signing key (`lexgold study secret`; default: "
                   "LEXGOLD_SECRET_KEY_FILE, LEXGOLD_SECRET_KEY, or STUDY.key next to a SQLite "
                   "study). Every host serving the study needs the same key.")
@click.option("--prolific-webhook-secret-file", type=click.Path(exists=True, dir_okay=False),
              help="File holding Prolific's webhook secret: enables POST /hooks/prolific "
                   "(default: LEXGOLD_PROLIFIC_WEBHOOK_SECRET; none: no webhook).")
def serve(study_db, host, port, threads, workers, connection_limit, channel_timeout, rate_limit,
          trusted_proxies, secure_cookies, check, figures_every, secret_key_file,
          prolific_webhook_secret_file):
    """Serve a study's rating site under waitress, or gunicorn with --workers N (production
    WSGI servers).

    STUDY omitted, or `env:`: the study's path or database URL is read from the environment
    variable LEXGOLD_DATABASE_URL, so a password in the URL never shows on the command line
    (where `ps` shows it to every user of the machine; deploy/lexgold.service reads it from
    its environment file).

    The admin password comes from LEXGOLD_ADMIN_PASSWORD (or a werkzeug hash in
    LEXGOLD_ADMIN_PASSWORD_HASH); without either, a random one is shown on the terminal (never
    in stdout or a log file; with no terminal the admin view stays off). Session cookies are
    signed with a key kept out of the study database (--secret-key-file); without one the
    server starts only on loopback with no proxy in front (or with --check), with a key for this
    run only: a restart then logs every rater and admin out.

    \b
    Example:
        lexgold serve study.sqlite --port 8000
        LEXGOLD_DATABASE_URL=postgresql+psycopg://u:pw@db/study lexgold serve --workers 4
    """
    from waitress.server import create_server
    from werkzeug.security import generate_password_hash

    from lexgold.annotate.app import create_app
    from lexgold.annotate.db import check_writable, database_url, open_study
    from lexgold.prolific.webhook import read_secret

    study_db = study_from_environment(study_db)
    engine = open_study(study_db)           # one-line error for a missing / foreign database
    try:
        check_writable(engine)              # ... and for one it cannot write (read-only)
    finally:
        engine.dispose()
    hook_secret = read_secret(prolific_webhook_secret_file)      # before anything starts
    db_url = database_url(study_db)
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not _is_loopback(host) and trusted_proxies == 0:      # slowloris reaches the app port
        click.echo(PUBLIC_WITHOUT_PROXY.format(host=host), err=True)
    secret_key = _secret_key(study_db, secret_key_file,
                             temporary_ok=check or (loopback and not trusted_proxies))
    password_hash, password_id = os.environ.get("LEXGOLD_ADMIN_PASSWORD_HASH"), None
    if not password_hash:
        password = os.environ.get("LEXGOLD_ADMIN_PASSWORD")
        if not password:
            password = secrets.token_urlsafe(12)
            if not _to_terminal(f"admin password (this run only): {password}"):
                password = None          # no terminal: never into a log file
                click.echo("admin view disabled (no terminal to show a random password on): "
                           "set LEXGOLD_ADMIN_PASSWORD or LEXGOLD_ADMIN_PASSWORD_HASH")
        password_hash = generate_password_hash(password) if password else None
        # every host hashes the plain password with its own salt: sessions name it by this
        password_id = hashlib.sha256(password.encode()).hexdigest() if password else None
    secure = (not loopback) if secure_cookies is None else secure_cookies
    settings = {"DATABASE_URL": db_url, "ADMIN_PASSWORD_HASH": password_hash,
                "SESSION_COOKIE_SECURE": secure, "TRUSTED_PROXIES": trusted_proxies,
                "RATE_LIMIT_PER_HOUR": rate_limit, "SECRET_KEY": secret_key,
                "ADMIN_PASSWORD_ID": password_id, **_legacy_key(study_db, secret_key_file),
                **({"PROLIFIC_WEBHOOK_SECRET": hook_secret} if hook_secret else {})}
    refresher = None
    if figures_every > 0 and not check:     # admin figures and top-ups, off the raters' path
        from lexgold.annotate.figures import start_refresher
        refresher = start_refresher(db_url, figures_every)
    if workers > 1 and not check:
        from lexgold.annotate.multiprocess import serve_workers
        if secure:
            click.echo("session cookies are Secure: serve behind HTTPS (or --no-secure-cookies)")

        def on_exit():
            _stop_refresher(refresher)
            _checkpoint(db_url, study_db)
        serve_workers(settings, study_db, host=host, port=port, workers=workers, threads=threads,
                      connection_limit=connection_limit, channel_timeout=channel_timeout,
                      on_exit=on_exit)
        return
    app = create_app(settings)
    # waitress drops X-Forwarded-* headers unless told otherwise; with trusted proxies the
    # app's ProxyFix reads them (only the last ``trusted_proxies`` hops are believed)
    server = create_server(app, host=host, port=port, threads=threads,
                           connection_limit=connection_limit, channel_timeout=channel_timeout,
                           cleanup_interval=min(30, max(1, channel_timeout // 2)),
                           clear_untrusted_proxy_headers=trusted_proxies == 0)
    url = f"http://{'localhost' if host in ('0.0.0.0', '::') else host}:{server.effective_port}/"
    click.echo(f"serving {shown(study_db)} at {url} (admin: {url}admin/)")
    if secure:
        click.echo("session cookies are Secure: serve behind HTTPS (or --no-secure-cookies)")
    if check:
        try:
            _check(server, url)
        finally:
            app.extensions["lexgold_engine"].dispose()
            _checkpoint(db_url, study_db)
        return
    previous = {number: signal.signal(number, _stop) for number in STOP_SIGNALS}
    try:
        server.run()        # returns on SIGTERM / SIGINT, the requests in progress finished
    finally:
        server.close()
        app.extensions["lexgold_engine"].dispose()
        _stop_refresher(refresher)
        _checkpoint(db_url, study_db)
        for number, handler in previous.items():
            signal.signal(number, handler)


PUBLIC_WITHOUT_PROXY = ("warning: listening on {host}, a public address, with no reverse proxy "
                        "(--trusted-proxies 0): slow clients can tie up every connection; put "
                        "nginx in front (deploy/README.md) and serve on 127.0.0.1")


def _stop_refresher(process) -> None:
    """Stop the figures refresher (:func:`lexgold.annotate.figures.start_refresher`)."""
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(10)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


#: signals that stop `lexgold serve` cleanly (systemd and `kill` send SIGTERM; Ctrl-C SIGINT)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _secret_key(study_db: str, key_file: str | None, temporary_ok: bool) -> str:
    """The session-signing key (:func:`lexgold.annotate.secret.find_key`), or one for this run
    only where that is allowed; else a one-line error saying how to make one."""
    from lexgold.annotate.secret import find_key, how_to_make, new_key

    found = find_key(study_db, key_file)
    if found is not None:
        click.echo(f"session-signing key: {found[1]}")
        return found[0]
    if not temporary_ok:
        raise click.ClickException(f"no session-signing key for a public server: "
                                   f"{how_to_make(study_db)}")
    click.echo("session-signing key: none set, one made for this run only (a restart logs "
               f"every rater and admin out; to keep one: {how_to_make(study_db)})")
    return new_key()


def _legacy_key(study_db: str, key_file: str | None) -> dict:
    """``LEGACY_SECRET_KEY`` and ``LEGACY_SECRET_UNTIL`` for ``create_app`` while the key file
    keeps the key the study held before revision 0010 (`study upgrade`), said once."""
    from lexgold.annotate.secret import ENV_KEY, key_source, read_legacy_key

    source = key_source(study_db, key_file)
    legacy = read_legacy_key(source) if source not in (None, ENV_KEY) else None
    if legacy is None:
        return {}
    click.echo(f"sessions signed with the key the study held before its upgrade: their raters "
               f"are found until {legacy[1]:%Y-%m-%d %H:%M} UTC")
    return {"LEGACY_SECRET_KEY": legacy[0], "LEGACY_SECRET_UNTIL": legacy[1]}


def _stop(_signum, _frame):
    """A stop signal: SystemExit in the main thread, which waitress's loop catches (it stops
    serving, lets the requests in progress finish, 5 s at most, and returns). Later stop
    signals are ignored, so nothing interrupts the checkpoint."""
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise SystemExit(0)


def _checkpoint(db_url: str, study_db: str) -> None:
    """On a clean stop: move a SQLite study's write-ahead log into the database file and say so
    (nothing for PostgreSQL)."""
    from lexgold.annotate.db import checkpoint_sqlite

    result = checkpoint_sqlite(db_url)
    if result is None:
        return
    busy, frames, done = result
    if busy:
        click.echo(f"stopped; {shown(study_db)}: checkpoint incomplete ({done} of {frames} log "
                   "frames; "
                   f"another process has the database open): keep {Path(study_db).name}-wal "
                   "with it", err=True)
    else:
        click.echo(f"stopped; {shown(study_db)}: write-ahead log checkpointed, the file alone "
                   "holds "
                   "the study")


def study_from_environment(study_db: str | None) -> str:
    """``study_db``; when it is omitted or ``env:``, LEXGOLD_DATABASE_URL (see ``serve``)."""
    if study_db not in (None, "env:"):
        return study_db
    value = os.environ.get("LEXGOLD_DATABASE_URL", "").strip()
    if not value:
        raise click.UsageError("no STUDY given and LEXGOLD_DATABASE_URL is not set (give the "
                               "study's path or URL, or set the variable)")
    return value


def _to_terminal(line: str) -> bool:
    """Write ``line`` to the controlling terminal only (not stdout: that may be a log file)."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(line + "\n")
        return True
    except OSError:
        return False


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
