"""Recording: LSL EEG and marker streams written to disk as they arrive, crash-safe.

:class:`~sblr_rt.recorder.recorder.Recorder` is the one recorder of the project: the
``record`` command, live calibration and the dashboard all use it. Inside:
:mod:`~sblr_rt.recorder.sidecar` (the folder written while recording),
:mod:`~sblr_rt.recorder.export` (sidecar -> FIF, atomic) and
:mod:`~sblr_rt.recorder.recovery` (a killed recording's sidecar -> FIF).
"""

from sblr_rt.recorder.recorder import Recorder
from sblr_rt.recorder.recovery import default_out, recover
from sblr_rt.recorder.sidecar import read_sidecar, sidecar_path, volts_per_unit

__all__ = [
    "Recorder",
    "default_out",
    "read_sidecar",
    "recover",
    "sidecar_path",
    "volts_per_unit",
]
