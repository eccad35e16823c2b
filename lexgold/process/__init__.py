"""Post-processing of raw ratings: calibration, exclusions, agreement, scaling, splits, release."""

from lexgold import lazy_api

_HOMES = {
    "process_ratings": "pipeline", "run": "pipeline", "release_check": "pipeline",
    "ProcessReport": "record", "BwsReport": "record", "ProcessConfig": "config",
    "process_config": "config", "read_ratings": "ratings", "check_ratings": "ratings",
    "calibrate": "calibration", "calibration_shifts": "calibration",
    "exclusion_table": "exclusions", "excluded_raters": "exclusions",
    "rater_agreement": "agreement", "iaa_pairwise": "agreement", "iaa_against_mean": "agreement",
    "icc": "reliability", "krippendorff_alpha": "reliability", "pair_estimates": "aggregate",
    "fit_rater_model": "aggregate", "trimmed_1sd": "aggregate", "gold_scores": "scaling",
    "random_split": "splits", "lexical_split": "splits", "gold_table": "release",
    "write_release": "release", "reliability_curve": "plan", "simulate_ratings": "simulate",
    "counting_scores": "bws", "bt_scores": "bws", "process_bws": "bws_release",
    "release_bws": "bws_release"}
__all__ = ["process_ratings", "run", "release_check", "ProcessReport", "BwsReport",
           "ProcessConfig", "process_config", "read_ratings", "check_ratings", "calibrate",
           "calibration_shifts", "exclusion_table", "excluded_raters", "rater_agreement",
           "iaa_pairwise", "iaa_against_mean", "icc", "krippendorff_alpha", "pair_estimates",
           "fit_rater_model", "trimmed_1sd", "gold_scores", "random_split", "lexical_split",
           "gold_table", "write_release", "reliability_curve", "simulate_ratings",
           "counting_scores", "bt_scores", "process_bws", "release_bws"]

__getattr__, __dir__ = lazy_api(__name__, _HOMES)
