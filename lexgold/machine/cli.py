"""``lexgold machine``: machine raters (docs/machine.md). ``machine rate`` asks an
OpenAI-compatible chat-completions endpoint to rate the pairs with the protocol's own rater
instructions (:mod:`lexgold.machine.rate`)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from lexgold.cliutil import FiniteRange, out_file_option, progress_bar, protocol_option


@click.group()
def machine():
    """Machine raters: an LLM's or a model's ratings of the pairs (docs/machine.md).

    \b
    Example:
        lexgold machine rate pairs.csv --protocol simlex --endpoint http://localhost:8080/v1 \\
            --model llama-3.1-8b --out machine.csv
    """


def _check_endpoint(ctx, param, value):
    """An http(s) URL with a host: a usage error naming the option (a URL without its scheme
    would otherwise be retried as a connection failure)."""
    from urllib.parse import urlsplit

    from lexgold.errors import redact

    parts = urlsplit(value or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.BadParameter(f"expected an http:// or https:// URL with a host, e.g. "
                                 f"http://localhost:8080/v1; given {redact(value)!r}",
                                 ctx=ctx, param=param)
    return value


def rater_texts(protocol: str):
    """The protocol's rater-facing texts (its ``[study]`` table) as the prompt needs them."""
    from lexgold.errors import InputError
    from lexgold.machine.prompt import RaterTexts
    from lexgold.study.config import load_study_config

    config = load_study_config(protocol)
    if config.task not in ("slider", "binary"):
        raise InputError(f"protocol {protocol!r}: task {config.task!r} asks no rating per pair "
                         "(machine rate needs a slider or binary task)")
    t = config.texts
    return RaterTexts(task=config.task, scale_min=config.scale_min, scale_max=config.scale_max,
                      instructions=tuple(t.instructions), question=t.question,
                      question_by_pos=dict(t.question_by_pos),
                      scale_min_label=t.scale_min_label, scale_max_label=t.scale_max_label,
                      binary_yes_label=t.binary_yes_label, binary_no_label=t.binary_no_label,
                      word_case=config.word_case, topic_label=t.topic_label,
                      topic_titles=dict(config.topic_titles))


@machine.command()
@click.argument("pairs", type=click.Path(exists=True, dir_okay=False))
@protocol_option("Its [study] table gives the prompt: the raters' instructions, question and "
                 "scale.", required=True)
@click.option("--endpoint", required=True, envvar="LEXGOLD_MACHINE_ENDPOINT", metavar="URL",
              callback=_check_endpoint,
              help="The API's base URL (env LEXGOLD_MACHINE_ENDPOINT); requests go to "
                   "URL/chat/completions (a URL ending in /chat/completions is used as given). "
                   "The key, if any, only from the environment: LEXGOLD_MACHINE_API_KEY.")
@click.option("--model", required=True, help="The model name the endpoint serves.")
@out_file_option("Ratings CSV to write (word1, word2, rating, samples); the provenance goes to "
                 "FILE.json, the answers' cache to FILE.cache.sqlite.")
@click.option("--temperature", type=FiniteRange(0, 2), default=0.0, show_default=True,
              help="Sampling temperature.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Answers per pair; the rating is their mean.")
@click.option("--pairs-per-request", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Pairs asked in one request (answers read per line).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=4, show_default=True,
              help="Requests in flight at once.")
@click.option("--rate-limit", type=FiniteRange(min=0, min_open=True), default=None,
              help="At most this many requests per second (default: no limit).")
@click.option("--timeout", type=FiniteRange(min=0, min_open=True), default=60.0,
              show_default=True, help="Seconds to wait for one answer.")
@click.option("--retries", type=click.IntRange(min=0), default=5, show_default=True,
              help="Retries of a request after a 429, a 5xx or a time-out (exponential "
                   "backoff, Retry-After honoured).")
@click.option("--dry-run", is_flag=True,
              help="Print the prompt and the number of requests; send nothing.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def rate(pairs, protocol, endpoint, model, out_path, temperature, samples, pairs_per_request,
         concurrency, rate_limit, timeout, retries, dry_run, quiet):
    """Rate the pairs of PAIRS with a machine: an OpenAI-compatible chat-completions endpoint
    (a hosted API, llama.cpp's server, vLLM, Ollama's /v1).

    The prompt is the protocol's own: its raters' instructions with their examples, the
    question of each pair and the scale. Answers are cached beside --out, so a rerun sends
    only what is missing.

    \b
    Example:
        lexgold machine rate pairs.csv --protocol simlex --endpoint http://localhost:11434/v1 \\
            --model llama3.1 --out machine.csv --samples 3 --concurrency 8
    """
    from lexgold.machine import prompt as prompts
    from lexgold.machine.cache import cache_path
    from lexgold.machine.client import KEY_VARIABLE, ChatClient, EndpointError, endpoint_host
    from lexgold.machine.rate import (plan_requests, provenance, rate_pairs, ratings_frame,
                                      unique_pairs, write_ratings)
    from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table

    texts = rater_texts(protocol)
    table = read_pair_table(Path(pairs)).rename(columns=PAIR_COLUMN_ALIASES)
    if not {"word1", "word2"} <= set(table.columns):
        raise click.ClickException(f"{pairs}: no word1, word2 columns "
                                   f"(columns: {', '.join(table.columns)})")
    pair_list = unique_pairs(table)
    repeated = len(table) - len(pair_list)
    digest = prompts.prompt_sha256(texts)
    parameters = {"protocol": protocol, "temperature": temperature, "samples": samples,
                  "pairs_per_request": pairs_per_request}
    if dry_run:
        cached = _cached(cache_path(out_path), model, digest, temperature)
        plan = plan_requests(pair_list, cached, samples=samples,
                             pairs_per_request=pairs_per_request)
        click.echo(f"[system]\n{prompts.system_message(texts)}\n")
        first = [pair_list[i] for i, _ in plan.requests[0]] if plan.requests else pair_list[:1]
        click.echo(f"[user, first request]\n{prompts.user_message(texts, first)}\n")
        click.echo(f"{len(plan.requests)} requests to {endpoint_host(endpoint)} for "
                   f"{plan.to_ask} answers ({len(pair_list)} pairs x {samples} samples, "
                   f"{len(pair_list) * samples - plan.to_ask} cached); dry run: nothing sent")
        return
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    client = ChatClient(endpoint, model, api_key=os.environ.get(KEY_VARIABLE),
                        temperature=temperature, timeout_s=timeout, retries=retries,
                        rate_limit=rate_limit, concurrency=concurrency)
    try:
        plan, sent = rate_pairs(pair_list, texts, client, cache_path(out_path),
                                samples=samples, pairs_per_request=pairs_per_request,
                                concurrency=concurrency,
                                progress=lambda total: progress_bar(
                                    quiet, total=total, desc="machine rate", unit=" answers"))
    except EndpointError as err:
        raise click.ClickException(str(err)) from None
    frame, missing = ratings_frame(pair_list, plan.cached, samples)
    record = provenance(model=model, host=endpoint_host(endpoint),
                        prompt=prompts.prompt_record(texts), prompt_sha256=digest,
                        parameters=parameters, missing=missing, pairs=len(pair_list))
    write_ratings(out_path, frame, record)
    click.echo(f"{out_path}: {len(frame)} of {len(pair_list)} pairs rated by {model} "
               f"({sent} requests sent, "
               f"{len(pair_list) * samples - plan.to_ask} answers from the cache)"
               + (f"; {repeated} pairs given again in PAIRS (either order) asked once"
                  if repeated else ""))
    if missing:
        shown = ", ".join(f"{a}/{b}" for a, b in missing[:5])
        click.echo(f"{len(missing)} pairs unparsable twice, left without a rating: {shown}"
                   + (" ..." if len(missing) > 5 else ""), err=True)


def _cached(path: Path, model: str, digest: str, temperature: float) -> dict:
    """The cached answers without creating a cache (``--dry-run`` writes nothing)."""
    from lexgold.machine.cache import AnswerCache

    if not path.exists():
        return {}
    with AnswerCache(path, model=model, prompt_sha256=digest, temperature=temperature) as cache:
        return cache.answers()

