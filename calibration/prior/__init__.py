"""A prior across people: decide from a new person's first trial, refine with each of theirs.

People differ, but less once each run is centred on its own mean
(:mod:`sblr_rt.model.run_centring`). A **prior** is an ordinary model trained on many
people's run-centred runs: it decides for a new person from the first trial (the new run
is centred causally, as for any run-centred model), and it keeps its training features (a
:class:`~sblr_rt.model.prior_pool.PriorPool`) so that the person's labelled trials can
join them, each with a weight, and the model be refitted toward that person.

- :func:`build_prior` trains a prior on recordings of several people (one run each) and
  reports its leave-one-person-out accuracy per person.
- :func:`adapt_prior` refits a prior with a person's labelled trials (what ``--adapt``
  does after every trial, and what :func:`calibrate(..., prior=...)
  <sblr_rt.calibration.calibrate>` does with few trials).
- :func:`start_from_prior` and :func:`combine_with_prior` are
  :func:`~sblr_rt.calibration.calibrate` with a prior: with fewer than
  ``PriorSettings.auto_min_trials`` trials, the adapted prior is the model; with more, the
  person's own ``auto`` model is calibrated too, and :func:`combine_with_prior` weighs the
  two by the evidence of each on trials it did not train on
  (:mod:`sblr_rt.calibration.member_evidence`).

Examples
--------
>>> from sblr_rt.calibration.prior import PriorSettings
>>> PriorSettings().features, PriorSettings().trial_weight, PriorSettings().half_trials
('covariance', 20.0, 20.0)
"""

from sblr_rt.calibration.prior.build import (
    PriorSettings,
    build_prior,
    check_prior,
    person_of,
    prior_settings,
)
from sblr_rt.calibration.prior.person import (
    MAX_TRIALS,
    PriorStart,
    adapt_prior,
    combine_with_prior,
    first_trials,
    person_part,
    start_from_prior,
)

__all__ = [
    "MAX_TRIALS",
    "PriorSettings",
    "PriorStart",
    "adapt_prior",
    "build_prior",
    "check_prior",
    "combine_with_prior",
    "first_trials",
    "person_of",
    "person_part",
    "prior_settings",
    "start_from_prior",
]
