"""The typed report of a run (:mod:`lexgold.process.run_report`): report.json is its ``to_dict``,
keys in the published order, optional keys left out; the command line's lines come from it."""

from __future__ import annotations

import json

import numpy as np

from lexgold.process.config import ProcessConfig
from lexgold.process.run_report import (BwsCounts, BwsReport, Counts, ProcessReport, ReleaseCheck,
                                    Stage, StudyRef)

#: report.json's keys, in order, of a rating study's release (docs/process.md): the run's
#: figures first, then what the release folder adds
RELEASE_KEYS = ["protocol", "protocol_file", "protocol_sha256", "config", "scale", "aggregate",
                "counts", "agreement", "notes", "release_check", "paper", "language",
                "release_file", "ratings_file", "ratings_source", "study", "seed",
                "pairs_file", "builder_manifest", "norms", "dates", "warnings",
                "overlap_warnings", "files"]


def a_report(**changes) -> ProcessReport:
    """A small report made by hand: 3 of 5 raters kept, 2 pairs."""
    stages = {"raw": Stage(raters=5, ratings=10, pairs=2),
              "calibrated": Stage(raters=5, ratings=10, pairs=2),
              "final": Stage(raters=3, ratings=6, pairs=2)}
    values = dict(
        protocol="SimLex-999", protocol_file="simlex999.toml", protocol_sha256="ab" * 32,
        config=ProcessConfig(), scale={"ratings": [0.0, 6.0], "released": [0.0, 10.0],
                                       "declared": [[0.0, 10.0]], "rescaled": [[0.0, 10.0]],
                                       "warnings": ["one warning"]},
        aggregate={"rule": "mean"},
        counts=Counts(stages=stages, calibrated_raters=1, excluded_raters=2,
                      excluded_by_rule={"checkpoint": 2}, kept_by_cap=0, released_pairs=2,
                      pairs_listed_twice_merged=0, min_raters_per_pair=3),
        agreement={"final": {"iaa1": 0.5, "iaa2": None}}, notes=["a note"],
        release_check=ReleaseCheck(min_raters_per_pair=3, accepted_raters=3, pairs_below=0,
                                   pairs_missing=0, problems=[]),
        release_file="SimLex-999.txt", files=["gold.csv", "SimLex-999.txt"])
    return ProcessReport(**{**values, **changes})


def test_report_json_has_the_published_keys_in_order_and_leaves_out_the_optional_ones():
    report = a_report(study=StudyRef(name="s", protocol_sha256="cd" * 32, pairs=2))
    out = report.to_dict()
    assert list(out) == RELEASE_KEYS
    assert out["counts"]["stages"]["final"] == {"raters": 3, "ratings": 6, "pairs": 2}
    assert out["study"] == {"name": "s", "protocol_sha256": "cd" * 32, "pairs": 2}
    assert out["config"]["release"]["score_max"] == 10.0 and "exclusions" in out["config"]
    # the protocol's split-half and splits, and simulated ratings, add their keys in place
    full = a_report(split_half={"r": 0.9}, transitivity={"spearman": 0.1}, splits={"x": 1},
                    simulated={"ratings": 10, "of": 10, "share": 1.0, "raters": 5}).to_dict()
    assert list(full) == [*RELEASE_KEYS[:9], "split_half", "transitivity", "splits",
                          *RELEASE_KEYS[9:15], "simulated", *RELEASE_KEYS[15:]]


def test_computed_figures_are_written_json_safe_the_inputs_as_given():
    report = a_report(agreement={"final": {"iaa1": float("nan"), "n": np.int64(4)}},
                      dates={"first": "2026-01-01T00:00:00Z", "last": "2026-01-02T00:00:00Z"})
    out = report.to_dict()
    assert out["agreement"] == {"final": {"iaa1": None, "n": 4}}
    assert type(out["agreement"]["final"]["n"]) is int
    assert json.loads(json.dumps(out)) == out


def test_the_command_line_lines_come_from_the_report(tmp_path):
    report = a_report(simulated={"ratings": 10, "of": 10, "share": 1.0, "raters": 5},
                      overlap_warnings=["colour / color"], warnings=["1 of 2 pairs thin"])
    assert report.notice_lines() == [
        "Note: 10 of 10 ratings are simulated (platform 'simulated'): the release says so",
        "Warning: not stated in [process.release]: collection_type, recruitment, biases, "
        "social_impact, maintenance, license, date_published (the dataset card, CITATION.cff "
        "and croissant.json say \"not stated\"; docs/protocols.md, \"Release metadata\")",
        "Warning: colour / color", "Warning: incomplete release: 1 of 2 pairs thin",
        "Note: a note", "Warning: one warning"]
    assert report.summary_lines("gold") == [
        "2 pairs released from 3 of 5 raters (1 calibrated, 2 excluded)",
        "IAA-1 0.500  IAA-2 n/a",
        "ratings declared on 0-10 rescaled linearly to 0-6",
        "release file SimLex-999.txt", "wrote gold.csv, SimLex-999.txt to gold"]
    anonymous = a_report(agreement={"final": {}, "split_half_random": {
        "r": 0.81234, "spearman_brown": 0.9}}, release_file="gold.csv")
    assert anonymous.anonymous
    assert anonymous.summary_lines("out")[:2] == [
        "2 pairs released from 6 anonymous ratings",
        "ratings without rater identity: no IAA-1/IAA-2; split-half on random halves r 0.812 "
        "(Spearman-Brown 0.900)"]


def test_a_bws_report_keeps_its_own_keys_and_lines(tmp_path):
    config = ProcessConfig()
    report = BwsReport(protocol="SimLex-999 BWS", paper="", protocol_sha256="ef" * 32,
                       method="counting", score_range=[0.0, 10.0],
                       counts=BwsCounts(raters=4, raters_excluded=1, raters_accepted=3,
                                        answers=30, tuples=10, pairs=8, answers_per_pair_min=2),
                       exclusion_reasons={"checkpoint": 1}, split_half={
                           "r": np.float64(0.5), "spearman_brown": 2 / 3, "splits": 100},
                       methods_spearman=None, config=config, warnings=[], seed=3,
                       ratings_file="answers.csv", files=["gold.csv"])
    report.write_json(tmp_path / "report.json")
    out = json.loads((tmp_path / "report.json").read_text())
    assert list(out) == ["protocol", "paper", "protocol_sha256", "task", "method",
                         "score_range", "counts", "exclusion_reasons", "split_half",
                         "methods_spearman", "config", "warnings", "seed", "ratings_file",
                         "pairs_file", "release_file", "files"]
    assert out["task"] == "bws" and list(out["config"]) == ["bws", "release"]
    assert out["config"]["bws"]["rules"] == config.bws.rules
    assert report.summary_lines("rel") == [
        "8 pairs released from 30 Best-Worst answers of 3 of 4 raters (1 excluded); counting "
        "scores; split-half r 0.500 (no Spearman-Brown; corrected 0.667)",
        "wrote gold.csv to rel"]
