"""Post-processing of raw ratings: calibration, exclusions, agreement, scaling, splits, release."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "process_ratings": "pipeline",
    "run": "pipeline",
    "release_check": "pipeline",
    "ProcessReport": "run_report",
    "BwsReport": "run_report",
    "ProcessConfig": "config",
    "process_config": "config",
    "calibrate": "calibration",
    "calibration_shifts": "calibration",
    "exclusion_table": "exclusions",
    "excluded_raters": "exclusions",
    "rater_agreement": "agreement",
    "iaa_pairwise": "agreement",
    "iaa_against_mean": "agreement",
    "icc": "reliability",
    "krippendorff_alpha": "reliability",
    "pair_estimates": "aggregate",
    "fit_rater_model": "aggregate",
    "trimmed_1sd": "aggregate",
    "gold_scores": "scaling",
    "random_split": "splits",
    "lexical_split": "splits",
    "gold_table": "release",
    "write_release": "release",
    "reliability_curve": "plan",
    "counting_scores": "bws",
    "bt_scores": "bws",
    "process_bws": "bws_release",
    "release_bws": "bws_release",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
