"""A Prolific study's submissions against the rating site's raters: sync, review, bonuses.

The decisions are pure functions over frames (:func:`reconcile`, :func:`propose`,
:func:`bonus_amounts`); the database and the API are touched at the edges (:func:`site_raters`,
:func:`apply_review`, :func:`apply_bonuses`), each action recorded in ``prolific_action``
under a unique key so that it is never taken twice.

Prolific's policy, as its researcher help centre states it ("Valid rejection reasons"): a
submission may be rejected for failed attention checks, and "Participants must fail one attention
check (for studies under 5 minutes) or multiple attention checks (for studies 5 minutes or
longer)"; screened-out participants and those who did not finish are asked to return the
submission, not rejected. The protocol's checkpoints (SimLex-999 section 3.4: choose the most
similar of three associated pairs) are those checks here. A rater excluded from the gold
standard by the post-processing rules (SPEC 3.1, 3.2: agreement, duplicates, patterns) did the
task and is approved: exclusion is not a rejection.
"""

from __future__ import annotations

import hashlib
import math
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pandas as pd
from sqlalchemy import case, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lexgold.study import models as m
from lexgold.study.store import confirm_raters
from lexgold.errors import InputError
from lexgold.prolific.client import SUBMITTED, Client, ProlificError

#: Prolific's rejection category for failed attention checks ("Approve or reject a submission")
FAILED_CHECK = "FAILED_CHECK"
#: a study this long or longer needs two failed checks for a rejection (Prolific's policy)
LONG_STUDY_MINUTES = 5.0
RETURN_UNFINISHED = "Didn't finish the study"
RETURN_SCREENED = "Screened out by the study's qualification question"
RETURN_NO_DATA = "No answers reached the study site with this Prolific ID"
RATER_COLUMNS = ["participant_id", "rater_study", "rater_session", "stage", "completed",
                 "checks_given", "checks_failed", "minutes"]


# -- what the site holds ----------------------------------------------------------------------

def site_raters(session: Session) -> pd.DataFrame:
    """The raters who entered with a Prolific ID: stage, completion, checkpoints given and
    failed, minutes from entry to completion (NaN when not completed)."""
    rows = session.execute(select(
        m.Rater.id, m.Rater.external_id, m.Rater.external_study, m.Rater.external_session,
        m.Rater.stage, m.Rater.created_at, m.Rater.completed_at)
        .where(m.Rater.platform == "prolific")).all()
    failed = func.sum(case((m.CheckpointAnswer.correct.is_(False), 1), else_=0))
    checks = {rater: (int(given), int(wrong or 0)) for rater, given, wrong in session.execute(
        select(m.CheckpointAnswer.rater_id, func.count(), failed)
        .group_by(m.CheckpointAnswer.rater_id))}
    out = []
    for rid, pid, study, sess, stage, created, done in rows:
        given, failed = checks.get(rid, (0, 0))
        minutes = (done - created).total_seconds() / 60 if done and created else float("nan")
        out.append((pid, study or "", sess or "", stage, done is not None, given, failed,
                    minutes))
    return pd.DataFrame(out, columns=RATER_COLUMNS)


def submissions_frame(submissions: list[dict]) -> pd.DataFrame:
    """Prolific's submission list as a frame (id, participant_id, status)."""
    rows = []
    for number, item in enumerate(submissions, 1):
        if not isinstance(item, dict) or not item.get("id") or not item.get("participant_id"):
            raise ProlificError(f"Prolific API: submission {number} of the list has no 'id' or "
                                f"'participant_id'")
        rows.append((str(item["id"]), str(item["participant_id"]),
                     str(item.get("status", "")).upper()))
    return pd.DataFrame(rows, columns=["submission_id", "participant_id", "status"])


def default_prolific_study(session: Session) -> str | None:
    """The Prolific study ID every Prolific rater entered with, when there is exactly one."""
    studies = session.scalars(select(m.Rater.external_study).distinct()
                              .where(m.Rater.platform == "prolific",
                                     m.Rater.external_study != "")).all()
    return studies[0] if len(studies) == 1 else None


# -- sync -------------------------------------------------------------------------------------

def reconcile(submissions: pd.DataFrame, raters: pd.DataFrame) -> dict[str, list[str]]:
    """The mismatches between Prolific's submissions and the site's raters (participant IDs):

    - ``submitted_unfinished``: submitted on Prolific, entered the site, never completed it
      (screened-out raters are not counted: they were sent back with the screen-out code);
    - ``finished_unsubmitted``: completed on the site, no submitted submission on Prolific
      (returned, timed out, still active, or none);
    - ``submitted_never_entered``: submitted on Prolific, never entered the site;
    - ``entered_not_on_prolific``: entered the site with a Prolific ID that has no submission in
      the study (a made-up ID, another study's link)."""
    status = dict(zip(submissions["participant_id"], submissions["status"]))
    known = set(raters["participant_id"])
    submitted = {p for p, s in status.items() if s in SUBMITTED}
    completed = set(raters.loc[raters["completed"], "participant_id"])
    screened = set(raters.loc[raters["stage"] == "screened_out", "participant_id"])
    return {
        "submitted_unfinished": sorted((submitted & known) - completed - screened),
        "finished_unsubmitted": sorted(completed - submitted),
        "submitted_never_entered": sorted(submitted - known),
        "entered_not_on_prolific": sorted(known - set(status)),
    }


def sync(session: Session, submissions: list[dict]) -> dict:
    """Mark the raters whose Prolific ID has a submission as confirmed (what ``lexgold study
    confirm`` does with Prolific's export) and report the mismatches (:func:`reconcile`)."""
    frame = submissions_frame(submissions)
    counts = confirm_raters(session, "prolific", frame["participant_id"])
    return {**counts, "submissions": len(frame),
            "by_status": {k: int(v) for k, v in frame["status"].value_counts().sort_index()
                          .items()},
            "mismatches": reconcile(frame, site_raters(session))}


# -- review -----------------------------------------------------------------------------------

def study_minutes(raters: pd.DataFrame) -> float:
    """The study's length: the median minutes from entry to completion of the raters who
    completed it; NaN when nobody has (then treated as a long study: the stricter rule)."""
    minutes = raters["minutes"].dropna()
    return float(minutes.median()) if len(minutes) else float("nan")


def required_failures(minutes: float) -> int:
    """Failed attention checks that justify a rejection under Prolific's policy: 1 in a study
    under 5 minutes, 2 ("multiple") in a study of 5 minutes or more (or of unknown length)."""
    return 1 if not math.isnan(minutes) and minutes < LONG_STUDY_MINUTES else 2


def propose(submissions: pd.DataFrame, raters: pd.DataFrame, minutes: float,
            done: set[str] = frozenset()) -> pd.DataFrame:
    """One proposal per submission: ``approve``, ``reject`` (category FAILED_CHECK), ``return``
    or ``none``, with the reason. Only submissions AWAITING REVIEW get an action; ``done``
    holds the submission IDs already acted on (recorded in the study)."""
    need = required_failures(minutes)
    by_pid = raters.set_index("participant_id").to_dict("index") if len(raters) else {}
    rows = []
    for sub, pid, status in submissions[["submission_id", "participant_id", "status"]] \
            .itertuples(index=False):
        rater = by_pid.get(pid)
        if sub in done:
            action, reason = "none", "acted on before (recorded in the study)"
        elif status != "AWAITING REVIEW":
            action, reason = "none", f"status {status}: nothing to review"
        elif rater is None:
            action, reason = "return", RETURN_NO_DATA
        elif rater["stage"] == "screened_out":
            action, reason = "return", RETURN_SCREENED
        elif not rater["completed"]:
            action, reason = "return", RETURN_UNFINISHED
        elif rater["checks_failed"] >= need and rater["checks_given"] >= need:
            action = "reject"
            reason = (f"failed {rater['checks_failed']} of {rater['checks_given']} attention "
                      f"checks (rejection needs {need})")
        else:
            action = "approve"
            reason = (f"completed; {rater['checks_failed']} of {rater['checks_given']} "
                      f"attention checks failed")
        rows.append((sub, pid, status, action, reason))
    return pd.DataFrame(rows, columns=["submission_id", "participant_id", "status", "action",
                                       "reason"])


def rejection_message(reason: str) -> str:
    """The message sent with a rejection (Prolific wants at least 100 characters)."""
    return (f"Your submission was rejected because you {reason}. Each check asked which of "
            f"three word pairs is the most similar, with one clearly right answer given the "
            f"instructions. Thank you for your time.")


def done_submissions(session: Session) -> set[str]:
    """Submission IDs with a review action done or under way (recorded in the study)."""
    return set(session.scalars(select(m.ProlificAction.submission_id)
                               .where(m.ProlificAction.action.in_(
                                   ("approve", "reject", "return")),
                                      m.ProlificAction.state == "done")))


def apply_review(session: Session, client: Client, prolific_study: str,
                 proposals: pd.DataFrame, now) -> dict[str, int]:
    """Perform the proposals (``approve``, ``reject``, ``return``), each recorded before the
    call (state ``pending``, under a unique key) and after it (``done``). A pending action of
    an earlier run whose call failed is tried again (the transition endpoint is idempotent)."""
    counts = {"approve": 0, "reject": 0, "return": 0, "failed": 0, "skipped": 0}
    for row in proposals.itertuples(index=False):
        if row.action not in ("approve", "reject", "return"):
            continue
        key = f"{row.action}:{row.submission_id}"
        action = _claim(session, key, prolific_study, row.submission_id, row.participant_id,
                        row.action, row.reason, now)
        if action is None:
            counts["skipped"] += 1
            continue
        try:
            if row.action == "approve":
                client.approve(row.submission_id)
            elif row.action == "reject":
                client.reject(row.submission_id, rejection_message(row.reason), FAILED_CHECK)
            else:
                client.request_return(row.submission_id, [row.reason])
        except ProlificError as err:
            session.execute(update(m.ProlificAction).where(m.ProlificAction.id == action)
                            .values(error=str(err)[:500]))
            session.commit()
            counts["failed"] += 1
            continue
        session.execute(update(m.ProlificAction).where(m.ProlificAction.id == action)
                        .values(state="done", done_at=now, error=""))
        session.commit()
        counts[row.action] += 1
    return counts


def _claim(session: Session, key: str, study: str, submission: str, participant: str,
           action: str, detail: str, now, amount: int | None = None) -> int | None:
    """The id of the ``pending`` record of ``key``: a new one, or an earlier run's still
    pending; None when it is done (or another run holds it)."""
    existing = session.execute(select(m.ProlificAction.id, m.ProlificAction.state)
                               .where(m.ProlificAction.key == key)).first()
    if existing is not None:
        return existing[0] if existing[1] == "pending" and action != "bonus" else None
    row = m.ProlificAction(key=key, prolific_study=study, submission_id=submission,
                           participant_id=participant, action=action, detail=detail[:500],
                           amount_cents=amount, bulk_id="", state="pending", error="",
                           created_at=now)
    session.add(row)
    try:
        session.commit()
    except IntegrityError:            # another run claimed it in between
        session.rollback()
        return None
    return row.id


# -- bonuses ----------------------------------------------------------------------------------

AMOUNT = re.compile(r"\d+(\.\d{1,2})?")
RULES = ("completed", "approved")


def cents(text: str, *, where: str, maximum: int) -> int:
    """An amount in the account's currency ("0.50") as cents; InputError naming ``where``."""
    text = str(text).strip()
    try:
        if not AMOUNT.fullmatch(text):
            raise InvalidOperation
        value = int(Decimal(text) * 100)
    except InvalidOperation:
        raise InputError(f"{where}: amount {text!r} is not a number with at most 2 decimals "
                         f"(e.g. 0.50)") from None
    if value <= 0 or value > maximum:
        raise InputError(f"{where}: amount {text} must be above 0 and at most "
                         f"{maximum // 100}.{maximum % 100:02d} (--max-amount)")
    return value


def bonus_csv(path: str | Path, *, maximum: int) -> dict[str, int]:
    """Participant ID -> cents from a CSV with a participant ID column (``participant_id``,
    ``Participant id`` or ``PROLIFIC_PID``) and an ``amount`` (or ``bonus``) column."""
    from lexgold.tables import read_text_table

    table = read_text_table(Path(path))
    pid = next((c for c in ("participant_id", "Participant id", "PROLIFIC_PID")
                if c in table.columns), None)
    amount = next((c for c in ("amount", "bonus") if c in table.columns), None)
    if pid is None or amount is None:
        raise InputError("expected a participant_id column and an amount column", path=path)
    out: dict[str, int] = {}
    for line, (who, value) in enumerate(zip(table[pid], table[amount]), 2):
        who = str(who).strip()
        if not re.fullmatch(r"[A-Za-z0-9_\-]{1,100}", who):
            raise InputError(f"participant ID {who!r} is not an ID", path=path, line=line)
        if who in out:
            raise InputError(f"participant {who} is listed twice", path=path, line=line)
        out[who] = cents(value, where=f"{path}:{line}", maximum=maximum)
    if not out:
        raise InputError("no bonus rows", path=path)
    return out


def bonus_rule(rule: str, submissions: pd.DataFrame, raters: pd.DataFrame, *,
               maximum: int) -> dict[str, int]:
    """``completed=AMOUNT``: every participant who completed the study on the site and whose
    submission is submitted and not rejected; ``approved=AMOUNT``: every APPROVED submission."""
    name, _, amount = rule.partition("=")
    if name.strip() not in RULES or not amount:
        raise InputError(f"rule {rule!r}: expected {' or '.join(r + '=AMOUNT' for r in RULES)}",
                         field="--rule")
    value = cents(amount, where=f"--rule {rule}", maximum=maximum)
    status = dict(zip(submissions["participant_id"], submissions["status"]))
    if name.strip() == "approved":
        chosen = [p for p, s in status.items() if s == "APPROVED"]
    else:
        completed = raters.loc[raters["completed"], "participant_id"]
        chosen = [p for p in completed if status.get(p) in SUBMITTED
                  and status.get(p) != "REJECTED"]
    return {p: value for p in sorted(chosen)}


def bonus_label(amounts: dict[str, int], label: str | None) -> str:
    """The bonus batch's label: ``label``, or the SHA-256 of the batch (the same list of
    participants and amounts is one batch, paid once)."""
    if label:
        return label
    text = "".join(f"{p},{c}\n" for p, c in sorted(amounts.items()))
    return "batch-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def plan_bonuses(session: Session, amounts: dict[str, int], submissions: pd.DataFrame,
                 label: str) -> tuple[dict[str, int], list[str]]:
    """The bonuses still to pay (not recorded under ``label``) and the participants already
    recorded; InputError for a participant with no submission in the study."""
    known = set(submissions["participant_id"])
    strangers = sorted(set(amounts) - known)
    if strangers:
        raise InputError(f"{len(strangers)} participants have no submission in the Prolific "
                         f"study (first: {strangers[0]}): Prolific pays bonuses only to its "
                         f"participants")
    keys = {f"bonus:{label}:{p}": p for p in amounts}
    recorded = set(session.scalars(select(m.ProlificAction.key)
                                   .where(m.ProlificAction.key.in_(list(keys)))))
    todo = {p: amounts[p] for k, p in keys.items() if k not in recorded}
    return todo, sorted(keys[k] for k in recorded)


def apply_bonuses(session: Session, client: Client, prolific_study: str,
                  amounts: dict[str, int], label: str, now) -> dict:
    """Set up and pay one bulk bonus payment of ``amounts`` (participant -> cents), recorded
    first (``pending``), then ``set_up`` with the bulk payment's ID, then ``paid``. Payment is
    one call, never retried (Prolific: "not idempotent"): after a failed or unknown payment the
    records stay ``set_up`` and no later run pays them again."""
    ids = []
    for pid, amount in amounts.items():
        got = _claim(session, f"bonus:{label}:{pid}", prolific_study, "", pid, "bonus", label,
                     now, amount)
        if got is not None:
            ids.append(got)
    if not ids:
        return {"paid": 0, "bulk_id": "", "cents": 0}
    mine = dict(session.execute(select(m.ProlificAction.participant_id,
                                       m.ProlificAction.amount_cents)
                                .where(m.ProlificAction.id.in_(ids))).all())
    try:
        bulk = client.set_up_bonuses(prolific_study, mine)
    except ProlificError:
        session.execute(delete(m.ProlificAction).where(m.ProlificAction.id.in_(ids)))
        session.commit()
        raise
    session.execute(update(m.ProlificAction).where(m.ProlificAction.id.in_(ids))
                    .values(state="set_up", bulk_id=bulk))
    session.commit()
    try:
        client.pay_bonuses(bulk)
    except ProlificError as err:
        session.execute(update(m.ProlificAction).where(m.ProlificAction.id.in_(ids))
                        .values(error=str(err)[:500]))
        session.commit()
        raise ProlificError(f"bulk bonus payment {bulk} was set up but paying it failed or is "
                            f"unknown ({err}); check it on Prolific: lexgold will not pay it "
                            f"again") from None
    session.execute(update(m.ProlificAction).where(m.ProlificAction.id.in_(ids))
                    .values(state="paid", done_at=now))
    session.commit()
    return {"paid": len(ids), "bulk_id": bulk, "cents": sum(mine.values())}
