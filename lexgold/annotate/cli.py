"""``lexgold serve`` (its start-up logic: :mod:`lexgold.annotate.server`) and ``lexgold study
rehearse``, which drives the site (:mod:`lexgold.annotate.rehearse`; :mod:`lexgold.cli` attaches
it to the ``study`` group of :mod:`lexgold.study.cli`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from lexgold.annotate.server import serve_study, shown
from lexgold.cliutil import (
    FiniteRange,
    beside,
    crowd_options,
    progress_bar,
    quiet_option,
    refuse_links,
    seed_option,
    ticking,
)


@click.command("rehearse")
@click.argument("study_db", metavar="STUDY")
@crowd_options
@click.option("--arrivals-per-hour", type=FiniteRange(min=0.01), default=120.0,
              show_default=True, help="Mean rate at which simulated raters arrive while the "
                                      "study has a place to give.")
@click.option("--max-raters", type=click.IntRange(min=1),
              help="Stop after this many raters have entered (default: ten times the "
                   "study's places): a quick rehearsal, e.g. --max-raters 30 to see the site "
                   "run and make a small release (`lexgold process ... --allow-incomplete`).")
@click.option("--truth", "truth_path", type=click.Path(dir_okay=False), callback=refuse_links,
              help="Also write each pair's true score to this CSV (and who was who to "
                   ".raters.csv beside it).")
@click.option("--across-crowds", is_flag=True,
              help="Rehearse temporary copies of the study (SQLite) once per shipped crowd "
                   "(default, simverb, wordsim353, danish, card660), release each as `lexgold "
                   "process` would, and print each crowd's figures and their range; the "
                   "study itself is left as it was.")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@quiet_option
@click.pass_context
def rehearse_command(ctx, study_db, arrivals_per_hour, max_raters, truth_path, across_crowds,
                     seed, as_json, quiet, **crowd):
    """Rehearse a study: simulated raters answer it through its own site.

    The raters (honest ones drawn from the crowd model, --crowd, fitted to real rating
    logs; spammers, quitters; see `lexgold simulate`)
    enter by the study's entry link, read its instructions, answer its checkpoints and
    qualification and rate its tranches through the site's own pages, on a simulated clock;
    the site recruits as it will for real (top-ups until [study] min_accepted_raters; with
    [study] allocation = "adaptive", top-up tranches of the least precise pairs). Their
    answers are stored in the study like real ones, so rehearse a study no real rater has
    entered, but with platform "simulated" (no Prolific command takes them for participants;
    a release built from them says it is simulated), and their times end at the real time of
    the run (never in the future). Prints what the study needed: raters, top-ups, pages,
    simulated time. On a terminal, a bar on stderr shows the places completed, the raters
    who entered and the time left (--quiet: none). A whole SimLex study takes minutes;
    --max-raters N stops early for a quick look (its release needs --allow-incomplete).

    --across-crowds answers with the range across real crowds instead of one crowd's point:
    the study is copied and rehearsed once per shipped crowd (same seed), each copy processed
    with --allow-incomplete; printed per crowd and as the range (lowest - highest): raters,
    screened out, top-up places, pages, simulated hours, pairs released, fewest accepted
    raters of a pair, raters excluded, IAA-1 and IAA-2. The study is not changed.

    \b
    Example:
        lexgold study rehearse study.sqlite --seed 1
        lexgold process study.sqlite --out gold
        lexgold study rehearse study.sqlite --across-crowds --max-raters 60 --seed 1
    """
    import numpy as np

    from lexgold.study.db import database_url, open_study
    from lexgold.annotate.rehearse import rehearse
    from lexgold.crowd.simulate import Crowd

    if across_crowds:                        # a PostgreSQL study: refused before connecting
        from lexgold.annotate.across import sqlite_file
        sqlite_file(study_db)
    open_study(study_db).dispose()           # one-line error for a missing / foreign database
    if across_crowds:
        _across(ctx, study_db, arrivals_per_hour, max_raters, truth_path, seed, as_json,
                quiet, crowd)
        return
    bar = progress_bar(quiet or as_json, desc="rehearsal",
                       bar_format="{desc}: {n_fmt}/{total_fmt} "
                                  + ("raters done" if max_raters else "places completed")
                                  + " [{elapsed}<{remaining}{postfix}]")
    with ticking(bar):
        result = rehearse(database_url(study_db), rng=np.random.default_rng(seed),
                          crowd=Crowd(**crowd), arrivals_per_hour=arrivals_per_hour,
                          max_raters=max_raters, progress=rehearsal_progress(bar, max_raters))
    who, truth = result.pop("who"), result.pop("truth")
    if truth_path:
        Path(truth_path).parent.mkdir(parents=True, exist_ok=True)
        columns = ["word1", "word2", "truth"] if not (truth["topic"] != "").any() else \
            ["topic", "word1", "word2", "truth"]
        truth[columns].to_csv(truth_path, index=False)
        who.to_csv(beside(truth_path, Path(truth_path).with_suffix(".raters.csv").name),
                   index=False)
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
    if result["machine"]:
        machine = result["machine"]
        click.echo(f"{machine['mode']} ({machine['model'] or 'model not named'}, "
                   f"{machine['pairs_covered']} pairs covered) chose the top-ups of these "
                   "simulated raters (figures simulated, not measured on people); last step: "
                   f"{machine['status'] or 'none'}, {machine['stopped'] or 0} pairs given no "
                   "more raters; released scores are human means")
    if not result["finished"]:
        click.echo(f"stopped at --max-raters {result['raters']}: the study still has places "
                   "to fill; `lexgold process` releases the pairs rated so far only with "
                   "--allow-incomplete")


def _across(ctx, study_db, arrivals_per_hour, max_raters, truth_path, seed, as_json, quiet,
            crowd) -> None:
    """``study rehearse --across-crowds`` (:mod:`lexgold.annotate.across`)."""
    from click.core import ParameterSource

    from lexgold.annotate.across import rehearse_across
    from lexgold.errors import InputError

    if ctx.get_parameter_source("model") is ParameterSource.COMMANDLINE:
        raise InputError("--across-crowds rehearses every shipped crowd; --crowd chooses one: "
                         "give one of them", field="--crowd")
    if truth_path:
        raise InputError("--truth writes one rehearsal's true scores; --across-crowds makes "
                         "one per crowd: give one of them", field="--truth")
    crowd.pop("model")
    bars = []

    def progress_for(name):
        bar = progress_bar(quiet or as_json, desc=f"rehearsal, crowd {name}",
                           bar_format="{desc}: {n_fmt}/{total_fmt} "
                                      + ("raters done" if max_raters else "places completed")
                                      + " [{elapsed}<{remaining}{postfix}]")
        bars.append(bar)
        return rehearsal_progress(bar, max_raters)

    try:
        result = rehearse_across(study_db, seed=seed, crowd_keys=crowd,
                                 arrivals_per_hour=arrivals_per_hour, max_raters=max_raters,
                                 progress_for=progress_for)
    finally:
        for bar in bars:
            bar.close()
    result = {"study": shown(study_db), "seed": seed, "max_raters": max_raters,
              "arrivals_per_hour": arrivals_per_hour, "simulated": True, **result}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for line in across_lines(result):
        click.echo(line)


#: the columns of ``--across-crowds``' table: figure, heading, format
ACROSS_COLUMNS = (("raters", "raters", "d"), ("screened_out", "screened", "d"),
                  ("top_up_places", "top-ups", "d"), ("pages", "pages", "d"),
                  ("simulated_hours", "hours", ".1f"), ("released_pairs", "released", "d"),
                  ("fewest_accepted_raters", "fewest", "d"),
                  ("excluded_raters", "excluded", "d"), ("iaa1", "IAA-1", ".3f"),
                  ("iaa2", "IAA-2", ".3f"))


def across_lines(result: dict) -> list[str]:
    """What ``study rehearse --across-crowds`` prints: a row per crowd, then the range."""
    def cell(value, form):
        return "n/a" if value is None else format(value, form)

    def span(entry, form):
        if entry is None:
            return "n/a"
        low, high = format(entry["min"], form), format(entry["max"], form)
        return low if low == high else f"{low}-{high}"

    table = [["crowd", *(head for _, head, _ in ACROSS_COLUMNS), "complete"]]
    table += [[row["crowd"], *(cell(row[key], form) for key, _, form in ACROSS_COLUMNS),
               "yes" if row["complete"] else "no"] for row in result["crowds"]]
    table.append(["range", *(span(result["range"][key], form)
                             for key, _, form in ACROSS_COLUMNS), ""])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    head = (f"rehearsal of {result['study']} across {len(result['crowds'])} crowds (seed "
            f"{result['seed']}"
            + (f", --max-raters {result['max_raters']}" if result["max_raters"] else "")
            + "): simulated raters, not measured on people; the study is unchanged")
    rows = [(line[0].ljust(widths[0]) + "".join(f"  {text:>{w}}" for text, w
                                                in zip(line[1:], widths[1:]))).rstrip()
            for line in table]
    return [head, *rows,
            "screened: raters screened out by the qualification; top-ups: places added by "
            "recruitment; released, fewest, excluded, IAA: `lexgold process "
            "--allow-incomplete` on each rehearsal (fewest: accepted raters of the "
            "least-rated released pair)"]


def rehearsal_progress(bar, max_raters: int | None = None):
    """The ``progress`` callable of :func:`lexgold.annotate.rehearse.rehearse` that moves
    ``bar``: the places completed of the study's places (top-ups add to them), or with
    ``max_raters`` the raters done of that many (the rehearsal stops there)."""
    done = [-1]                                  # the first call comes before any rater

    def progress(entered: int, completed: int, places: int) -> None:
        done[0] += 1
        if max_raters:
            bar.total, now, text = max_raters, done[0], f"{completed}/{places} places completed"
        else:
            bar.total, now, text = places, completed, f"{entered} raters entered"
        bar.set_postfix_str(text, refresh=False)
        bar.update(now - bar.n)
        bar.refresh()
    return progress


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
@click.option("--figures-every", type=FiniteRange(min=0), default=5.0, show_default=True,
              help="Seconds between refreshes of the admin view's figures and recruitment "
                   "top-ups, in a background process (0: none here). On PostgreSQL one "
                   "host's refresher runs at a time (an advisory lock), whatever the hosts.")
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
    serve_study(study_db, host=host, port=port, threads=threads, workers=workers,
                connection_limit=connection_limit, channel_timeout=channel_timeout,
                rate_limit=rate_limit, trusted_proxies=trusted_proxies,
                secure_cookies=secure_cookies, check=check, figures_every=figures_every,
                secret_key_file=secret_key_file,
                prolific_webhook_secret_file=prolific_webhook_secret_file)

