"""Post-processing of raw ratings: calibration, exclusions, agreement, scaling, splits, release."""
