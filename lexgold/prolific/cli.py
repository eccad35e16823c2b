"""``lexgold prolific sync|review|bonus``: a study's Prolific submissions from Prolific's API.

Every command is a dry run unless given ``--apply``: it prints what it would do and changes
nothing on Prolific (``sync`` changes only the study's ``confirmed`` marks, as ``lexgold study
confirm`` does).
"""

from __future__ import annotations

import json
import math

import click

from lexgold.cliutil import FiniteRange


def _prolific_options(function):
    options = [
        click.argument("study_db", metavar="STUDY"),
        click.option("--prolific-study", metavar="ID",
                     help="The Prolific study's ID (its STUDY_ID; default: the one every "
                          "Prolific rater entered with)."),
        click.option("--api-url", envvar="LEXGOLD_PROLIFIC_API_URL", metavar="URL",
                     help="Base URL of Prolific's API (env LEXGOLD_PROLIFIC_API_URL; default "
                          "https://api.prolific.com). The token is read from "
                          "PROLIFIC_API_TOKEN."),
        click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _apply_option(what: str):
    return click.option("--apply", is_flag=True,
                        help=f"{what} (default: a dry run that changes nothing on Prolific).")


@click.group()
def prolific():
    """A study's Prolific submissions through Prolific's API (token in PROLIFIC_API_TOKEN).

    STUDY is the study database: a SQLite file path or a database URL.

    \b
    Example:
        lexgold prolific sync study.sqlite --prolific-study 60d9aadeb86739de712faee0
    """


def _open(study_db: str, prolific_study: str | None, api_url: str | None):
    from lexgold.study.db import open_study, session_factory
    from lexgold.errors import InputError
    from lexgold.prolific.client import Client
    from lexgold.prolific.review import default_prolific_study

    client = Client(base_url=api_url)
    engine = open_study(study_db)
    session = session_factory(engine)()
    study = prolific_study or default_prolific_study(session)
    if not study:
        session.close()
        engine.dispose()
        raise InputError("give the Prolific study's ID (its raters did not enter with one "
                         "STUDY_ID)", field="--prolific-study")
    return engine, session, client, study


@prolific.command("sync")
@_prolific_options
def sync_command(study_db, prolific_study, api_url, as_json):
    """Pull the Prolific study's submissions, mark their raters confirmed and list mismatches.

    The same marks as `lexgold study confirm --participants prolific_export.csv`; the
    mismatches are participants who submitted without finishing on the site, finished without
    submitting, submitted without ever entering the site, and site raters with a Prolific ID
    that has no submission in the study.

    \b
    Example:
        lexgold prolific sync study.sqlite --prolific-study 60d9aadeb86739de712faee0
    """
    from lexgold.prolific.review import sync

    engine, session, client, study = _open(study_db, prolific_study, api_url)
    try:
        found = sync(session, client.submissions(study))
    finally:
        session.close()
        engine.dispose()
    if as_json:
        click.echo(json.dumps({"prolific_study": study, **found}, indent=2))
        return
    statuses = ", ".join(f"{n} {s}" for s, n in found["by_status"].items()) or "none"
    click.echo(f"{found['submissions']} submissions in Prolific study {study} ({statuses})")
    click.echo(f"{found['confirmed']} raters confirmed; {found['unconfirmed_raters']} raters "
               f"unconfirmed")
    for name, ids in found["mismatches"].items():
        shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
        click.echo(f"{name.replace('_', ' ')}: {len(ids)}" + (f" ({shown})" if ids else ""))


@prolific.command("review")
@_prolific_options
@click.option("--study-minutes", type=FiniteRange(min=0), default=None,
              help="The study's length in minutes for Prolific's attention-check rule "
                   "(default: the median time of the raters who completed it).")
@_apply_option("Approve, reject and ask for returns on Prolific, recorded in the study")
def review_command(study_db, prolific_study, api_url, as_json, study_minutes, apply):
    """Propose approve / reject / return for each submission awaiting review.

    Approve who completed the study (excluded from the gold or not: exclusion is no
    rejection); reject only for failed checkpoints (attention checks): one failed in a study
    under 5 minutes, two in a longer one; ask for a return who did not finish, was screened
    out or never reached the site. A dry run unless --apply; an action recorded in the study
    is never taken twice.

    \b
    Example:
        lexgold prolific review study.sqlite --prolific-study 60d9aadeb86739de712faee0
    """
    from lexgold.study.clock import database_now
    from lexgold.prolific.review import (
        apply_review,
        done_submissions,
        propose,
        site_raters,
        submissions_frame,
    )
    from lexgold.prolific.review import study_minutes as median_minutes

    engine, session, client, study = _open(study_db, prolific_study, api_url)
    try:
        submissions = submissions_frame(client.submissions(study))
        raters = site_raters(session)
        minutes = median_minutes(raters) if study_minutes is None else study_minutes
        proposals = propose(submissions, raters, minutes, done_submissions(session))
        counts = apply_review(session, client, study, proposals, database_now(session)) \
            if apply else None
    finally:
        session.close()
        engine.dispose()
    if as_json:
        click.echo(json.dumps({"prolific_study": study,
                               "study_minutes": None if math.isnan(minutes) else minutes,
                               "proposals": proposals.to_dict("records"), "applied": counts},
                              indent=2))
        return
    for row in proposals.itertuples(index=False):
        if row.action != "none":
            click.echo(f"{row.action:8} {row.participant_id} ({row.submission_id}): {row.reason}")
    tally = proposals["action"].value_counts()
    click.echo(", ".join(f"{int(tally.get(a, 0))} {a}" for a in ("approve", "reject", "return",
                                                                 "none"))
               + (" (study length unknown: nobody completed it)" if math.isnan(minutes)
                  else f" (study length {minutes:.1f} min)"))
    if counts is None:
        click.echo("dry run: nothing changed on Prolific (--apply performs it)")
    else:
        click.echo(f"applied: {counts['approve']} approved, {counts['reject']} rejected, "
                   f"{counts['return']} returns asked, {counts['failed']} failed (tried again "
                   f"next time), {counts['skipped']} already done")
        if counts["failed"]:
            raise click.ClickException(f"{counts['failed']} actions failed on Prolific's API; "
                                       f"run the command again to retry them")


@prolific.command("bonus")
@_prolific_options
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Bonuses to pay: a CSV with participant_id and amount (e.g. 0.50) columns.")
@click.option("--rule", metavar="RULE",
              help="Bonuses by rule: completed=AMOUNT (completed on the site and submitted, "
                   "not rejected) or approved=AMOUNT (APPROVED submissions).")
@click.option("--label", help="Name of the bonus batch: a participant is paid once per batch "
                              "(default: from the participants and amounts).")
@click.option("--max-amount", default="10.00", show_default=True,
              help="Largest bonus accepted per participant (a typo guard).")
@_apply_option("Set up and pay the bonuses on Prolific, recorded in the study")
def bonus_command(study_db, prolific_study, api_url, as_json, csv_path, rule, label,
                  max_amount, apply):
    """Pay bonuses from a CSV or a rule, as one bulk bonus payment; a dry run first.

    Participants already paid in the same batch (--label) are left out, so running it again
    pays nobody twice.

    \b
    Example:
        lexgold prolific bonus study.sqlite --rule completed=0.50
        lexgold prolific bonus study.sqlite --rule completed=0.50 --apply
    """
    from lexgold.study.clock import database_now
    from lexgold.errors import InputError
    from lexgold.prolific.review import (
        apply_bonuses,
        bonus_csv,
        bonus_label,
        bonus_rule,
        cents,
        plan_bonuses,
        site_raters,
        submissions_frame,
    )

    if (csv_path is None) == (rule is None):
        raise click.UsageError("give --csv FILE or --rule RULE (one of them)")
    maximum = cents(max_amount, where="--max-amount", maximum=10 ** 9)
    amounts = bonus_csv(csv_path, maximum=maximum) if csv_path else None
    engine, session, client, study = _open(study_db, prolific_study, api_url)
    try:
        submissions = submissions_frame(client.submissions(study))
        if amounts is None:
            amounts = bonus_rule(rule, submissions, site_raters(session), maximum=maximum)
            if not amounts:
                raise InputError(f"rule {rule!r} chooses nobody", field="--rule")
        batch = bonus_label(amounts, label)
        todo, before = plan_bonuses(session, amounts, submissions, batch)
        paid = apply_bonuses(session, client, study, todo, batch, database_now(session)) \
            if apply and todo else None
    finally:
        session.close()
        engine.dispose()
    total = sum(todo.values())
    if as_json:
        click.echo(json.dumps({"prolific_study": study, "label": batch, "to_pay": todo,
                               "paid_before": before, "applied": paid}, indent=2))
        return
    for pid, amount in todo.items():
        click.echo(f"bonus {pid}: {amount / 100:.2f}")
    click.echo(f"batch {batch}: {len(todo)} bonuses, {total / 100:.2f} in all (before "
               f"Prolific's fees); {len(before)} paid in this batch before")
    if paid is None:
        click.echo("dry run: nothing paid (--apply pays)" if todo else "nothing to pay")
    else:
        click.echo(f"paid: {paid['paid']} bonuses as bulk payment {paid['bulk_id']}")
