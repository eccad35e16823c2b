"""``lexgold evaluate``, ``lexgold analogy`` and ``lexgold sdt``: thin commands."""

from __future__ import annotations

import json

import click

from lexgold.cliutil import FiniteRange, bootstrap_option, refuse_links, seed_option, usf_option
from lexgold.errors import InputError
from lexgold.evaluate import CASE_POLICIES, DEFAULT_CASE

VECTOR_FORMATS = ("auto", "word2vec", "glove", "word2vec-bin", "gensim")


def vectors_options(function=None, *, several: bool = False):
    """``--vectors``, ``--vectors-format`` and ``--case``; ``several``: --vectors repeatable
    and optional (``lexgold evaluate`` takes --scores files as models too)."""
    if function is None:
        return lambda f: vectors_options(f, several=several)
    function = click.option("--vectors-format", type=click.Choice(VECTOR_FORMATS), default="auto",
                            show_default=True, help="Layout of the vector file.")(function)
    function = click.option("--case", type=click.Choice(list(CASE_POLICIES)),
                            default=DEFAULT_CASE, show_default=True,
                            help="exact-then-lower: the row spelled as the word, else its first "
                                 "lower-cased match; lower: the first row whose lower-cased form "
                                 "matches (gensim's case_insensitive); exact: as written. The "
                                 "first row always wins.")(function)
    return click.option("--vectors", type=click.Path(exists=True, dir_okay=False),
                        required=not several, multiple=several,
                        help="word2vec text/binary, GloVe/fastText text, or gensim "
                             "KeyedVectors file; .gz, .bz2 and .xz are read as they are."
                             + (" Repeat to score several models in one pass per gold file, "
                                "with Steiger's test between each two (--scores files "
                                "included)." if several else "")
                        )(function)


@click.command()
@click.option("--gold", "golds", type=click.Path(exists=True, dir_okay=False),
              multiple=True,
              help="Gold standard: lexgold gold.csv or a published file (.gz, .bz2, .xz read as "
                   "they are). Repeat for several, evaluated in one pass over the vectors.")
@click.option("--gold-format", default="auto", show_default=True,
              type=click.Choice(["auto", "simlex", "hyperlex", "tr9856", "ws353", "simverb",
                                 "men", "rg65", "multisimlex", "plain"]),
              help="Layout of the gold files (auto: recognised from each file's header, "
                   "or from its rows when it has none).")
@click.option("--language",
              help="Multi-SimLex (Concepticon's Vulic-2020-2244.tsv): the language whose pairs "
                   "are evaluated, an ISO code (en, fr, zh, yue ...) or name; default English.")
@click.option("--alternatives", type=click.Choice(["first", "each", "skip"]), default="first",
              show_default=True,
              help="Multi-SimLex: a word given as alternatives x/y: keep the first, make a pair "
                   "for every alternative, or drop the pair (counted in a Note).")
@click.option("--strip-language-prefix/--keep-language-prefix", default=None,
              help="Words written with their language (cross-lingual HyperLex: en_dog "
                   "de_tier): strip the prefix (default: when every word has one and the file "
                   "uses at most two), or keep the words as written.")
@click.option("--duplicates", type=click.Choice(["first", "mean", "error"]), default="first",
              show_default=True,
              help="A pair listed twice in a gold file (warned: how many, the first line): "
                   "keep its first row, one row with the mean score, or stop.")
@click.option("--gold-dir", type=click.Path(exists=True, file_okay=False),
              help="A folder of gold files, subfolders too: lexgold releases (gold.csv beside "
                   "datapackage.json or croissant.json), the catalogue's published files (by "
                   "name or checksum; a modified copy with a warning) and any other file "
                   "--gold reads; other files (README, images, JSON ...) are counted in one "
                   "note. One table is printed over all of them.")
@click.option("--gold-column",
              help="The gold file's header column read as the gold score instead of its "
                   "layout's: human_score, the human-only mean a machine-prior release keeps "
                   "beside its score.")
@vectors_options(several=True)
@click.option("--scores", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="A pair-score file as a model beside --vectors: a CSV of word1, word2 and "
                   "a number (a machine's ratings, lexgold machine rate's output, any model's "
                   "scores; .gz, .bz2, .xz read as they are), on any scale, covering some or "
                   "all pairs. Repeatable; Steiger's test compares it with every other model.")
@click.option("--scores-column",
              help="The --scores files' numeric column (default: the one column of numbers "
                   "besides the words).")
@click.option("--common-vocabulary", is_flag=True,
              help="With several models: score every model on the pairs all of them cover.")
@click.option("--oov", type=click.Choice(["drop", "mean", "zero"]), default="drop",
              show_default=True, help="Out-of-vocabulary words: drop the pair, use the mean "
                                      "vector, or the zero vector (cosine 0). A --scores file's "
                                      "unscored pairs are always dropped.")
@bootstrap_option("n_boot", 1000, "Bootstrap resamples for 95 percent CIs (0: none).")
@click.option("--compare", type=click.Path(exists=True, dir_okay=False),
              help="A second vector file: Steiger's test of the difference on the same pairs.")
@click.option("--binary/--no-binary", default=None,
              help="TR9856 binary task (>= 0.8 vs <= 0.2, 10-fold CV threshold); "
                   "default: on for TR9856 files.")
@click.option("--per-pair", type=click.Path(dir_okay=False), callback=refuse_links,
              help="Write a per-pair CSV, worst-modelled pairs first.")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def evaluate(golds, gold_format, language, alternatives, strip_language_prefix, duplicates,
             gold_dir, gold_column, vectors, case, vectors_format, scores, scores_column,
             common_vocabulary, oov, n_boot, compare, binary, per_pair, seed, as_json):
    """Spearman and Pearson of vector cosines (or a file's pair scores) against a gold
    standard, overall and per subset.

    Coverage is always reported: `pairs` in the gold standard, `covered` with every word in
    the vocabulary. Multi-word terms are the sum of their word vectors. The vector file is
    read once, keeping only the rows of the gold standards' words. With several --gold, JSON
    is a list with one result per gold standard, and --per-pair names each row's file in a
    first column gold_file. A gold file that cannot be read, or whose pairs the vectors do not
    cover at all, is an error for that file: the others are still evaluated, and the exit
    status is 1.

    With several --vectors each model is scored on each gold file (--common-vocabulary: on the
    pairs all of them cover), and Steiger's test compares each two models. --gold-dir
    evaluates every gold file of a folder: lexgold releases, published files, any file --gold
    reads.

    --scores FILE is a model too: a CSV of word1, word2 and a number (a machine's ratings),
    scored on the pairs it gives, beside --vectors models with Steiger's test across all.
    A gold standard whose release was built with a model evaluated here (its report.json names
    the machine, by model or file checksum) draws a warning, kept in the JSON's warnings.

    \b
    Example:
        lexgold evaluate --gold SimLex-999.txt --vectors vectors.txt --json
        lexgold evaluate --gold SimLex-999.txt --gold MEN.txt.gz --vectors wiki.vec.gz
        lexgold evaluate --gold-dir benchmarks/ --vectors a.vec --vectors b.vec --common-vocabulary
        lexgold evaluate --gold simverb.txt --scores gpt4.csv --vectors w2v.bin
    """
    if not golds and not gold_dir:
        raise InputError("give --gold FILE (repeatable) or --gold-dir DIR", field="--gold")
    models = len(vectors) + len(scores)
    if not models:
        raise InputError("give a model: --vectors FILE or --scores FILE (each repeatable)",
                         field="--vectors")
    if scores_column is not None and not scores:
        raise InputError("applies to --scores files; none given", field="--scores-column")
    if models > 1 and compare:
        raise InputError("with several --vectors (or --scores) every two are compared already; "
                         "give the --compare file as another --vectors", field="--compare")
    if common_vocabulary and models < 2:
        raise InputError("needs two or more --vectors (or --scores files)",
                         field="--common-vocabulary")
    from lexgold.evaluate.output import evaluate_one_model, evaluate_several, gold_dir_files
    from lexgold.simulated import gold_file_simulated, note

    for gold in golds:                    # lexgold.simulated: a simulated gold says so
        if gold_file_simulated(gold):
            click.echo(note(f"{gold}: this gold standard's ratings are"), err=True)

    options = {"gold_format": gold_format, "language": language, "duplicates": duplicates,
               "strip_language_prefix": strip_language_prefix, "alternatives": alternatives,
               "vectors_format": vectors_format, "n_boot": n_boot, "binary": binary,
               "seed": seed, "scores_column": scores_column, "gold_column": gold_column}
    if models > 1 or gold_dir:
        known = gold_dir_files(gold_dir, golds) if gold_dir else []
        for match in known:
            if gold_file_simulated(match.path):
                click.echo(note(f"{match.path}: this gold standard's ratings are"), err=True)
        golds = tuple(str(match.path) for match in known) + tuple(golds)
        evaluate_several(list(golds), list(vectors), known, case=case,
                         common_vocabulary=common_vocabulary, oov=oov, compare=compare,
                         per_pair=per_pair, as_json=as_json, scores=list(scores), **options)
        return
    evaluate_one_model(list(golds), vectors[0] if vectors else None, oov=oov, case=case,
                       per_pair=per_pair, as_json=as_json, compare=compare,
                       scores=scores[0] if scores else None, **options)


@click.command()
@click.option("--questions", type=click.Path(exists=True, dir_okay=False), required=True,
              help="questions-words format: ': category' lines, then 'a a* b b*'.")
@vectors_options
@click.option("--method", "methods", multiple=True,
              type=click.Choice(["VANILLA", "ADD", "ONLY-B", "IGNORE-A", "ADD-OPPOSITE",
                                 "MULTIPLY", "REVERSE(ADD)", "REVERSE(ONLY-B)"]),
              help="Method to run (repeat; default: all eight).")
@click.option("--restrict-vocab", type=click.IntRange(min=1), default=300_000, show_default=True,
              help="Read and use only the first N words of the file, as candidates and for "
                   "lookup (gensim's restrict_vocab).")
@click.option("--multiply", type=click.Choice(["shifted", "literal"]), default="shifted",
              show_default=True,
              help="MULTIPLY as Levy & Goldberg's 3CosMul (cosines shifted to [0, 1], "
                   "eps 0.001) or Linzen's Eq. 8 as printed (raw cosines).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def analogy(questions, vectors, case, vectors_format, methods, restrict_vocab, multiply,
            as_json):
    """Analogy accuracy per method and category (Linzen 2016).

    Questions with an out-of-vocabulary word are skipped and counted (`counts`).
    Solve seconds exclude loading. MULTIPLY is 3CosMul (Levy & Goldberg 2014), not Linzen's
    Eq. 8 as printed, unless --multiply literal; the output says which.

    \b
    Example:
        lexgold analogy --questions questions-words.txt --vectors vectors.txt --method ADD
    """
    import pandas as pd

    from lexgold.evaluate.analogy import METHODS, ROLES, read_questions, solve
    from lexgold.evaluate.output import clean_json, fmt
    from lexgold.evaluate.vectors import case_warning, read_vectors

    table = read_questions(questions)
    model = read_vectors(vectors, vectors_format, limit=restrict_vocab)
    message = case_warning(model, pd.unique(table[list(ROLES)].to_numpy().ravel()), case)
    if message:
        click.echo(f"Warning: {message}", err=True)
    result = solve(table, model, methods or METHODS, case=case, restrict_vocab=restrict_vocab,
                   multiply=multiply, in_place=True)     # the vectors serve nothing else here
    if as_json:
        click.echo(json.dumps(clean_json(result), indent=2))
        return
    chosen = methods or METHODS
    click.echo(f"{'category':32s} {'covered':>13s} " + " ".join(f"{m:>15s}" for m in chosen))
    for category, count in result["counts"].items():
        cells = " ".join(f"{fmt(result[m][category]):>15s}" for m in chosen)
        click.echo(f"{category:32s} {count['covered']:>6d}/{count['questions']:<6d} {cells}")
    click.echo(f"{'seconds':32s} {'':13s} "
               + " ".join(f"{result['seconds'][m]:>15.3f}" for m in chosen))
    if "multiply" in result:
        click.echo(f"MULTIPLY: {result['multiply']['formula']}")


@click.command()
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Plain text, one sentence (or document) per line.")
@click.option("--doc-size", type=click.IntRange(min=1), default=10, show_default=True,
              help="Lines per LSA document (the paper's best: 10 sentences).")
@click.option("--trainer", default="lsa", show_default=True,
              help="lsa, random (chance baseline), or package.module:function.")
@click.option("--dim", type=click.IntRange(min=1), default=300, show_default=True, help="Semantic dimensions.")
@click.option("--min-count", type=click.IntRange(min=1), default=10, show_default=True,
              help="Vocabulary: words seen at least this often (split words always kept).")
@click.option("--words", type=click.Choice(["overlap", "band"]), default="overlap",
              show_default=True,
              help="overlap: split every USF cue in the vocabulary (the paper's main setup, "
                   "section 2.2); band: draw --n-words from a frequency band (section 3).")
@click.option("--freq-min", type=click.IntRange(min=0), default=40, show_default=True,
              help="--words band: split words have count > freq-min ...")
@click.option("--freq-max", type=click.IntRange(min=1), default=400, show_default=True, help="... and < freq-max.")
@click.option("--n-words", type=click.IntRange(min=1), default=500, show_default=True,
              help="--words band: words to split.")
@click.option("--max-overlap", type=FiniteRange(0, 1), default=0.10, show_default=True,
              help="--words band: at most this share of the drawn words may be in the overlap "
                   "set (the paper: 10%; 1 = no rule).")
@click.option("--stopwords", default="snowball", show_default=True,
              help="Stop list dropped from the corpus before the vocabulary is counted: "
                   "snowball (the Snowball English list packaged with lexgold), none, or a "
                   "file of words, one per line.")
@click.option("--median-rank", is_flag=True,
              help="Also train on the original corpus and report the median rank of the "
                   "first three USF associates.")
@usf_option
@click.option("--per-word", type=click.Path(dir_okay=False), callback=refuse_links,
              help="Write per-word AUCs (CSV).")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def sdt(ctx, corpus, doc_size, trainer, dim, min_count, words, freq_min, freq_max, n_words,
        max_overlap, stopwords, median_rank, usf_dir, per_word, seed, as_json):
    """Pseudo-synonym same-different test, SDT-rho (Fourtassi & Dupoux 2014).

    \b
    Example:
        lexgold sdt --corpus lee_background.cor --doc-size 1 --dim 100 --min-count 3 --json
        lexgold sdt --corpus lee_background.cor --words band --freq-min 10 --n-words 200
    """
    from lexgold.evaluate.output import clean_json, fmt
    from lexgold.evaluate.sdt import sdt_files

    if words == "overlap":
        for name in ("freq_min", "freq_max", "n_words", "max_overlap"):
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                option = "--" + name.replace("_", "-")
                raise InputError("applies only to --words band (--words overlap splits "
                                 "every overlap word)", field=option)
    result = sdt_files(corpus, seed=seed, doc_size=doc_size, trainer=trainer, dim=dim,
                       min_count=min_count, words=words, freq_min=freq_min, freq_max=freq_max,
                       n_words=n_words, max_overlap=max_overlap, stopwords=stopwords,
                       median_rank=median_rank, usf_dir=usf_dir)
    table = result.pop("per_word")
    if per_word:
        table.to_csv(per_word, index=False)
    if as_json:
        click.echo(json.dumps(clean_json(result), indent=2))
        return
    if words == "overlap":
        chosen = f"overlap words (USF cues with count >= {min_count})"
    else:
        chosen = (f"words with {freq_min} < count < {freq_max}, {result['in_overlap']} in the "
                  "overlap set")
    click.echo(f"SDT-rho {fmt(result['sdt_rho'])} ({result['scored']} of {result['words']} "
               f"{chosen}; vocabulary {result['vocabulary']}; stop list "
               f"{result['stopwords']['list']})")
    if "median_rank" in result:
        m = result["median_rank"]
        click.echo("median rank of associates 1-3: "
                   + ", ".join(fmt(v) for v in m["median_ranks"])
                   + f"; Median Rank {fmt(m['median_rank'])} over {m['overlap']} cues")
