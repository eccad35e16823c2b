"""``lexgold study ...``: create, inspect, export and manage a rating study (docs/annotate.md).

The commands stay thin: the work is in the study's modules (:mod:`lexgold.study.store`,
:mod:`lexgold.study.export_sql`, :mod:`lexgold.study.migrate` ...) and, for a live study's
recruitment and figures, in :mod:`lexgold.live`. ``study rehearse`` drives the rating site and
is defined with it (:mod:`lexgold.annotate.cli`); :mod:`lexgold.cli` attaches it to this group.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from lexgold.cliutil import (
    FiniteRange,
    beside,
    machine_options,
    out_file_option,
    plural,
    protocol_option,
    replacing,
    seed_option,
    study_target,
)


def _shown(study) -> str:
    """A study as printed: its path, or its URL without the password (loaded when used:
    start-up time)."""
    from lexgold.study.db import shown

    return shown(study)


class StudyCommand(click.Command):
    """A ``lexgold study`` command: a database error met while it runs (``database or disk
    is full``, a lost connection, a lock held too long) is one line naming the study, not a
    SQLAlchemy traceback; the transaction under way is rolled back by the database."""

    def invoke(self, ctx: click.Context):
        from sqlalchemy.exc import DBAPIError

        try:
            return super().invoke(ctx)
        except DBAPIError as err:
            from lexgold.errors import InputError, redact

            study_db = ctx.params.get("study_db") or ctx.params.get("db_option") \
                or ctx.params.get("study_positional") or "the study database"
            reason = redact(str(err.orig or err).strip().splitlines()[0])
            raise InputError(f"the database failed, so the command stopped: {reason}",
                             path=_shown(study_db)) from None


class StudyGroup(click.Group):
    """The ``lexgold study`` group: its commands are :class:`StudyCommand`."""

    command_class = StudyCommand


@click.group(cls=StudyGroup)
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
@click.option("--consent", type=click.Path(exists=True, dir_okay=False),
              help="A small TOML file of [study.consent] keys (contact, ethics_reference, "
                   "paragraphs) replacing the protocol's: the consent page's contact and "
                   "ethics approval.")
@machine_options("machine",
                 "A machine rater's ratings of the pairs (an LLM's, `lexgold machine rate`; "
                 "any CSV of word1, word2 and a number, with its FILE.json provenance): the "
                 "adaptive allocator gives top-up raters to the pairs it says more ratings "
                 "improve and stops the others (machine-allocate: every released score "
                 "stays a human mean). Needs [study] allocation = \"adaptive\".")
@click.option("--json", "as_json", is_flag=True, help="Print the full design report as JSON.")
def create(protocol, pairs, db, seed, name, completion_code, screenout_code, completion_url,
           accept, strict_ids, topics, consent, machine, machine_column, as_json):
    """Create a study from a protocol file and a pair set.

    Lays out tranches and groups (docs/annotate.md), stores the design, and prints the
    completion and screen-out codes, the entry links to give the platform, and what the design
    could not satisfy, summed up by kind (every item: --json, or `lexgold study report`).

    With --machine, an adaptive study's top-up tranches are chosen with a machine rater's
    ratings of the pairs (docs/annotate.md, "A machine rater").

    \b
    Example:
        lexgold study create --protocol simlex --pairs out/simlex/pairs.csv --db study.sqlite
    """
    from lexgold.process.config import process_config
    from lexgold.protocols import load_protocol
    from lexgold.study.config import load_study_config
    from lexgold.study.db import database_url
    from lexgold.study.store import create_study

    spec = load_protocol(protocol)
    if load_study_config(spec).min_accepted_raters > 0:   # recruitment runs these rules live
        process_config(spec)
    report = create_study(protocol, pairs, database_url(db), seed=seed, name=name,
                          completion_code=completion_code, screenout_code=screenout_code,
                          completion_url=completion_url, topics=topics, consent=consent,
                          entries={"platforms": list(accept or ("prolific", "mturk", "anonymous")),
                                   "strict_ids": strict_ids},
                          machine=machine, machine_column=machine_column)
    key_note = _study_key_file(db)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    if "balance" in report:                   # Best-Worst Scaling: the tuple design
        _echo_bws(db, report, accept, key_note)
        return
    sizes = sorted({row["showings"] for row in report["per_tranche"]})
    click.echo(f"study created in {_shown(db)}: {report['pairs']} pairs, {report['tranches']} "
               "tranches "
               f"({sizes[0]}-{sizes[-1]} showings each), {report['consistency']} consistency "
               f"pairs, {report['slots']} rater slots")
    skipped = {k: v for k, v in report.get("skipped_pairs", {}).items() if v}
    if skipped:
        click.echo("  not rated (aligned pair set): "
                   + ", ".join(f"{n} {flag} rows" for flag, n in skipped.items()))
    _echo_codes(report, accept or ("prolific", "mturk", "anonymous"))
    click.echo(key_note)
    _echo_consent(report["consent"], report["minutes"])
    if "machine" in report:
        _echo_machine(report["machine"])
    if report["unmet"]:
        click.echo(f"design notes ({len(report['unmet'])} constraints not met; each one in "
                   "--json and `lexgold study report`):")
    for line in report["unmet_summary"]:
        click.echo(f"  {line}")


def _echo_bws(db, report, accept, key_note) -> None:
    """What ``study create`` prints for a Best-Worst Scaling study (lexgold.study.bws)."""
    balance, pages = report["balance"], report["pages_per_tranche"]
    click.echo(f"study created in {_shown(db)}: {balance['items']} pairs in {balance['tuples']} "
               f"{report['tuple_size']}-tuples ({balance['occurrences_min']}-"
               f"{balance['occurrences_max']} tuples a pair), {report['tranches']} tranches "
               f"({min(pages)}-{max(pages)} pages each), {len(report['consistency_tuples'])} "
               f"consistency tuples, {report['slots']} rater slots")
    _echo_codes(report, accept or ("prolific", "mturk", "anonymous"))
    click.echo(key_note)
    _echo_consent(report["consent"], report["minutes"])
    if not balance["balanced"]:
        click.echo(f"design note: {balance['pairs_together_more_than_once']} pairs of pairs "
                   f"share more than one tuple (at most {balance['cooccurrence_max']}; the least "
                   f"possible is {balance['cooccurrence_floor']}); --json gives the balance")


def _echo_machine(machine: dict) -> None:
    """What ``study create --machine`` stored: the model, its file and coverage, the mode."""
    click.echo(f"machine rater: {machine['model'] or 'model not named (no provenance)'} "
               f"({machine['file']}, sha256 {machine['file_sha256'][:12]}) covers "
               f"{machine['pairs_covered']} of the study's {machine['pairs']} pairs; mode "
               "machine-allocate: it chooses which pairs get top-up raters and which stop, "
               "every released score stays a human mean")


def _echo_consent(consent: dict, minutes: str) -> None:
    """What the consent page names of [study.consent], and what it lacks; the time it states
    (the figure for the platform's time field too: one computation, ``expected_minutes``)."""
    click.echo(f"time a rater is told (consent page; the platform's estimated completion "
               f"time): {minutes} minutes")
    missing = [key for key in ("contact", "ethics_reference") if not consent[key]]
    if missing:
        click.echo(f"consent page: no {' and no '.join(missing)} given ([study.consent] in the "
                   "protocol, or --consent FILE; docs/protocols.md)")
    else:
        click.echo(f"consent page: contact {consent['contact']}; ethics approval "
                   f"{consent['ethics_reference']}")


def _study_key_file(study_db: str) -> str:
    """Make a SQLite study's session-signing key file (kept if it exists); says where it is."""
    from lexgold.study.secret import default_key_file, how_to_make, write_key_file

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
    from lexgold.study.secret import default_key_file, write_key_file

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
    from lexgold.study.entries import ENTRY_NOTES, entry_links

    click.echo(f"completion code: {report['completion_code']}  screen-out code: "
               f"{report['screenout_code']}")
    for kind, link in entry_links("<site>/", {"platforms": list(accept)}).items():
        click.echo(f"entry link for {kind} ({ENTRY_NOTES[kind]}):\n  {link}")
    click.echo("  (<site>: the address `lexgold serve` is reached at, e.g. "
               "https://ratings.example.org; the admin view shows the links in full)")


@study.command()
@click.argument("study_db")
@click.option("--json", "as_json", is_flag=True,
              help="Print everything as JSON (the codes, the design report, progress per "
                   "tranche, below_minimum) instead of the summary.")
def report(study_db, as_json):
    """Print a study's progress: places completed, accepted raters, the tranches and pairs still
    short, intake and codes; with --json, everything as JSON for a script.

    JSON top-level keys: completion_code, screenout_code, design, progress, below_minimum.
    Progress rows also give the accepted raters (completed, not excluded by the protocol's
    [process.exclusions] rules) and how many are missing against [study]
    min_accepted_raters; "below_minimum" lists the tranches and pairs still short.

    \b
    Example:
        lexgold study report study.sqlite
        lexgold study report study.sqlite --json
    """
    from sqlalchemy import select

    from lexgold.study import models as m
    from lexgold.study.db import open_study, session_factory, shown
    from lexgold.live.tally import recruitment
    from lexgold.study.config import config_from_dict
    from lexgold.study.intake import read_intake
    from lexgold.study.store import progress

    engine = open_study(study_db, read_only=True)     # a study it cannot write: read it
    with session_factory(engine, write=False)() as session:
        stored = session.scalars(select(m.Study)).one()
        design, config = stored.report, config_from_dict(stored.config)
        codes = stored.completion_code, stored.screenout_code
        name, intake = stored.name, read_intake(session)
        table = progress(session)
        found = recruitment(session, config)
    tranches = found["tranches"]
    table = table.merge(tranches[["tranche", "excluded", "accepted", "missing"]], on="tranche")
    below = {"min_accepted_raters": found["min_accepted_raters"],
             "tranches": [int(t) for t in tranches.loc[tranches["missing"] > 0, "tranche"]],
             "pairs": found["pairs_below"].to_dict("records")}
    if found["note"]:
        below["note"] = found["note"]
    data = {"completion_code": codes[0], "screenout_code": codes[1], "design": design,
            "progress": table.to_dict("records"), "below_minimum": below}
    if as_json:
        click.echo(json.dumps(data, indent=2, default=int))
        return
    for line in _report_summary(data, name=name, study=shown(study_db), intake=intake):
        click.echo(line)


def _report_summary(data: dict, *, name: str, study: str, intake) -> list[str]:
    """``study report``'s lines for a person, from the dictionary ``--json`` prints."""
    from lexgold.study.intake import describe_intake

    rows, below = data["progress"], data["below_minimum"]
    total = {key: sum(int(row[key]) for row in rows)
             for key in ("target", "completed", "active", "expired", "accepted", "excluded")}
    minimum = below["min_accepted_raters"]
    if minimum:
        short = below["tranches"]
        still, done = f"short of {minimum:,} accepted raters", f"{minimum:,} accepted raters"
    else:                                  # no minimum: a tranche is short of its places
        short = [row["tranche"] for row in rows if row["completed"] < row["target"]]
        still, done = "with places still open", "every place completed"
    if total["completed"] >= total["target"]:
        taking = "none: every place is completed"
    else:
        taking = describe_intake(intake)
    lines = [f"study {name!r} ({study})",
             f"{total['completed']:,} of {total['target']:,} places completed; "
             f"{plural(total['active'], 'rater')} rating now, "
             f"{plural(total['expired'], 'claim')} expired",
             f"accepted raters: {total['accepted']:,} ({total['excluded']:,} excluded by the "
             f"protocol's [process.exclusions] rules)",
             (f"{len(short):,} of {len(rows):,} tranches {still}: " + _numbers(short)
              if short else f"all {len(rows):,} tranches have {done}")]
    if minimum:
        lines.append(f"{len(below['pairs']):,} pairs below {minimum:,} accepted raters"
                     if below["pairs"] else f"every pair has {minimum:,} accepted raters")
    lines += [f"new raters: {taking}",
              f"codes: completion {data['completion_code']}, screen-out "
              f"{data['screenout_code']}"]
    if below.get("note"):
        lines.append(f"note: {below['note']}")
    lines.append(f"per tranche and the design report, as JSON: lexgold study report "
                 f"{study} --json")
    return lines


def _numbers(numbers: list[int], most: int = 12) -> str:
    """``1, 2, 3, ... (40 more)``: at most ``most`` numbers of a list."""
    shown = ", ".join(str(n) for n in numbers[:most])
    return shown + (f" ... ({len(numbers) - most:,} more)" if len(numbers) > most else "")


@study.command("top-up")
@click.argument("study_db")
def top_up_command(study_db):
    """Add slots to tranches short of [study] min_accepted_raters accepted raters.

    The rating site does this by itself when the last open slot of a tranche is completed;
    run it by hand after changing the exclusion rules, or if the site was stopped at that
    moment. Adding is idempotent: a second run adds nothing. With [study] allocation =
    "adaptive", also adds the next top-up tranche of the least precise pairs once no slot is
    open (or says why not: target reached, budget spent).

    \b
    Example:
        lexgold study top-up study.sqlite
    """
    from sqlalchemy import select

    from lexgold.study import models as m
    from lexgold.study.db import open_study, session_factory
    from lexgold.live.allocator import allocate, describe_allocation
    from lexgold.live.recruit import top_up
    from lexgold.study.config import config_from_dict

    engine = open_study(study_db)
    with session_factory(engine)() as session:
        config = config_from_dict(session.scalars(select(m.Study.config)).one())
        added = top_up(session, config)
        step = allocate(session, config) if config.allocation == "adaptive" else None
    engine.dispose()
    if step is not None:
        click.echo(f"{_shown(study_db)}: adaptive allocation: {describe_allocation(step)}")
    if config.min_accepted_raters <= 0 and step is None:
        click.echo(f"{_shown(study_db)}: no [study] min_accepted_raters: the slots are fixed")
    elif not added:
        click.echo(f"{_shown(study_db)}: no tranche short of {config.min_accepted_raters} accepted "
                   "raters beyond its open slots")
    for tranche, count in added.items():
        click.echo(f"tranche {tranche}: {count} slot{'s' if count != 1 else ''} added")


@study.command("figures")
@click.argument("study_db")
@click.option("--watch", "watch_s", type=FiniteRange(min=0.5), default=None,
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
    from lexgold.live import refresher
    from lexgold.study.db import database_url, open_study, session_factory

    engine = open_study(study_db)
    if watch_s is not None:
        engine.dispose()
        try:
            refresher.watch(database_url(study_db), watch_s)
        except KeyboardInterrupt:
            pass
        return
    with session_factory(engine, write=False)() as reads, session_factory(engine)() as writes:
        done = refresher.refresh(reads, writes, force=force)
    engine.dispose()
    click.echo(json.dumps({"computed": done["computed"], "seconds": round(done["seconds"], 2),
                           "added": {str(k): v for k, v in done["added"].items()}}))


@study.command("preview-link")
@click.argument("study_db", metavar="STUDY")
@click.option("--days", type=FiniteRange(min=0, min_open=True, max=365), default=7.0,
              show_default=True, help="How long the link works.")
@click.option("--url", "site", default="<site>", show_default=True,
              help="The address the study is served at (e.g. https://ratings.example.org).")
@click.option("--revoke", is_flag=True, help="Revoke every live preview link instead.")
@click.option("--secret-key-file", type=click.Path(dir_okay=False), default=None,
              help="Key file `lexgold serve` reads (default: LEXGOLD_SECRET_KEY_FILE, "
                   "LEXGOLD_SECRET_KEY, or STUDY.key next to a SQLite study).")
def preview_link_command(study_db, days, site, revoke, secret_key_file):
    """Make a link that shows the study as a rater sees it, to share (a collaborator, an
    ethics board): no admin password, nothing stored, no place taken; it works for --days
    days or until revoked (here with --revoke, or in the admin view).

    The link is signed with the session-signing key `lexgold serve` uses: make it with the
    same key.

    \b
    Example:
        lexgold study preview-link study.sqlite --days 7 --url https://ratings.example.org
        lexgold study preview-link study.sqlite --revoke
    """
    from lexgold.study import preview_links
    from lexgold.study.clock import database_now
    from lexgold.study.db import open_study, session_factory
    from lexgold.study.secret import find_key, how_to_make

    engine = open_study(study_db)
    try:
        with session_factory(engine)() as session:
            at = database_now(session)
            if revoke:
                count = preview_links.revoke(session, at)
                click.echo(f"{plural(count, 'preview link')} revoked")
                return
            found = find_key(study_db, secret_key_file)
            if found is None:
                raise click.ClickException(f"no session-signing key: {how_to_make(study_db)}")
            link = preview_links.make(session, found[0], at, days)
    finally:
        engine.dispose()
    click.echo(f"preview link {link.id}, valid until {link.expires_at:%Y-%m-%d %H:%M} UTC:\n"
               f"  {site.rstrip('/')}/preview/{link.token}")
    if site == "<site>":
        click.echo("  (<site>: the address `lexgold serve` is reached at; --url fills it in)")


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
    # no pandas on a slider study's path (start-up time): the database writes it
    from lexgold.study.db import open_study, session_factory
    from lexgold.study.export_sql import study_description, write_study_export

    engine = open_study(study_db, read_only=True)     # a study it cannot write: read it
    Path(out_file).parent.mkdir(parents=True, exist_ok=True)
    sidecar = beside(out_file, Path(out_file).stem + ".study.json")  # description_path
    with session_factory(engine, write=False)() as session, \
            replacing(out_file, encoding="utf-8", newline="", buffering=1 << 20) as handle:
        written = write_study_export(session, handle, complete_only=complete_only)
        if written is None:                           # a Best-Worst study: through pandas
            from lexgold.study.export import write_export

            written = write_export(session, handle, complete_only=complete_only)
        answers, raters = written
        description = study_description(session)
    engine.dispose()
    description["ratings"] = {"file": Path(out_file).name, "answers": answers,
                              "raters": raters, "complete_only": complete_only}
    with replacing(sidecar, encoding="utf-8") as handle:
        handle.write(json.dumps(description, indent=1, ensure_ascii=False) + "\n")
    click.echo(f"{plural(answers, 'answer')} of {plural(raters, 'rater')} -> {out_file} "
               f"(the study's {len(description['pairs'])} pairs and protocol -> {sidecar.name})")


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
    from lexgold.study.db import backup_study

    copy = backup_study(study_db, out_file, force=force)
    click.echo(f"{_shown(study_db)} -> {copy['out']}: {plural(copy['answers'], 'answer')} of "
               f"{plural(copy['raters'], 'rater')}, {copy['bytes'] / 1e6:.1f} MB, one "
               f"self-contained file")


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
    from lexgold.study.db import open_study, session_factory
    from lexgold.study.store import confirm_raters
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


def _set_intake(study_db: str, state: str, stop_now: bool) -> None:
    from lexgold.study.db import open_study, session_factory
    from lexgold.study.intake import describe_intake, set_intake

    engine = open_study(study_db)
    with session_factory(engine)() as session:
        found = set_intake(session, state, stop_current=stop_now)
    engine.dispose()
    click.echo(f"{_shown(study_db)}: {describe_intake(found)}")


_current_option = click.option(
    "--let-finish/--stop-now", "let_finish", default=True, show_default=True,
    help="Raters already in (consented, not finished) may finish their tranche, or are "
         "stopped now (their answers so far are kept).")


@study.command("pause")
@click.argument("study_db", metavar="STUDY")
@_current_option
def pause_command(study_db, let_finish):
    """Take no new raters for now: they see a page saying the study is paused.

    The running site follows within seconds; `lexgold study resume` takes raters again.

    \b
    Example:
        lexgold study pause study.sqlite
    """
    _set_intake(study_db, "paused", not let_finish)


@study.command("resume")
@click.argument("study_db", metavar="STUDY")
def resume_command(study_db):
    """Take new raters again (a paused or closed study), and let every rater carry on.

    \b
    Example:
        lexgold study resume study.sqlite
    """
    _set_intake(study_db, "open", False)


@study.command("close")
@click.argument("study_db", metavar="STUDY")
@_current_option
def close_command(study_db, let_finish):
    """Take no more raters: they see a page saying the study has closed.

    \b
    Example:
        lexgold study close study.sqlite --let-finish
    """
    _set_intake(study_db, "closed", not let_finish)


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
    from lexgold.study.migrate import upgrade_study
    from lexgold.study.secret import how_to_make

    done = upgrade_study(study_db, secret_key_file)
    click.echo(f"{_shown(study_db)}: schema up to date")
    if done.sessions_cleared:
        click.echo(f"{done.sessions_cleared} raters' own-link session IDs were dropped (no key "
                   "to hash them with): they can move to another browser only by the admin "
                   "view's link")
    if done.kept:
        kept = done.kept
        click.echo(f"session-signing key: {kept.path} ("
                   f"{'new, readable by you only' if kept.made else 'kept'}); the key the study "
                   f"held is kept in it until {kept.until:%Y-%m-%d %H:%M} UTC, read only from "
                   "the cookies of raters who started before this upgrade (their places "
                   "continue; a rater from before browser binding is bound on its next visit). "
                   "Copy the file to every host serving the study")
    elif done.held_key:
        click.echo("the session-signing key the study held is dropped: raters who started "
                   "before this upgrade start over (an upgrade given --secret-key-file FILE, "
                   "the file `lexgold serve` reads, keeps it there)")
    if not done.key_found:     # revision 0010 dropped the study's
        click.echo("session cookies are signed with a key kept outside the database, and none "
                   f"is set for this study: {how_to_make(study_db)}")
