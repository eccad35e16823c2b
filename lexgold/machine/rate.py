"""A machine rates the pairs: requests planned, sent concurrently, cached, and the ratings
written with their provenance (``lexgold machine rate``, docs/machine.md).

Each pair is asked ``samples`` times (sample indices 0 .. samples-1, each its own request); its
rating is the mean of the samples that gave a number, ``samples`` how many did. A request holds
up to ``pairs_per_request`` pairs of one sample index. A pair whose answer is unparsable
(:func:`lexgold.machine.prompt.parse_answers`) is asked once more, in a request of the
unparsable pairs; unparsable again, it is kept as missing: cached (not asked again) and
reported, never a 0. Every answered request goes into the cache at once, so a run stopped by a
dead server resumes where it stopped.

The output is a CSV ``word1, word2, rating, samples`` of the pairs with a rating (pairs without
one are left out: partial coverage, which :func:`lexgold.machine.ratings.read_machine`
accepts), and its provenance sidecar ``FILE.json``; both are written to temporary files and
renamed, so the output is whole or absent.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pandas as pd

from lexgold.cliutil import beside, replacing
from lexgold.machine.prompt import (RaterTexts, parse_answers, prompt_sha256, system_message,
                                    user_message)
from lexgold.machine.ratings import sidecar_path

#: output columns
COLUMNS = ["word1", "word2", "rating", "samples"]


def clock() -> datetime:
    """The provenance's date: now, in UTC (tests replace it)."""
    return datetime.now(timezone.utc)


@dataclass
class Plan:
    """The pairs to rate, the answers already cached and the requests still to send."""

    pairs: list[dict]
    cached: dict
    requests: list[list[tuple[int, int]]] = field(default_factory=list)   # (pair, sample)

    @property
    def to_ask(self) -> int:
        return sum(len(r) for r in self.requests)


def unique_pairs(table: pd.DataFrame) -> list[dict]:
    """The pairs of a pair table (columns ``word1, word2``, optionally ``pos``, ``topic``),
    each once (a pair given again, in either order, is dropped), file order."""
    seen, pairs = set(), []
    extra = [c for c in ("pos", "topic") if c in table.columns]
    for row in table[["word1", "word2", *extra]].itertuples(index=False):
        w1, w2 = str(row[0]).strip(), str(row[1]).strip()
        key = frozenset((w1, w2))
        if key in seen:
            continue
        seen.add(key)
        pairs.append({"word1": w1, "word2": w2,
                      **{c: str(v).strip() for c, v in zip(extra, row[2:])}})
    return pairs


def plan_requests(pairs: list[dict], cached: dict, *, samples: int,
                  pairs_per_request: int) -> Plan:
    """The requests that ask every (pair, sample) not in ``cached`` (``(word1, word2, sample)
    -> rating``), ``pairs_per_request`` at a time, sample by sample."""
    plan = Plan(pairs, cached)
    for sample in range(samples):
        todo = [(i, sample) for i, p in enumerate(pairs)
                if (p["word1"], p["word2"], sample) not in cached]
        plan.requests += [todo[at:at + pairs_per_request]
                          for at in range(0, len(todo), pairs_per_request)]
    return plan


def ask(complete: Callable[[list[dict]], str], texts: RaterTexts, pairs: list[dict],
        batch: list[tuple[int, int]]) -> list[tuple[str, str, int, str, float | None]]:
    """Ask one request's pairs, then once more those whose answer is unparsable; rows for the
    cache ``(word1, word2, sample, answer, rating)``."""
    system = {"role": "system", "content": system_message(texts)}
    rows, todo = {}, list(batch)
    for _ in range(2):
        asked = [pairs[i] for i, _ in todo]
        text = complete([system, {"role": "user", "content": user_message(texts, asked)}])
        ratings = parse_answers(text, len(todo), texts.scale)
        for (i, sample), rating in zip(todo, ratings):
            rows[(i, sample)] = (pairs[i]["word1"], pairs[i]["word2"], sample, text, rating)
        todo = [item for item, rating in zip(todo, ratings) if rating is None]
        if not todo:
            break
    return [rows[item] for item in batch]


def run_plan(plan: Plan, complete: Callable[[list[dict]], str], texts: RaterTexts, cache, *,
             concurrency: int = 1, progress: Callable[[int], None] = lambda n: None) -> None:
    """Send the plan's requests, ``concurrency`` at a time, each answer cached as it comes.

    Raises
    ------
    lexgold.machine.client.EndpointError
        The first request that failed after its retries; what was answered before it, and
        what was on its way, is cached.
    """
    requests = iter(plan.requests)
    with ThreadPoolExecutor(max_workers=max(concurrency, 1)) as pool:
        pending = {pool.submit(ask, complete, texts, plan.pairs, batch)
                   for batch in itertools.islice(requests, concurrency)}
        failure = None
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            rows = [row for future in done if future.exception() is None
                    for row in future.result()]
            if rows:
                cache.put(rows)
                plan.cached.update({(w1, w2, s): r for w1, w2, s, _, r in rows})
                progress(len(rows))
            failure = failure or next((f.exception() for f in done
                                       if f.exception() is not None), None)
            if failure is None:
                pending |= {pool.submit(ask, complete, texts, plan.pairs, batch)
                            for batch in itertools.islice(requests, len(done))}
        if failure is not None:
            raise failure


def rate_pairs(pairs: list[dict], texts: RaterTexts, client, cache_file: str | Path, *,
               samples: int = 1, pairs_per_request: int = 1, concurrency: int = 1,
               progress=None) -> tuple[Plan, int]:
    """Rate ``pairs`` with ``client`` (a :class:`lexgold.machine.client.ChatClient`, closed
    here), every answer kept in the cache ``cache_file`` and nothing asked that it holds.

    ``progress(total)`` makes a context manager with ``update(n)`` (a tqdm bar).

    Returns
    -------
    (Plan, int)
        The plan, its ``cached`` holding every answer, and the number of requests sent.

    Raises
    ------
    lexgold.machine.client.EndpointError
        A request failed after its retries; the message says how many answers are cached
        and that the same command resumes.
    """
    from lexgold.machine.cache import AnswerCache
    from lexgold.machine.client import EndpointError

    sent = []

    def complete(messages):
        sent.append(1)
        return client.complete(messages)

    with client, AnswerCache(cache_file, model=client.model, prompt_sha256=prompt_sha256(texts),
                             temperature=client.temperature) as cache:
        plan = plan_requests(pairs, cache.answers(), samples=samples,
                             pairs_per_request=pairs_per_request)
        bar = progress(plan.to_ask) if progress else contextlib.nullcontext(None)
        with bar as shown:
            try:
                run_plan(plan, complete, texts, cache, concurrency=concurrency,
                         progress=shown.update if shown is not None else lambda n: None)
            except EndpointError as err:
                total = len(pairs) * samples
                left = plan_requests(pairs, plan.cached, samples=samples,
                                     pairs_per_request=1).to_ask
                raise EndpointError(f"{err}; {total - left} of {total} answers are cached in "
                                    f"{Path(cache_file).name}: run the same command again to "
                                    "resume") from None
    return plan, len(sent)


def ratings_frame(pairs: list[dict], cached: dict, samples: int) -> tuple[pd.DataFrame, list]:
    """Each pair's rating, the mean of its parsed samples, and the pairs left without one."""
    rows, missing = [], []
    for p in pairs:
        values = [cached.get((p["word1"], p["word2"], s)) for s in range(samples)]
        values = [v for v in values if v is not None]
        if values:
            rows.append((p["word1"], p["word2"], sum(values) / len(values), len(values)))
        else:
            missing.append((p["word1"], p["word2"]))
    return pd.DataFrame(rows, columns=COLUMNS), missing


def provenance(*, model: str, host: str, prompt: str, prompt_sha256: str, parameters: dict,
               now: datetime | None = None, missing: list, pairs: int) -> dict:
    """The sidecar's record (docs/machine.md): the keys of
    :data:`lexgold.machine.ratings.PROVENANCE_KEYS`, the column holding the rating, and the
    pairs asked and left without a rating."""
    from lexgold import __version__

    now = now or clock()
    return {"model": model, "endpoint_host": host, "prompt": prompt,
            "prompt_sha256": prompt_sha256, "parameters": parameters,
            "date": now.isoformat(timespec="seconds"), "lexgold_version": __version__,
            "column": "rating", "pairs": pairs, "missing": len(missing),
            "missing_pairs": [list(p) for p in missing]}


def write_ratings(out: str | Path, frame: pd.DataFrame, record: dict) -> None:
    """Write the ratings CSV and its sidecar whole, or not at all: both are written to
    temporary files (:func:`lexgold.cliutil.replacing`) and renamed only when both are."""
    out = Path(out)
    side = beside(out, sidecar_path(out).name)      # a planted link is refused, as --out's
    with replacing(out, encoding="utf-8", newline="") as table, \
            replacing(side, encoding="utf-8") as sidecar:
        frame.to_csv(table, index=False, float_format="%.6g")
        sidecar.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
