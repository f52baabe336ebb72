"""The model concept: fitted preprocessing + estimator(s) + metadata, on raw epochs.

Every calibration returns a :class:`BCIModel`, in one of two forms with one interface:

- :class:`SingleModel`: one :class:`~sblr_rt.preprocessing.Preprocessor` and one fitted
  :class:`~sblr_rt.model.SparseBilinearLogisticRegression`;
- :class:`EnsembleModel`: the weighted mean score of two or more single models (the default
  ``auto`` calibration, and a prior refined beside a person's own models).

Both take raw epochs exactly as the recording (or stream) delivers them, in its own channel
order, units and sampling rate, and answer with the user's own class labels (marker values
such as ``"T1"``, or names from the calibration map). Per-member figures read the same in
both: a single model is its own only member, of weight 1 (:attr:`BCIModel.members`). What
the calibration recorded reads through :attr:`BCIModel.record`, a typed :class:`ModelRecord`.

Raw epochs and causal filtering
-------------------------------
A raw epoch holds ``n_times_raw = n_pad + n_window`` samples: ``n_pad`` samples of
filter warm-up (the FIR length minus one; 0 without band-pass) followed by the window
``[tmin, tmax)`` relative to the cue. For a cue at sample ``onset`` that is samples
``onset + round(tmin * sfreq) - n_pad`` up to (excluding) ``onset + round(tmax * sfreq)``
(exactly ``n_times_raw`` of them). The online loop simply takes the latest
``n_times_raw`` samples of its buffer: the decision equals the offline one (to
floating-point rounding) because the causal FIR filter forgets its initial state after
``n_pad`` samples.

Examples
--------
A low-pass model on three channels: each raw epoch carries the filter's warm-up.

>>> import numpy as np
>>> from sblr_rt.model import SparseBilinearLogisticRegression
>>> from sblr_rt.preprocessing import Preprocessor
>>> pre = Preprocessor(ch_names=["C3", "Cz", "C4"], sfreq=100.0, tmin=0.0, tmax=1.0,
...                    h_freq=20.0)
>>> pre.n_pad, pre.n_window, pre.n_times_raw
(66, 100, 166)
>>> rng = np.random.default_rng(1)
>>> y = np.arange(60) % 2
>>> raw = rng.standard_normal((60, 3, pre.n_times_raw))
>>> raw[:, 2, pre.n_pad:] += y[:, None]  # class 1 raises C4 during the window
>>> est = SparseBilinearLogisticRegression(mu1=0.01).fit(pre.fit(raw).transform(raw), y)
>>> model = SingleModel(preprocessor=pre, estimator=est, classes=["rest", "move"])
>>> model.predict(raw[:4]).tolist()
['rest', 'move', 'rest', 'move']
>>> both = EnsembleModel([model, model], weights=[3, 1])
>>> both.member_weights.tolist(), both.predict(raw[:4]).tolist()
([0.75, 0.25], ['rest', 'move', 'rest', 'move'])
"""

from sblr_rt.bci_model.base import BCIModel
from sblr_rt.bci_model.ensemble import EnsembleModel
from sblr_rt.bci_model.metadata import ModelRecord
from sblr_rt.bci_model.single import SingleModel

__all__ = ["BCIModel", "EnsembleModel", "ModelRecord", "SingleModel"]
