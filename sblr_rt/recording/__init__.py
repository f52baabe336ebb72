"""Recording: LSL EEG and marker streams written to disk as they arrive, crash-safe.

:class:`~sblr_rt.recording.recorder.Recorder` is the one recorder of the project: the
``record`` command, live calibration and the dashboard all use it.
"""
