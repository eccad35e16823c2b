"""``lexgold build simlex|hyperlex|tr9856`` and ``lexgold relations`` (issue #3)."""

import click

from lexgold.cliutil import not_yet_available, out_option, seed_option, usf_option, wordnet_option


@click.group()
def build():
    """Build a candidate pool and sample pairs following a published protocol."""


@build.command()
@usf_option
@seed_option
@out_option
def simlex(usf_dir, seed, out_dir):
    """SimLex-999 (Hill et al. 2015, section 3.1): USF stratification by POS and concreteness.

    \b
    Example:
        lexgold build simlex --seed 1 --out simlex-out
    """
    not_yet_available(3)


@build.command()
@usf_option
@wordnet_option
@seed_option
@out_option
def hyperlex(usf_dir, wordnet_dir, seed, out_dir):
    """HyperLex (Vulic et al. 2017, section 4): WordNet relation pools over USF pairs.

    \b
    Example:
        lexgold build hyperlex --seed 1 --out hyperlex-out
    """
    not_yet_available(3)


@build.command()
@click.option("--corpus", type=click.Path(exists=True),
              help="MediaWiki XML dump (.xml or .bz2) or folder of <title>.txt articles; "
                   "default: gensim's shortened English Wikipedia dump (needs gensim).")
@click.option("--topics", type=click.Path(exists=True, dir_okay=False),
              help="Topics file (TOML) with each topic's S_def terms and articles; "
                   "required with --corpus, default: the topics of the gensim sample.")
@click.option("--protocol", default="tr9856", show_default=True,
              help="Protocol file (or packaged name) whose [build] table sets the parameters.")
@seed_option
@out_option
def tr9856(corpus, topics, protocol, seed, out_dir):
    """TR9856 (Levy et al. 2015, section 3): hypergeometric topic lexicons and term pairs.

    Counts the sentences containing each n-gram term (n = 1..3) in each topic's articles,
    keeps the terms whose Bonferroni-corrected hypergeometric p is <= 0.05 (the topic
    lexicon), and pairs S_def with S_top,n and S_misc,n, plus random S_top x S_misc pairs.
    Writes lexicon.csv, pairs.csv and report.json to --out.

    \b
    Examples:
        lexgold build tr9856 --seed 1 --out tr-out
        lexgold build tr9856 --corpus wiki.xml.bz2 --topics topics.toml --out tr-out
    """
    from lexgold.builder.tr9856 import build_tr9856

    report = build_tr9856(corpus, topics, out_dir, seed=seed, protocol=protocol)
    shortfalls = sum(len(t["shortfalls"]) for t in report["topics"].values())
    click.echo(f"{len(report['topics'])} topics, {report['articles']} articles, "
               f"{report['sentences']} sentences: {report['lexicon_terms']} lexicon terms, "
               f"{report['pairs']} pairs -> {out_dir}"
               + (f" ({shortfalls} shortfalls, see report.json)" if shortfalls else ""))


@click.command()
@click.argument("in_csv", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_csv", type=click.Path(dir_okay=False), required=True)
@wordnet_option
def relations(in_csv, out_csv, wordnet_dir):
    """Label word pairs (word1, word2, pos N/V) with their WordNet relation (HyperLex section 4.1).

    \b
    Example:
        lexgold relations pairs.csv --out labelled.csv
    """
    not_yet_available(3)
