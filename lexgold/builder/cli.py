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
@click.option("--corpus", type=click.Path(exists=True), required=True, help="Corpus of topic articles.")
@click.option("--topics", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Topics file with each topic's S_def terms.")
@seed_option
@out_option
def tr9856(corpus, topics, seed, out_dir):
    """TR9856 (Levy et al. 2015, section 3): hypergeometric topic lexicons and term pairs.

    \b
    Example:
        lexgold build tr9856 --corpus wiki.xml.bz2 --topics topics.toml --out tr-out
    """
    not_yet_available(3)


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
