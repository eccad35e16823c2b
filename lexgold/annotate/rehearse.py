"""``lexgold study rehearse``: simulated raters answer a study through its own site.

Before paying a crowd, a researcher wants to see the study run: how many raters it recruits,
how many top-ups its exclusion rules cause (HyperLex section 4.4: "at least 10 ratings from 10
different accepted annotators"), how long it takes, and whether ``lexgold process`` then
releases every pair. A rehearsal answers that with the study itself:

- the site is the real one (:func:`lexgold.annotate.app.create_app` over the study database),
  driven through its routes by one :class:`lexgold.annotate.browser.Browser` per rater (WSGI
  requests through the whole app, the rater's cookies kept as a browser keeps them): entry
  link, consent, instructions, qualification, checkpoints, groups, completion; CSRF tokens,
  item ids and checkpoint options are read from the pages as a browser would;
- the raters are :class:`lexgold.crowd.simulate.SimulatedRater` of a crowd (default: the
  rater model fitted to real logs, :mod:`lexgold.crowd.model`; recall, spammers, quitters,
  speed); the pairs' latent scores are drawn from the crowd's model unless given. The site
  stores them with platform ``simulated`` (``SIMULATED_RATERS``), whatever entry link they came
  by, so that no Prolific or MTurk command ever takes one for a participant, and ``lexgold
  process`` labels a release built from their ratings as simulated;
- time is simulated: the site runs on a clock (``CLOCK``) that the rehearsal advances, raters
  arrive as a Poisson process (``arrivals_per_hour``) while the study has a place to give (as a
  platform stops sending participants when its places are taken), each page takes the rater's
  time, claims expire after the protocol's ``claim_timeout_s``, and a quitter's place goes to
  a later rater;
- recruitment is the site's own: when the last place of a tranche is completed, the tranches
  are topped up until ``min_accepted_raters`` are accepted (:mod:`lexgold.live.recruit`).
  The served site does this in a background refresher (:mod:`lexgold.live.figures`); the
  rehearsal has none and runs the same top-up at once, on its clock, right after the
  completing request, where the site ran it until version 0011 of the schema (the same
  study and seed recruit as before);
- adaptive allocation (``[study] allocation = "adaptive"``) is the site's own too: once no slot
  is open, :func:`lexgold.live.allocator.allocate` stops or adds a top-up tranche of the
  least precise pairs, run at once after the completing request as the refresher would.

The answers are stored in the study like real ones, so a rehearsal is run on a study no real
rater has entered (rehearse a copy: ``lexgold study backup``). Everything random comes from one
``numpy.random.Generator``: the same study and seed give the same stored answers. The clock
starts at the real time of the run (``now``, the database server's); simulated hours usually
outrun the run's wall time, so when the rehearsal ends every time it stored is moved back by
the same amount (:func:`move_back`), until its last event falls at the real time the run
ended: no stored time, and no collection time of a release, lies in the future.
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import unescape
from typing import Callable

import numpy as np
import pandas as pd
from sqlalchemy import DateTime, and_, bindparam, event, func, or_, select, update

from lexgold.study import models as m
from lexgold.study.secret import new_key
from lexgold.errors import InputError
from lexgold.crowd.simulate import Crowd, SimulatedRater, pair_truths
from lexgold.annotate.app import create_app
from lexgold.annotate.browser import Browser
from lexgold.study.clock import database_now
from lexgold.study.machine import study_machine
from lexgold.live.allocator import allocate
from lexgold.live.recruit import top_up
from lexgold.crowd.bws_simulate import choose

#: seconds a rater spends on the consent page, an instructions page, the qualification question
READING_SECONDS = {"consent": 20.0, "instructions": 30.0, "qualification": 10.0}


@dataclass
class Page:
    """What a rehearsing rater reads off a page: its form and the questions on it."""

    action: str = ""
    fields: dict = field(default_factory=dict)        # hidden inputs: name -> value
    items: list = field(default_factory=list)         # item ids (r<id> fields), in order
    choices: list = field(default_factory=list)       # radio values of "choice"
    options: list = field(default_factory=list)       # checkpoint option texts, in order
    tuples: dict = field(default_factory=dict)        # BWS: tuple key -> radio values, in order
    total: int = 0                                    # the tranche's pages (progress bar)


TAG = re.compile(r"<(form|input|progress|span)\b([^>]*)>([^<]*)")
ATTRIBUTE = re.compile(r'([\w-]+)(?:="([^"]*)")?')
MOST = re.compile(r"b(c|[0-9]+)")          # a Best-Worst tuple's "most" radio group
TIME = re.compile(r"t(c|[0-9]+)")          # a question's or tuple's time (the browser's own)


def read_page(html: str) -> Page:
    """The form of a page of the site, read as a browser submits it (the site's templates put
    every attribute value in double quotes)."""
    page = Page()
    for tag, attributes, text in TAG.findall(html):
        if tag == "span" and "pairtext" not in attributes or \
                tag == "input" and "name=" not in attributes:
            continue                   # a scale's end label, a slider: nothing to submit
        a = {k: unescape(v) if "&" in v else v for k, v in ATTRIBUTE.findall(attributes)}
        name = a.get("name", "")
        if tag == "form" and not page.action:
            page.action = a.get("action", "")
        elif tag == "progress":
            page.total = int(a.get("max") or 0)
        elif tag == "span" and a.get("class") == "pairtext":
            page.options.append(unescape(text))
        elif tag != "input" or not name:
            continue
        elif name[:1] == "r" and name[1:].isdigit():
            if int(name[1:]) not in page.items:
                page.items.append(int(name[1:]))
        elif name == "choice":
            page.choices.append(int(a["value"]))
        elif MOST.fullmatch(name):          # a Best-Worst tuple's most group
            page.tuples.setdefault(name[1:], []).append(int(a["value"]))
        elif a.get("type") == "hidden" and not TIME.fullmatch(name):
            page.fields[name] = a.get("value", "")
    return page


@dataclass
class Site:
    """The study as the rehearsal knows it: the app, its clock and what pages refer to."""

    app: object
    engine: object
    config: object
    entries: dict
    item_pair: dict            # item id -> pair id
    truth: dict                # pair id -> true score
    pairs: pd.DataFrame        # id, word1, word2, topic
    checkpoints: dict          # frozenset of casefolded option texts -> right answer
    clock: list                # [datetime]: the site's time
    requests: int = 0
    now: Callable[[], datetime] = m.utcnow            # the real time (naive UTC)
    tuple_pairs: dict = field(default_factory=dict)   # BWS: tuple id -> pair ids, in order
    spread: dict = field(default_factory=dict)        # pair id -> the rater model's spread
    allocation: dict = field(default_factory=dict)    # the last adaptive allocation step


def rehearse(url: str, *, rng: np.random.Generator, crowd: Crowd = Crowd(),
             truth: pd.DataFrame | None = None, arrivals_per_hour: float = 120.0,
             max_raters: int | None = None, progress=None,
             now: Callable[[], datetime] | None = None) -> dict:
    """Rehearse the study at ``url`` (see the module docstring) and return what it needed.

    Parameters
    ----------
    url : str
        Database URL of a study no rater has entered yet.
    rng : numpy.random.Generator
        The only source of randomness.
    crowd : Crowd
        The simulated raters.
    truth : pandas.DataFrame, optional
        ``word1, word2, truth`` (and ``topic`` for topic studies): the true score of each pair
        on the study's scale (binary studies: the chance of "related"). Pairs it lacks get a
        draw from the crowd's rater model (the invented crowd, binary studies: uniform).
    arrivals_per_hour : float
        Mean rate at which new raters arrive while the study has a place to give.
    max_raters : int, optional
        Stop after this many raters entered (default: ten times the study's places).
    progress : callable, optional
        Called with ``(raters entered, places completed, places)`` once at the start and
        after each rater who leaves (done, screened out, quit or turned away).
    now : callable, optional
        The real time, naive UTC (default: the study database server's clock). The simulated
        clock starts there; at the end the stored times are moved back so that none lies after
        ``now()`` (module docstring).

    Returns
    -------
    dict
        ``raters`` (entered), ``completed``, ``quit``, ``screened_out``, ``expired`` (a slow
        rater whose place went to another), ``turned_away`` (the study was full when the rater
        came to claim a place), ``places`` (at the start), ``top_up_places``,
        ``pages`` (pages of pairs or checkpoints answered), ``requests``,
        ``simulated_hours``, ``wall_seconds``, ``finished`` (every place completed),
        ``machine`` (a study with a machine rater: ``mode``, ``model``, ``pairs_covered``,
        ``simulated`` (true: figures of simulated raters), the last allocation step's
        ``status``, ``stopped`` and ``ranked_by``; else None) and
        ``who``, a DataFrame ``rater_id, style, spammer, bias, quit, outcome``, and ``truth``,
        one ``word1, word2, topic, truth`` per pair of the study.
    """

    started = time.perf_counter()
    site = _open_site(url, rng, truth, create_app, crowd, now)
    places = _places(site)
    limit = max_raters if max_raters is not None else 10 * places
    low, high = ((0, 1) if site.config.task == "binary"
                 else (site.config.scale_min, site.config.scale_max))
    start = site.clock[0]
    queue, order, who = [], itertools.count(), []
    arrival = start + _gap(rng, arrivals_per_hour)
    entered = 0
    if progress is not None:
        progress(0, 0, places)
    while True:
        if entered < limit and (not queue or arrival <= queue[0][0]):
            site.clock[0] = arrival
            arrival += _gap(rng, arrivals_per_hour)
            if not _claimable(site):
                if not queue and _finished(site):
                    break
                if not queue:            # only quitters' claims left: wait for one to expire
                    arrival = max(arrival, _next_expiry(site))
                continue
            entered += 1
            rater = SimulatedRater(crowd, rng, low=low, high=high,
                                   binary=site.config.task == "binary")
            record = {"rater_id": "", "style": rater.style, "spammer": not rater.honest,
                      "bias": rater.bias, "quit": False, "outcome": ""}
            who.append(record)
            visit = _visit(site, rater, record, rng)
            heapq.heappush(queue, (site.clock[0] + timedelta(seconds=next(visit)),
                                   next(order), visit))
            continue
        if not queue:
            break
        at, _, visit = heapq.heappop(queue)
        site.clock[0] = at
        try:
            heapq.heappush(queue, (at + timedelta(seconds=visit.send(None)), next(order), visit))
        except StopIteration:
            if progress is not None:
                progress(entered, *_completed(site))
    completed, total = _completed(site)
    who_frame = pd.DataFrame(who, columns=["rater_id", "style", "spammer", "bias", "quit",
                                           "outcome"])
    end = site.clock[0]
    move_back(site.engine, since=start, by=end - site.now().replace(microsecond=0))
    machine = _machine(site)
    site.engine.dispose()
    return {"raters": entered, "completed": int((who_frame["outcome"] == "done").sum()),
            "quit": int(who_frame["quit"].sum()),
            "screened_out": int((who_frame["outcome"] == "screened_out").sum()),
            "expired": int((who_frame["outcome"] == "expired").sum()),
            "turned_away": int((who_frame["outcome"] == "full").sum()),
            "places": places, "top_up_places": total - places,
            "pages": int(sum(r.get("pages", 0) for r in who)), "requests": site.requests,
            "simulated_hours": round((end - start).total_seconds() / 3600, 2),
            "wall_seconds": round(time.perf_counter() - started, 1),
            "finished": completed == total, "machine": machine, "who": who_frame,
            "truth": site.pairs.assign(truth=site.pairs["id"].map(site.truth)).drop(
                columns="id")}


def _open_site(url, rng, truth, create_app, crowd=Crowd(), now=None) -> Site:
    app = create_app({"DATABASE_URL": url, "SESSION_COOKIE_SECURE": False,
                      "SECRET_KEY": new_key(),         # in-process clients only: this run's
                      "CLOCK": lambda: site.clock[0], "SIMULATED_RATERS": True})
    engine = app.extensions["lexgold_engine"]
    state = app.extensions["lexgold"]
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        _without_sync(engine)
    if now is None:
        now = lambda: database_now(engine)  # noqa: E731
    with state.reads() as session:
        if session.scalar(select(func.count()).select_from(m.Rater)):
            raise InputError("raters have already entered this study: rehearse a new study or "
                             "a copy made before anyone entered (`lexgold study backup`)")
        item_pair = dict(session.execute(select(m.Item.id, m.Item.pair_id)).all())
        tuple_pairs: dict = {}                 # Best-Worst: each tuple's pairs, in its order
        for tuple_id, position, pair_id in session.execute(
                select(m.Item.tuple_id, m.Item.position, m.Item.pair_id)
                .where(m.Item.tuple_id.is_not(None)).order_by(m.Item.id)).all():
            tuple_pairs.setdefault(str(tuple_id), {})[position] = pair_id
        pairs = pd.DataFrame(session.execute(
            select(m.Pair.id, m.Pair.word1, m.Pair.word2, m.Pair.topic)).all(),
            columns=["id", "word1", "word2", "topic"])
    config = state.config
    low, high = (0, 1) if config.task == "binary" else (config.scale_min, config.scale_max)
    binary = config.task == "binary"
    drawn, spread = pair_truths(crowd, len(pairs), rng, low=low, high=high, binary=binary)
    scores = pd.Series(drawn, index=pairs["id"])
    spreads = pd.Series(spread, index=pairs["id"])
    if truth is not None:
        keys = ["word1", "word2"] + (["topic"] if "topic" in truth.columns else [])
        known = pairs.merge(truth[keys + ["truth"]].drop_duplicates(keys), on=keys,
                            how="inner")
        given, spread = pair_truths(crowd, len(known), rng, low=low, high=high, binary=binary,
                                    truth=known["truth"].to_numpy(dtype=float))
        scores[known["id"].to_numpy()] = given
        spreads[known["id"].to_numpy()] = spread
    show = {"upper": str.upper, "lower": str.lower}.get(config.word_case, str)
    checkpoints = {frozenset(f"{show(a)} \u2013 {show(b)}".casefold() for a, b in c.options):
                   c.answer for c in config.checkpoints}
    if config.task == "bws":               # check tuples: (most, least)
        checkpoints = {frozenset(f"{show(a)} \u2013 {show(b)}".casefold() for a, b in c.pairs):
                       (c.best, c.worst) for c in config.bws.checkpoints}
    site = Site(app, engine, config, state.entries or {"platforms": list(m.ENTRY_KINDS)},
                item_pair, scores.to_dict(), pairs, checkpoints,
                [now().replace(microsecond=0)], now=now,
                tuple_pairs={key: [rows[p] for p in sorted(rows)]
                             for key, rows in tuple_pairs.items()},
                spread=spreads.to_dict())
    return site


def _without_sync(engine) -> None:
    """The rehearsal's SQLite connections commit without waiting for the disk
    (``PRAGMA synchronous=NORMAL``; the site's own stay at SQLite's FULL): in WAL mode the
    database stays consistent, and a power cut can lose only the last commits of a rehearsal,
    which is run again on a fresh copy anyway. Each commit otherwise waits for an fsync of the
    write-ahead log, one per request (SQLite, "PRAGMA synchronous")."""
    event.listen(engine, "connect", lambda connection, _record: connection.execute(
        "PRAGMA synchronous=NORMAL"))
    engine.dispose()                     # connections opened by create_app get it too


def move_back(engine, *, since: datetime, by: timedelta) -> None:
    """Move every stored time at or after ``since`` (what the rehearsal wrote: the study's
    creation and anything before stay) back by ``by``, the same amount for every table, so
    that the order and spacing of the rehearsal's events are kept. Nothing when ``by`` is not
    positive (the run took longer than the simulated time)."""
    if by <= timedelta(0):
        return
    with engine.begin() as connection:
        for table in m.Base.metadata.sorted_tables:
            if table.name == "study":
                continue
            key = list(table.primary_key.columns)
            for column in (c for c in table.columns if isinstance(c.type, DateTime)):
                rows = connection.execute(select(*key, column).where(column >= since)).all()
                if rows:
                    connection.execute(
                        update(table).where(and_(*(k == bindparam(f"k_{k.name}") for k in key)))
                        .values({column.name: bindparam("moved")}),
                        [{**{f"k_{k.name}": value for k, value in zip(key, row[:-1])},
                          "moved": row[-1] - by} for row in rows])


def _gap(rng, per_hour: float) -> timedelta:
    return timedelta(seconds=float(rng.exponential(3600 / per_hour)))


def _reading(site: Site):
    """A read-only connection on the study (Core statements: what the rehearsal asks between
    requests needs no ORM entity)."""
    return site.app.extensions["lexgold"].reads.kw["bind"].connect()


def _claimable(site: Site) -> bool:
    """Has the study a place to give now (free, or claimed and expired)?"""
    now, slot = site.clock[0], m.Slot.__table__.c
    with _reading(site) as connection:
        return bool(connection.scalar(select(func.count()).select_from(m.Slot.__table__).where(
            or_(slot.status == "free", and_(slot.status == "active", slot.expires_at <= now)))))


def _next_expiry(site: Site) -> datetime:
    slot = m.Slot.__table__.c
    with _reading(site) as connection:
        soonest = connection.scalar(select(func.min(slot.expires_at))
                                    .where(slot.status == "active"))
    return soonest + timedelta(seconds=1) if soonest is not None else site.clock[0]


def _completed(site: Site) -> tuple[int, int]:
    slot = m.Slot.__table__.c
    with _reading(site) as connection:
        rows = dict(connection.execute(select(slot.status, func.count())
                                       .group_by(slot.status)).all())
    return int(rows.get("completed", 0)), int(sum(rows.values()))


def _finished(site: Site) -> bool:
    completed, total = _completed(site)
    return completed == total


def _places(site: Site) -> int:
    return _completed(site)[1]


def _entry_query(site: Site, rng) -> str:
    """An entry link of a platform the study accepts, with fresh IDs in that platform's format."""
    platforms = site.entries.get("platforms", list(m.ENTRY_KINDS))
    hexes = lambda n: "".join(rng.choice(list("0123456789abcdef"), n))  # noqa: E731
    caps = lambda n: "".join(rng.choice(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), n))  # noqa: E731,E501
    if "prolific" in platforms:
        return f"/?PROLIFIC_PID={hexes(24)}&STUDY_ID={'0' * 24}&SESSION_ID={hexes(24)}"
    if "mturk" in platforms:
        return f"/?workerId=A{caps(13)}&hitId={caps(30)}&assignmentId={caps(30)}"
    return "/"


def _visit(site: Site, rater: SimulatedRater, record: dict, rng):
    """One rater's visit, as a generator: it yields the seconds until its next request."""
    browser = Browser(site.app)

    def get(path):
        response = browser.get(path)
        site.requests += browser.requests
        browser.requests = 0
        return response

    def post(path, data):
        response = browser.post(path, data, referer=page_url[0])
        site.requests += browser.requests
        browser.requests = 0
        page_url[0] = response.url
        return response

    entry = _entry_query(site, rng)
    page_url = [entry]
    response = get(entry)
    yield READING_SECONDS["consent"]
    page = read_page(response.text())
    response = post("/consent", {**page.fields, "consent": "yes", "native": "yes"})
    record["rater_id"] = _session(site.app, browser).get("rater", "")
    answered, stop = 0, None
    while True:
        page = read_page(response.text())
        if page.action.endswith("/instructions"):
            yield READING_SECONDS["instructions"]
            response = post(page.action, page.fields)
        elif page.action.endswith("/qualification"):
            yield READING_SECONDS["qualification"]
            qualification = site.config.qualification
            choice = rater.choose(len(qualification.options), qualification.answer)
            response = post(page.action, {**page.fields, "choice": str(choice)})
        elif page.action.endswith("/step"):
            if stop is None:
                stop = rater.pages_before_quitting(page.total) or page.total + 1
            if answered >= stop:
                record["quit"] = True
                break
            seconds = _page_seconds(site, rater, page)
            yield seconds
            response = post(page.action, _answers(site, rater, page, seconds))
            answered += 1
        else:
            break
    record["pages"] = answered
    record["outcome"] = "quit" if record["quit"] else _stage(site, record["rater_id"])
    if record["outcome"] == "done":
        _recruit(site, record["rater_id"])


def _session(app, browser: Browser) -> dict:
    """The contents of the session cookie ``browser`` holds (signed by ``app``), or {}."""
    value = browser.cookie(app.config["SESSION_COOKIE_NAME"])
    serializer = app.session_interface.get_signing_serializer(app)
    return serializer.loads(value) if value and serializer is not None else {}


def _machine(site: Site) -> dict | None:
    """What the rehearsal's result says of the study's machine rater (None without one): it
    allocated the simulated raters' top-ups (``machine-allocate``); ``simulated`` marks every
    figure of the rehearsal as measured on simulated raters; ``stopped`` the unique pairs the
    last allocation step gave no more raters, ``status`` that step's."""
    with site.app.extensions["lexgold"].sessions() as session:
        found = study_machine(session)
        session.commit()
    if found is None:
        return None
    step = site.allocation.get("machine", {})
    return {"mode": f"machine-{found.mode}", "model": found.model,
            "pairs_covered": found.pairs_covered, "simulated": True,
            "status": site.allocation.get("status"), "stopped": step.get("stopped"),
            "ranked_by": step.get("ranked_by")}


def _recruit(site: Site, public_id: str) -> None:
    """The top-up after a completion (HyperLex section 4.4), run at once on the site's clock:
    only if the rater's tranche has no open slot left (:func:`lexgold.live.recruit.top_up`)."""

    if site.config.min_accepted_raters > 0:
        with site.app.extensions["lexgold"].sessions() as session:
            tranche_id = session.scalar(select(m.Slot.tranche_id).join(
                m.Rater, (m.Rater.slot_id == m.Slot.id) & (m.Slot.rater_id == m.Rater.id))
                .where(m.Rater.public_id == public_id))
            session.commit()
            if tranche_id is not None:
                top_up(session, site.config, tranche_id)
    if site.config.allocation == "adaptive":
        with site.app.extensions["lexgold"].sessions() as session:
            site.allocation = allocate(session, site.config)


def _page_seconds(site: Site, rater: SimulatedRater, page: Page) -> float:
    """A page's time: the rater's pace per question; a Best-Worst page's tuples at the
    protocol's mean ``seconds_per_item`` (per tuple) relative to the crowd's seconds per pair,
    as :func:`lexgold.crowd.bws_simulate.simulate_bws` times them."""
    if not page.tuples:
        return rater.seconds(max(1, len(page.items)))
    per_tuple = float(np.mean(site.config.seconds_per_item))
    return rater.seconds(len(page.tuples)) * per_tuple / rater.crowd.seconds_per_pair


def _bws_answers(site: Site, rater: SimulatedRater, page: Page, seconds: float) -> dict:
    """A Best-Worst page answered with :func:`lexgold.crowd.bws_simulate.choose` (a check
    tuple: right as :meth:`SimulatedRater.choose` is right, else two pairs at random)."""

    data = dict(page.fields)
    each = str(int(seconds * 1000 / max(1, len(page.tuples))))
    for key, values in page.tuples.items():
        if key == "c":
            shown = frozenset(o.casefold() for o in page.options[:len(values)])
            right = site.checkpoints.get(shown)
            if right is None:
                raise InputError("a check tuple whose pairs match no [[study.bws.checkpoints]] "
                                 "item", field="study.bws.checkpoints")
            if rater.choose(2, 0) == 0 and rater.honest:
                best, worst = right
            else:
                best, worst = (int(v) for v in rater.rng.choice(values, 2, replace=False))
        else:
            pairs = site.tuple_pairs[key]
            turn = getattr(rater, "bws_turn", 0)
            rater.bws_turn = turn + 1
            b, w = choose(rater, [site.truth[pairs[v]] for v in values], turn,
                          [site.spread[pairs[v]] for v in values])
            best, worst = values[b], values[w]
        data[f"b{key}"], data[f"w{key}"], data[f"t{key}"] = str(best), str(worst), each
    return data


def _answers(site: Site, rater: SimulatedRater, page: Page, seconds: float) -> dict:
    if page.tuples:
        return _bws_answers(site, rater, page, seconds)
    data = dict(page.fields)
    if page.choices:                         # a checkpoint page
        answer = site.checkpoints.get(frozenset(o.casefold() for o in page.options))
        if answer is None:
            raise InputError("a checkpoint page whose options match no [[study.checkpoints]] "
                             "item", field="study.checkpoints")
        data["choice"] = str(rater.choose(len(page.choices), answer))
        data["t"] = str(int(seconds * 1000))
        return data
    if any(i not in site.item_pair for i in page.items):    # a tranche added by a top-up
        with site.app.extensions["lexgold"].reads() as session:
            site.item_pair.update(session.execute(select(m.Item.id, m.Item.pair_id)).all())
    pairs = [site.item_pair[i] for i in page.items]
    values = rater.rate(pairs, [site.truth[p] for p in pairs], [site.spread[p] for p in pairs])
    each = int(seconds * 1000 / max(1, len(page.items)))
    for item, value in zip(page.items, values):
        data[f"r{item}"], data[f"t{item}"] = str(value), str(each)
    return data


def _stage(site: Site, public_id: str) -> str:
    """Where a rater ended: done, screened_out, full, or expired (its place went to another)."""
    rater, slot = m.Rater.__table__.c, m.Slot.__table__.c
    with _reading(site) as connection:
        found = connection.execute(
            select(rater.id, rater.stage, slot.rater_id, slot.id)
            .select_from(m.Rater.__table__.outerjoin(m.Slot.__table__, slot.id == rater.slot_id))
            .where(rater.public_id == public_id)).first()
    if found is None:
        return "refused"
    rater_id, stage, holder, slot_id = found
    if stage == "rating":
        return "expired" if slot_id is None or holder != rater_id else "rating"
    return stage
