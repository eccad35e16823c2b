"""``croissant.json`` in the release folder: MLCommons Croissant 1.1 with its RAI fields,
validated offline with mlcroissant and read back record by record."""

import hashlib
import json
import socket
from importlib.resources import files

import mlcroissant as mlc
import numpy as np
import pandas as pd
import pytest
import yaml

from lexgold.process.croissant import CONFORMS_TO, croissant
from lexgold.process.pipeline import run
from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs
from lexgold.protocols import load_protocol



def release(tmp_path, protocol, n=40):
    pairs = usf_pairs(n, rng=np.random.default_rng(1)).assign(topic="t1")
    ratings, _ = simulate_ratings(pairs, protocol, rng=np.random.default_rng(2), tranches=0,
                                  raters_per_tranche=12, crowd=Crowd(spammers=0.0))
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    report = run(tmp_path / "ratings.csv", protocol, tmp_path / "out", seed=1, plots=False,
                 bootstrap=0, allow_incomplete=True)
    return tmp_path / "out", report


@pytest.fixture
def offline(monkeypatch):
    """Any network connection fails the test: validation must work offline."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access during validation: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def load(path):
    """mlcroissant's reading of a croissant.json: no error (it raises on one), no warning."""
    dataset = mlc.Dataset(jsonld=path)
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, (issues.errors, issues.warnings)
    return dataset


@pytest.mark.parametrize("protocol, tables", [("simlex999", {"gold", "exclusions"}),
                                              ("hyperlex", {"gold", "exclusions", "splits"}),
                                              ("tr9856", {"gold", "exclusions"})])
def test_croissant_validates_offline_and_reads_the_released_tables(tmp_path, offline,
                                                                   protocol, tables):
    out, report = release(tmp_path, protocol)
    dataset = load(out / "croissant.json")
    sets = {record_set.name for record_set in dataset.metadata.record_sets}
    assert sets == tables
    gold = pd.read_csv(out / "gold.csv", keep_default_na=False)
    records = list(dataset.records("gold"))
    first = gold.columns[0]
    assert [r[f"gold/{first}"].decode() for r in records] == gold[first].tolist()
    assert len(records) == report.counts.released_pairs


def test_distribution_lists_every_file_with_its_sha256(tmp_path, offline):
    out, report = release(tmp_path, "simlex999")
    document = json.loads((out / "croissant.json").read_text())
    assert document["conformsTo"] == CONFORMS_TO == "http://mlcommons.org/croissant/1.1"
    listed = {f["contentUrl"]: f for f in document["distribution"]}
    # every file of the folder but the two that cannot hold their own hash
    assert set(listed) == {p.name for p in out.iterdir()} - {"croissant.json", "SHA256SUMS"}
    for name, entry in listed.items():
        data = (out / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name
        assert entry["contentSize"] == f"{len(data)} B"
    assert listed["SimLex-999.txt"]["encodingFormat"] == "text/tab-separated-values"
    assert "croissant.json" in (out / "SHA256SUMS").read_text()
    assert "croissant.json" in report.files


def test_rai_fields_come_from_the_report_and_the_protocol(tmp_path):
    out, report = release(tmp_path, "simlex999")
    document = json.loads((out / "croissant.json").read_text())
    counts, stages = report.counts, report.counts.stages
    label = load_protocol("simlex999")["study"]["texts"]["native_speaker_label"]
    assert document["rai:annotatorDemographics"][0] == (f"Raters confirmed on the consent page: "
                                                        f"\"{label}\"")
    assert document["rai:dataCollectionTimeFrame"] == [report.dates["first"],
                                                       report.dates["last"]]
    assert document["rai:hasSyntheticData"] is True
    # simulated ratings (lexgold simulate): said first, then what the simulation followed
    assert document["rai:dataCollectionType"] == ["Simulation"]
    assert document["rai:dataCollection"].startswith(
        f"Simulated data: all {stages['raw'].ratings} ratings were drawn from lexgold's "
        "simulated rater model")
    assert (f"Ratings simulated following the protocol of {report.paper}: "
            f"{stages['raw'].raters} raters gave {stages['raw'].ratings} ratings on "
            f"{stages['raw'].pairs} pairs, on a scale of 0-6. The protocol plans 10 tranches "
            "of about 52 raters each.") in document["rai:dataCollection"]
    assert report.protocol_sha256 in document["rai:dataAnnotationProtocol"][0]
    final = report.agreement["final"]
    assert f"final ratings: IAA-1 (mean pairwise Spearman) {final['iaa1']:.3f}" in \
        document["rai:dataAnnotationAnalysis"][1]
    assert (f"{counts.excluded_raters} raters excluded, {stages['final'].raters} accepted"
            in document["rai:dataPreprocessingProtocol"][1])
    # simulated, and incomplete (12 raters, 36 required): its limitations say so first
    assert document["rai:dataLimitations"][0].startswith("Simulated data: all ")
    assert report.warnings and document["rai:dataLimitations"][1] == \
        f"Incomplete release: {report.warnings[0]}."
    assert document["rai:annotationsPerItem"].startswith(
        f"At least {counts.min_raters_per_pair} accepted raters per pair (protocol: 36)")
    assert document["citeAs"].endswith(f"Please also cite {report.paper}.")
    assert "rai:dataAnnotationPlatform" not in document     # ratings from a CSV: not known


def test_no_demographics_claimed_where_the_protocol_collected_none(tmp_path):
    out, report = release(tmp_path, "tr9856")
    protocol = load_protocol("tr9856")
    del protocol["study"]["texts"]["native_speaker_label"]
    document = croissant(out, report, protocol)
    assert document["rai:annotatorDemographics"] == [
        "No demographic information was collected by the protocol."]


# -- what a release states (issue 47) -----------------------------------------------------------

STATEMENTS = {"collection_type": "Lab experiment",
              "recruitment": "Students of the department, paid 10 EUR; written consent",
              "biases": "Pairs of common nouns only",
              "social_impact": "Evaluation data; no personal data",
              "maintenance": "The authors answer errata by e-mail",
              "license": "CC-BY-4.0"}


def plain_release(tmp_path, extra: str = "", *args):
    """WordSim-353 set 1's real ratings (0-10; vendored, lexgold/resources/data/SOURCES.toml),
    released with a plain protocol (rating_scale "declared") plus ``extra`` keys."""
    from test_simulated_label import invoke, real_ratings

    protocol = tmp_path / "ws.toml"
    plain = (files("lexgold.protocols") / "plain.toml").read_text(encoding="utf-8")
    protocol.write_text(plain.replace("[process.release]\n", "[process.release]\n" + extra),
                        encoding="utf-8")
    done = invoke("process", real_ratings(tmp_path), "--protocol", protocol, "--scale", 0, 10,
                  "--out", tmp_path / "out", "--no-plots", "--bootstrap", "0", *args)
    assert done.exit_code == 0, done.output
    return tmp_path / "out", done


def release_text(out) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(out.iterdir())
                     if path.suffix != ".png")


def test_a_plain_release_states_the_scale_used_and_no_placeholder(tmp_path, offline):
    out, done = plain_release(tmp_path, "", "--date-published", "2031-05-06")
    text = release_text(out)
    assert "TODO" not in text and "protocol of none" not in text
    assert "0-6" not in text and "[0, 6]" not in text and "0-10" in text
    document = json.loads((out / "croissant.json").read_text())
    assert ", on a scale of 0-10." in document["rai:dataCollection"]
    assert document["rai:dataPreprocessingProtocol"][2].endswith("on the rating scale 0-10.")
    assert document["rai:dataCollectionType"] == ["not stated"]
    assert "Recruitment and payment: not stated." in document["rai:dataCollection"]
    card = (out / "README.md").read_text()
    assert "on the rating scale 0-10 (not rescaled)" in card and "Scores: 0-10." in card
    # every missing statement named once, on one line, at process time
    named = [line for line in done.output.splitlines() if "not stated in [process.release]" in line]
    assert named == ["Warning: not stated in [process.release]: collection_type, recruitment, "
                     "biases, social_impact, maintenance, license (the dataset card, "
                     "CITATION.cff and croissant.json say \"not stated\"; docs/protocols.md, "
                     "\"Release metadata\")"]
    load(out / "croissant.json")
    # ratings without dates (WordSim-353's): no date to publish unless one is given
    again = tmp_path / "again"
    again.mkdir()
    undated, done = plain_release(again)
    assert "not stated in [process.release]: collection_type, recruitment, biases, " \
           "social_impact, maintenance, license, date_published (" in done.output
    assert "datePublished" not in json.loads((undated / "croissant.json").read_text())


def test_the_authors_statements_reach_card_citation_and_croissant(tmp_path, offline):
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in STATEMENTS.items())
    extra += 'authors = ["Ada Lovelace", "Alan Turing"]\n'
    out, done = plain_release(tmp_path, extra, "--release-version", "2.1.0",
                              "--date-published", "2031-05-06")
    assert "not stated" not in done.output
    # only the card's sentence that explains the words is left
    assert release_text(out).count("not stated") == 1
    document = json.loads((out / "croissant.json").read_text())
    assert document["rai:dataCollectionType"] == ["Lab experiment"]
    assert document["rai:dataBiases"] == [STATEMENTS["biases"]]
    assert document["rai:dataSocialImpact"] == STATEMENTS["social_impact"]
    assert document["rai:dataReleaseMaintenancePlan"] == STATEMENTS["maintenance"]
    assert document["rai:dataCollection"].endswith(
        f"Recruitment and payment: {STATEMENTS['recruitment']}.")
    assert document["license"] == "CC-BY-4.0"
    assert (document["version"], document["datePublished"]) == ("2.1.0", "2031-05-06")
    dataset = load(out / "croissant.json")
    meta = dataset.metadata               # mlcroissant reads each field lexgold writes
    assert meta.version == "2.1.0" and meta.date_published.date().isoformat() == "2031-05-06"
    assert meta.data_biases == [STATEMENTS["biases"]]
    assert meta.data_social_impact == STATEMENTS["social_impact"]
    assert meta.data_release_maintenance_plan == STATEMENTS["maintenance"]
    assert meta.data_collection_type == ["Lab experiment"]
    assert [c.name for c in meta.creators] == ["Ada Lovelace", "Alan Turing"]
    citation = yaml.safe_load((out / "CITATION.cff").read_text())
    assert [a["name"] for a in citation["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert (citation["version"], citation["date-released"], citation["license"]) == (
        "2.1.0", "2031-05-06", "CC-BY-4.0")
    card = (out / "README.md").read_text()
    for value in STATEMENTS.values():
        assert value in card


def test_date_published_defaults_to_the_last_rating_never_the_clock(tmp_path, offline):
    out, report = release(tmp_path, "simlex999")
    document = json.loads((out / "croissant.json").read_text())
    assert document["datePublished"] == report.dates["last"][:10]
    assert document["version"] == "1.0.0"
    meta = load(out / "croissant.json").metadata       # the collection dates, as mlcroissant
    assert [d.strftime("%Y-%m-%dT%H:%M:%SZ") for d in meta.data_collection_timeframe] == \
        [report.dates["first"], report.dates["last"]]
    assert meta.extra_properties == {"rai:hasSyntheticData": True}


def test_a_bad_date_published_is_one_line_naming_the_key(tmp_path):
    from test_simulated_label import invoke, real_ratings

    done = invoke("process", real_ratings(tmp_path), "--protocol", "plain", "--scale", 0, 10,
                  "--out", tmp_path / "out", "--date-published", "6 May 2031")
    assert done.exit_code != 0
    assert "[process.release] date_published: allowed a date YYYY-MM-DD" in done.output
    assert not (tmp_path / "out").exists()


def test_croissant_is_safe_to_embed_in_a_page(tmp_path, offline):
    """A word reaches croissant.json in a warning; its text never ends a <script> element."""
    from dataclasses import replace

    from lexgold.process.croissant import write_croissant

    out, report = release(tmp_path, "simlex999")
    word = "</script><b>&amp;"
    write_croissant(out, replace(report, overlap_warnings=[f"{word} spelled two ways"]))
    raw = (out / "croissant.json").read_text()
    assert "<" not in raw and ">" not in raw and "&" not in raw
    assert "\\u003c/script\\u003e\\u003cb\\u003e\\u0026amp;" in raw
    assert f"{word} spelled two ways" in json.loads(raw)["rai:dataLimitations"]
    load(out / "croissant.json")
