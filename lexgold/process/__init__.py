"""Post-processing of raw ratings: calibration, exclusions, agreement, scaling, splits, release."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "process_ratings": "lexgold.process.pipeline",
    "run": "lexgold.process.pipeline",
    "release_check": "lexgold.process.pipeline",
    "ProcessReport": "lexgold.process.record",
    "BwsReport": "lexgold.process.record",
    "ProcessConfig": "lexgold.process.config",
    "process_config": "lexgold.process.config",
    "read_ratings": "lexgold.process.ratings",
    "check_ratings": "lexgold.process.ratings",
    "calibrate": "lexgold.process.calibration",
    "calibration_shifts": "lexgold.process.calibration",
    "exclusion_table": "lexgold.process.exclusions",
    "excluded_raters": "lexgold.process.exclusions",
    "rater_agreement": "lexgold.process.agreement",
    "iaa_pairwise": "lexgold.process.agreement",
    "iaa_against_mean": "lexgold.process.agreement",
    "icc": "lexgold.process.reliability",
    "krippendorff_alpha": "lexgold.process.reliability",
    "pair_estimates": "lexgold.process.aggregate",
    "fit_rater_model": "lexgold.process.aggregate",
    "trimmed_1sd": "lexgold.process.aggregate",
    "gold_scores": "lexgold.process.scaling",
    "random_split": "lexgold.process.splits",
    "lexical_split": "lexgold.process.splits",
    "gold_table": "lexgold.process.release",
    "write_release": "lexgold.process.release",
    "reliability_curve": "lexgold.process.plan",
    "simulate_ratings": "lexgold.process.simulate",
    "counting_scores": "lexgold.process.bws",
    "bt_scores": "lexgold.process.bws",
    "process_bws": "lexgold.process.bws_release",
    "release_bws": "lexgold.process.bws_release",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
