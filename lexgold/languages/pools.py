"""HyperLex-style candidate pools in another language, through a language pack.

The HyperLex builder (:mod:`lexgold.builder.hyperlex`, Vulic et al. 2017, sections 4.1-4.2)
starts from USF cue-target pairs with USF's columns and labels them with a WordNet reader.
Another language has neither, so this module makes the same inputs from what a pack names:

- :func:`usf_like_from_aligned`: the concept-aligned translation of English USF pairs
  (``aligned.csv`` of ``lexgold translate adjudicate``). Each translated pair keeps its English
  pair's USF evidence (#P, FSG, NORMED?) and concreteness (QCON, TCON, 1-7): the concept was
  produced as an associate by that many participants. **Decision**: association strength and
  concreteness carry over through the translation; a pack's own concreteness norms, when named,
  replace the concreteness.
- :func:`usf_like_from_norms`: the language's own association norms (any cue-response-count
  table). Norms carry no POS, so a word's POS is read off the pack's wordnet:
  **Decision** (parameter ``pos_threshold``, 0.75 as SimLex-999's POS tendency, section 3.1): the
  POS holding at least that share of the word's synsets; other words get no POS and their
  pairs are left out (reason ``pos`` in ``pool.csv``).

:func:`build_pack_hyperlex` then runs the builder's own :func:`candidate_pool` and
:func:`build_hyperlex` with the pack's protocol (its ``[build]`` table: word pattern, offensive
lists, quotas) and the pack's wordnet reader.
"""

from __future__ import annotations

import collections

import pandas as pd

from lexgold.errors import InputError

USF_LIKE = ["cue", "target", "qps", "tps", "n_participants", "fsg", "normed", "qcon", "tcon"]


def usf_like_from_aligned(aligned: pd.DataFrame, usf: pd.DataFrame) -> pd.DataFrame:
    """USF-layout rows for translated USF pairs (module docstring, Decision).

    Parameters
    ----------
    aligned : DataFrame
        ``word1, word2, pos, source_word1, source_word2`` (``aligned.csv``).
    usf : DataFrame
        :func:`lexgold.resources.read_usf`.

    Returns
    -------
    DataFrame
        ``cue, target`` (the translations), ``qps = tps`` (the translated pair's POS),
        ``n_participants, fsg, normed, qcon, tcon`` of the English USF pair; a translated pair
        whose English pair is not in USF gets ``n_participants`` 0 (and is then dropped by the
        builder's ``few-participants`` rule, never silently).
    """
    for column in ("word1", "word2", "pos", "source_word1", "source_word2"):
        if column not in aligned.columns:
            raise InputError("missing column of aligned.csv", field=column)
    source = usf.assign(key1=usf["cue"].str.upper(), key2=usf["target"].str.upper())
    source = source.drop_duplicates(["key1", "key2"])[
        ["key1", "key2", "n_participants", "fsg", "normed", "qcon", "tcon"]]
    frame = pd.DataFrame({"cue": aligned["word1"].astype(str),
                          "target": aligned["word2"].astype(str),
                          "qps": aligned["pos"].astype(str), "tps": aligned["pos"].astype(str),
                          "key1": aligned["source_word1"].astype(str).str.upper(),
                          "key2": aligned["source_word2"].astype(str).str.upper()})
    frame = frame.merge(source, on=["key1", "key2"], how="left")
    frame["n_participants"] = frame["n_participants"].fillna(0).astype("Int64")
    frame["normed"] = frame["normed"].astype("boolean").fillna(False)
    return frame[USF_LIKE]


def wordnet_pos(reader, words, threshold: float = 0.75) -> dict[str, str]:
    """Word -> ``N``/``V``/``A`` when that POS holds >= ``threshold`` of its synsets."""
    out = {}
    for word in words:
        counts = collections.Counter()
        for letter, tag in (("n", "N"), ("v", "V"), ("a", "A")):
            counts[tag] = len(reader.synsets(word, letter))
        total = sum(counts.values())
        if total:
            tag, n = counts.most_common(1)[0]
            if n / total >= threshold:
                out[word] = tag
    return out


def usf_like_from_norms(norms: pd.DataFrame, reader, concreteness: pd.DataFrame | None = None,
                        pos_threshold: float = 0.75) -> pd.DataFrame:
    """USF-layout rows for a language's own association norms (module docstring, Decision).

    ``norms`` is :func:`lexgold.languages.norms.read_association_norms`; ``concreteness``
    (``word, conc_m``) fills ``qcon``/``tcon`` when given.
    """
    words = pd.unique(pd.concat([norms["cue"], norms["target"]]).str.lower())
    pos = wordnet_pos(reader, words, pos_threshold)
    frame = norms[["cue", "target", "n_participants", "fsg", "normed"]].copy()
    frame["qps"] = norms["cue"].str.lower().map(pos)
    frame["tps"] = norms["target"].str.lower().map(pos)
    conc = ({} if concreteness is None else
            dict(zip(concreteness["word"].str.lower(), concreteness["conc_m"])))
    frame["qcon"] = norms["cue"].str.lower().map(conc).astype(float)
    frame["tcon"] = norms["target"].str.lower().map(conc).astype(float)
    return frame[USF_LIKE]


def _with_pack_concreteness(usf_like: pd.DataFrame, concreteness: pd.DataFrame | None):
    if concreteness is None:
        return usf_like
    conc = dict(zip(concreteness["word"].str.lower(), concreteness["conc_m"]))
    out = usf_like.copy()
    out["qcon"] = out["cue"].str.lower().map(conc).astype(float)
    out["tcon"] = out["target"].str.lower().map(conc).astype(float)
    return out


def build_pack_hyperlex(pack, usf_like: pd.DataFrame, seed: int = 0,
                        concreteness_source: str | None = None):
    """Pool, pairs and report of the HyperLex builder run with the pack's protocol and wordnet.

    The human check of drawn pairs is skipped here (every drawn pair is accepted as the
    wordnet labels it, as ``lexgold build hyperlex --no-check``); the report says so.

    Returns
    -------
    pool, pairs, report
        As :func:`lexgold.builder.hyperlex.build_hyperlex`.
    """
    from lexgold.builder import common
    from lexgold.builder.hyperlex import (Resources, build_hyperlex, candidate_pool,
                                          labeller_for, load_settings, read_word_list)
    from lexgold.protocols import load_protocol
    from lexgold.resources import usf_concreteness

    protocol = load_protocol(pack.protocol("hyperlex"))
    settings = load_settings(protocol, concreteness_source)
    reader = pack.wordnet()
    labeller = labeller_for(reader, settings)
    lists = [common.resolve(pack.path, p) for p in settings.offensive_lists]
    offensive = set().union(*(read_word_list(p) for p in lists)) if lists else set()
    pack_conc = pack.concreteness()
    usf_like = _with_pack_concreteness(usf_like, pack_conc)
    conc = usf_concreteness(usf_like)
    is_proper = (common.proper_noun_detector(reader) if settings.named_entities == "wordnet"
                 else None)
    res = Resources(usf_like, labeller, conc, offensive, is_proper)
    pool = candidate_pool(usf_like, settings, labeller, offensive, is_proper)
    pool, pairs, _, report = build_hyperlex(res, settings, seed, None, pool)
    info = reader.info() if hasattr(reader, "info") else {"wordnet": "princeton"}
    report["language_pack"] = {"language": pack.language, "path": str(pack.path),
                               "protocol": str(pack.protocol("hyperlex")), "wordnet": info,
                               "human_check": "skipped: every drawn pair accepted as labelled",
                               "concreteness": "pack" if pack_conc is not None else "source"}
    report["seed"] = seed
    return pool, pairs, report
