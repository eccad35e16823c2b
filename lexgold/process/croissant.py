"""``croissant.json``: the release folder described in MLCommons Croissant 1.1, with its
Responsible-AI (RAI) fields.

Croissant (Akhtar et al. 2024, "Croissant: A Metadata Format for ML-Ready Datasets"; the
specification at http://mlcommons.org/croissant/1.1) is JSON-LD on schema.org's Dataset. The
file written here has:

- the dataset's name, description, language, ``version`` and ``datePublished``
  (``[process.release]`` ``version`` and ``date_published``, else the last rating's date),
  ``creator`` and ``citeAs`` (``[process.release] authors``, and the protocol's paper) and
  ``license`` (``[process.release] license``); a statement the authors did not make is
  written "not stated" (:data:`lexgold.protocols.release.NOT_STATED`);
- ``distribution``: one ``cr:FileObject`` per released file, with its size and SHA-256
  (``SHA256SUMS`` and ``croissant.json`` itself are not listed: a file cannot hold its own hash);
- ``recordSet``: one per comma-separated table (``gold.csv``, ``exclusions.csv``,
  ``splits.csv``), one ``cr:Field`` per column with its type, read by column name;
- the RAI fields, filled from ``report.json`` and the protocol: ``rai:dataCollection``,
  ``rai:dataCollectionType`` (``[process.release] collection_type``; "Simulation" for
  simulated ratings, with ``rai:hasSyntheticData``), ``rai:dataCollectionTimeFrame``,
  ``rai:dataCollectionRawData``,
  ``rai:annotatorDemographics`` (only what the study asked: the protocol's native-speaker
  confirmation; nothing else is collected), ``rai:dataAnnotationProtocol``,
  ``rai:dataAnnotationPlatform``, ``rai:annotationsPerItem``, ``rai:dataAnnotationAnalysis``
  (agreement), ``rai:dataPreprocessingProtocol`` (calibration, exclusions, scale),
  ``rai:dataLimitations``, ``rai:dataUseCases``, ``rai:personalSensitiveInformation``, and the
  authors' statements ``rai:dataBiases``, ``rai:dataSocialImpact`` and
  ``rai:dataReleaseMaintenancePlan`` (``[process.release]`` ``biases``, ``social_impact``,
  ``maintenance``). Scales are the ones used (``report.json`` ``scale``).

Like the other files of the folder it is computed from the report and the files only, never
from the clock. Its text escapes ``<``, ``>`` and ``&`` (:func:`to_json`), so that it can be
embedded in a dataset page. ``mlcroissant`` validates it offline (the context is inline; every
``contentUrl`` is a relative path).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from lexgold import __version__
from lexgold.compression import sha256_file
from lexgold.process.run_report import BwsReport, ProcessReport, cites_paper, following
from lexgold.process.machine_mode import croissant_fields
from lexgold.process.simulated_label import statement
from lexgold.protocols.release import NOT_STATED

CONFORMS_TO = "http://mlcommons.org/croissant/1.1"

#: the JSON-LD context of Croissant 1.1 (the specification's recommended context)
CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs", "column": "cr:column", "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject", "fileSet": "cr:fileSet", "format": "cr:format",
    "includes": "cr:includes", "isArray": "cr:isArray", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5",
    "name": {"@container": "@language"}, "parentField": "cr:parentField", "path": "cr:path",
    "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex",
    "repeated": "cr:repeated", "replace": "cr:replace", "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source",
    "subField": "cr:subField", "transform": "cr:transform",
}

#: media type of each released file, by name or suffix
MEDIA = {".csv": "text/csv", ".json": "application/json", ".md": "text/markdown",
         ".cff": "text/plain", ".png": "image/png", ".txt": "text/plain"}
TABLES = {"gold.csv": ("gold", "The gold standard, one row per pair (comma-separated)."),
          "exclusions.csv": ("exclusions", ("Every excluded rater, the rule and the figures "
                                            "behind it.")),
          "splits.csv": ("splits", "The train/dev/test split of each pair.")}
#: the tables of a Best-Worst Scaling release (:mod:`lexgold.process.bws_release`)
BWS_TABLES = {"gold.csv": TABLES["gold.csv"],
              "scores.csv": ("scores", ("Per pair: answers, times chosen best and worst, the "
                                        "counting and Bradley-Terry scores, the released score "
                                        "and its interval.")),
              "tuples.csv": ("tuples", ("Every accepted answer: the tuple, its pairs as shown, "
                                        "the best and worst positions (to rescore).")),
              "exclusions.csv": TABLES["exclusions.csv"]}
USES = {"simlex": "Evaluating how well models capture genuine similarity between words "
                  "(intrinsic evaluation of word representations).",
        "hyperlex": "Evaluating graded lexical entailment (type-of relations) in models.",
        "tr9856": "Evaluating term relatedness of multi-word terms in models."}


def croissant(out: Path, report: ProcessReport, protocol: dict | None = None) -> dict:
    """The Croissant 1.1 description of the release folder ``out`` (module docstring).

    Parameters
    ----------
    out : Path
        The release folder; every file named in ``report.files`` that exists is hashed.
    report : dict
        ``report.json`` of the run.
    protocol : dict, optional
        The loaded protocol (its ``[study]`` settings and texts fill the collection fields).

    Returns
    -------
    dict
        JSON-LD, ready for :func:`to_json`.
    """
    out, protocol = Path(out), protocol or {}
    name = report.protocol
    dataset = _dataset(
        out, report, title=f"{name} gold standard (built with lexgold)",
        description=(statement(report.simulated) + " " if report.simulated else "")
        + f"{report.counts.released_pairs} word pairs rated by "
          f"{report.counts.stages['final'].raters} accepted raters, "
          f"{following(report.paper, name)}. See README.md (dataset card) and report.json.",
        language=report.language or "en", keywords=["word pairs", "gold standard", "lexgold"],
        tables=TABLES, published=date_published(report))
    dataset.update(_rai(report, protocol))
    return dataset


def date_published(report: ProcessReport) -> str:
    """``[process.release] date_published``, else the date of the last rating (never the
    clock); "" when neither is known."""
    return (report.config.release.date_published
            or ((report.dates or {}).get("last") or "")[:10])


def to_json(document: dict) -> str:
    """JSON text safe to embed in an HTML ``<script type="application/ld+json">``: ``<``,
    ``>`` and ``&`` written as JSON escapes (a word's ``</script>`` cannot end the element).

    >>> text = to_json({"w": "</script>&"})
    >>> "<" in text, json.loads(text)["w"]
    (False, '</script>&')
    """
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            + "\n")


def write_croissant(out: Path, report: ProcessReport | BwsReport,
                    protocol: dict | None = None) -> str:
    """Write ``croissant.json`` into ``out`` (:func:`croissant`, or :func:`bws_croissant` for
    a Best-Worst Scaling report); return its name."""
    describe = bws_croissant if isinstance(report, BwsReport) else croissant
    (Path(out) / "croissant.json").write_text(to_json(describe(out, report, protocol)),
                                              encoding="utf-8")
    return "croissant.json"


def bws_croissant(out: Path, report: BwsReport, protocol: dict | None = None) -> dict:
    """The Croissant 1.1 description of a Best-Worst Scaling release folder: the fields of
    :func:`croissant`, with the tables of :data:`BWS_TABLES` and RAI fields from the BWS
    report (answers, tuples, split-half reliability, Kiritchenko and Mohammad 2017)."""
    out, protocol = Path(out), protocol or {}
    counts, simulated = report.counts, report.simulated
    dataset = _dataset(
        out, report,
        title=f"{report.protocol} gold standard (Best-Worst Scaling, built with lexgold)",
        description=(statement(simulated, "Best-Worst answers") + " " if simulated else "")
        + f"{counts.pairs} word pairs scored from {counts.answers} Best-Worst answers by "
          f"{counts.raters_accepted} accepted raters, "
          f"{following(report.paper, report.protocol)}. See README.md (dataset card) and "
          "report.json.",
        language="en", keywords=["word pairs", "gold standard", "best-worst scaling", "lexgold"],
        tables=BWS_TABLES, published=report.config.release.date_published)
    dataset.update(_bws_rai(report, protocol))
    return dataset


def _dataset(out: Path, report, *, title: str, description: str, language: str,
             keywords: list[str], tables: dict, published: str) -> dict:
    """The fields every lexgold release's Croissant has, before its RAI fields: name,
    description, licence, citation, language, keywords (``simulated data`` added for a
    simulated release), version, files, tables, date published and creators."""
    release = report.config.release
    paper = report.paper if cites_paper(report.paper) else ""
    dataset = {
        "@context": CONTEXT, "@type": "sc:Dataset", "name": title, "description": description,
        "conformsTo": CONFORMS_TO,
        "license": release.stated("license"),
        "citeAs": (f"{', '.join(release.authors)}: {report.protocol} gold standard, version "
                   f"{release.version}." if release.authors else "Authors not stated.")
                  + (f" Please also cite {paper}." if paper else ""),
        "inLanguage": language,
        "keywords": [*keywords, *(["simulated data"] if report.simulated else [])],
        "version": release.version,
        "distribution": _distribution(out, report),
        "recordSet": _record_sets(out, report, tables),
    }
    if published:
        dataset["datePublished"] = published
    if release.authors:
        dataset["creator"] = [{"@type": "sc:Person", "name": author}
                              for author in release.authors]
    return dataset


def _collection(collection: str, release, simulated: dict | None,
                noun: str = "ratings") -> dict:
    """``rai:dataCollection`` and ``rai:dataCollectionType`` (and ``rai:hasSyntheticData``):
    the authors' recruitment and collection type, or, where ``simulated``
    (:mod:`lexgold.process.simulated_label`: people gave some or none of the ``noun``), what
    was simulated by which lexgold."""
    stated_type = release.collection_type.strip() or NOT_STATED
    if not simulated:
        return {"rai:dataCollection": (f"{collection} Recruitment and payment: "
                                       f"{release.stated('recruitment')}."),
                "rai:dataCollectionType": [stated_type]}
    return {"rai:dataCollection": (f"{statement(simulated, noun)} {collection} Simulated by "
                                   f"lexgold {__version__}."),
            "rai:dataCollectionType": (["Simulation"] if simulated["share"] == 1
                                       else [stated_type, "Simulation"]),
            "rai:hasSyntheticData": True}


def _distribution(out: Path, report: ProcessReport) -> list[dict]:
    files = []
    for name in report.files:
        path = out / name
        if name in ("SHA256SUMS", "croissant.json") or not path.is_file():
            continue
        media = MEDIA.get(path.suffix.lower(), "application/octet-stream")
        if name == report.release_file and name != "gold.csv" and \
                report.config.release.format in ("simlex", "tr9856"):
            media = "text/tab-separated-values"
        files.append({"@type": "cr:FileObject", "@id": name, "name": name,
                      "contentUrl": name, "encodingFormat": media,
                      "contentSize": f"{path.stat().st_size} B",
                      "sha256": sha256_file(path)})
    return files


def _data_type(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "sc:Boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "sc:Integer"
    if pd.api.types.is_numeric_dtype(dtype):
        return "sc:Float"
    return "sc:Text"


def _record_sets(out: Path, report, tables: dict = TABLES) -> list[dict]:
    sets = []
    for file, (name, description) in tables.items():
        if file not in report.files or not (out / file).is_file():
            continue
        table = pd.read_csv(out / file, keep_default_na=False, na_values=[""])
        fields = [{"@type": "cr:Field", "@id": f"{name}/{column}", "name": str(column),
                   "dataType": _data_type(dtype),
                   "source": {"fileObject": {"@id": file}, "extract": {"column": str(column)}}}
                  for column, dtype in table.dtypes.items()]
        sets.append({"@type": "cr:RecordSet", "@id": name, "name": name,
                     "description": description, "field": fields})
    return sets


def _bws_rai(report: BwsReport, protocol: dict) -> dict:
    """The RAI fields of a Best-Worst Scaling release, from its report and protocol."""
    release, counts, half = report.config.release, report.counts, report.split_half
    design = (protocol.get("study") or {}).get("bws") or {}
    simulated = report.simulated
    verb = "simulated" if simulated and simulated["share"] == 1 else "collected"
    collection = (f"Best-Worst answers {verb} {following(report.paper, report.protocol)}: "
                  f"{counts.raters} raters answered {counts.tuples} tuples of "
                  f"{design.get('tuple_size', '?')} pairs covering {counts.pairs} pairs.")
    fields = _collection(collection, release, simulated, "Best-Worst answers")
    if report.ratings_file:
        fields["rai:dataCollectionRawData"] = (f"The answers: {report.ratings_file}; not part "
                                               "of this release (tuples.csv holds the "
                                               "accepted ones).")
    fields["rai:annotatorDemographics"] = ["No demographic information was collected by the "
                                           "protocol."]
    fields["rai:dataAnnotationProtocol"] = [
        (f"Protocol {report.protocol} (sha256 {report.protocol_sha256}), "
         f"{following(report.paper, report.protocol)}."),
        "Task: Best-Worst Scaling: in each tuple of pairs the rater picks the most and the "
        "least related pair."]
    fields["rai:annotationsPerItem"] = (f"At least {counts.answers_per_pair_min} accepted "
                                        f"answers per pair; {counts.answers} answers to "
                                        f"{counts.tuples} tuples.")
    fields["rai:dataAnnotationAnalysis"] = [
        f"Split-half reliability (Kiritchenko and Mohammad 2017, mean of {half['splits']} "
        f"splits): {_figure(half.get('r'))}; Spearman-Brown corrected "
        f"{_figure(half.get('spearman_brown'))}."]
    low, high = report.score_range
    reasons = report.exclusion_reasons
    fields["rai:dataPreprocessingProtocol"] = [
        "Exclusion rules: " + (", ".join(f"{rule} ({count})" for rule, count in reasons.items())
                               if reasons else "none")
        + f"; {counts.raters_excluded} raters excluded, {counts.raters_accepted} accepted "
          "(exclusions.csv).",
        f"Score: {report.method}, mapped linearly onto {low:g}-{high:g}."]
    limitations = [statement(simulated, "Best-Worst answers")] if simulated else []
    limitations += [f"Incomplete release: {warning}." for warning in report.warnings]
    limitations.append("Scores are relative positions within the tuples answered and carry "
                       "their sampling error (see scores.csv's intervals).")
    fields["rai:dataLimitations"] = limitations
    fields["rai:dataBiases"] = [release.stated("biases")]
    fields["rai:dataUseCases"] = ["Evaluating models on scored word pairs."]
    fields["rai:dataSocialImpact"] = release.stated("social_impact")
    fields["rai:personalSensitiveInformation"] = [
        "gold.csv and scores.csv hold no rater information; tuples.csv and exclusions.csv name "
        "raters by the rater ID of the study."]
    fields["rai:dataReleaseMaintenancePlan"] = release.stated("maintenance")
    return fields


def _figure(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _rai(report: ProcessReport, protocol: dict) -> dict:
    """The RAI fields (Croissant RAI 1.0 vocabulary, ``rai:``) from the report and protocol."""
    counts, stages = report.counts, report.counts.stages
    config, release = report.config, report.config.release
    study = protocol.get("study") or {}
    texts = study.get("texts") or {}
    dates = report.dates or {}
    rated, scored = report.scale["ratings"], report.scale["released"]
    raw = report.ratings_file or {}
    simulated = report.simulated
    verb = "simulated" if simulated and simulated["share"] == 1 else "collected"
    collection = (f"Ratings {verb} {following(report.paper, report.protocol)}: "
                  f"{stages['raw'].raters} raters gave {stages['raw'].ratings} ratings "
                  f"on {stages['raw'].pairs} pairs, on a scale of "
                  f"{rated[0]:g}-{rated[1]:g}")
    collection += "."
    if study.get("tranches"):
        collection += (f" The protocol plans {study['tranches']} tranches of about "
                       f"{study.get('raters_per_tranche', '?')} raters each.")
    fields = _collection(collection, release, simulated)
    if dates.get("first") and dates.get("last"):
        fields["rai:dataCollectionTimeFrame"] = [dates["first"], dates["last"]]
    if raw:
        fields["rai:dataCollectionRawData"] = (
            f"The ratings: {raw.get('name', '?')}"
            + (f" (sha256 {raw['sha256']})" if raw.get("sha256") else "")
            + f", source {report.ratings_source or '?'}; not part of this release.")
    label = texts.get("native_speaker_label")
    fields["rai:annotatorDemographics"] = (
        [f"Raters confirmed on the consent page: \"{label}\"",
         "No other demographic information was collected."] if label else
        ["No demographic information was collected by the protocol."])
    fields["rai:dataAnnotationProtocol"] = [
        (f"Protocol {report.protocol_file} (sha256 {report.protocol_sha256}), "
         f"{following(report.paper, report.protocol)}."),
        (f"Task: {study.get('task', 'rating')}; ratings on {rated[0]:g}-{rated[1]:g}; "
         f"{len(study.get('checkpoints') or [])} checkpoint questions.")]
    if report.ratings_source in ("study", "export"):
        fields["rai:dataAnnotationPlatform"] = [f"lexgold's crowd-rating site (lexgold {__version__})"
                                                + (", answered by simulated raters (`lexgold "
                                                   "study rehearse`)" if simulated else "")]
    fields["rai:annotationsPerItem"] = (
        f"At least {counts.min_raters_per_pair} accepted raters per pair (protocol: "
        f"{release.min_raters_per_pair}); {stages['final'].ratings} accepted ratings "
        f"on {stages['final'].pairs} pairs.")
    agreement = report.agreement
    fields["rai:dataAnnotationAnalysis"] = [
        f"{stage} ratings: IAA-1 (mean pairwise Spearman) {_figure(agreement[stage]['iaa1'])}, "
        f"IAA-2 (rater vs mean of the others) {_figure(agreement[stage]['iaa2'])}"
        for stage in ("raw", "final") if stage in agreement]
    rules = config.exclusions.rules
    fields["rai:dataPreprocessingProtocol"] = [
        (f"Calibration: {counts.calibrated_raters} raters shifted "
         f"({json.dumps(asdict(config.calibration), sort_keys=True)})."),
        "Exclusion rules: " + (", ".join(f"{rule} ({counts.excluded_by_rule.get(rule, 0)})"
                                         for rule in rules) if rules else "none")
        + f"; {counts.excluded_raters} raters excluded, {stages['final'].raters} "
          "accepted (exclusions.csv).",
        ("Score: the mean of a pair's accepted ratings"
         + (f" mapped linearly from [{rated[0]:g}, {rated[1]:g}] to [{scored[0]:g}, "
            f"{scored[1]:g}]." if list(rated) != list(scored) else
            f", on the rating scale {rated[0]:g}-{rated[1]:g}."))]
    limitations = [statement(simulated)] if simulated else []
    limitations += [f"Incomplete release: {warning}." for warning in report.warnings]
    limitations += [str(note) for note in report.overlap_warnings]
    limitations.append("Scores are means over the accepted raters of each pair and carry "
                       "their sampling error (see the agreement figures).")
    fields["rai:dataLimitations"] = limitations
    fields["rai:dataBiases"] = [release.stated("biases")]
    fields["rai:dataUseCases"] = [USES.get(release.format,
                                           "Evaluating models on rated word pairs.")]
    fields["rai:dataSocialImpact"] = release.stated("social_impact")
    fields["rai:personalSensitiveInformation"] = [
        ("gold.csv holds no rater information; exclusions.csv names each excluded rater by "
         "the rater ID of the study.")]
    fields["rai:dataReleaseMaintenancePlan"] = release.stated("maintenance")
    if report.machine:            # lexgold.process.machine_mode: the machine is named
        fields.update(croissant_fields(report.machine))
        if report.machine["mode"] == "prior":
            limitations.append(
                f"Scores are the empirical-Bayes posterior of human ratings and a machine's "
                f"({report.machine.get('model') or 'unrecorded model'}); do not evaluate that "
                f"model, or models trained on its output, on them: use human_score.")
    return fields
