"""The sblr-rt dashboard: live session, learned patterns and calibration in one window.

PyQt5 + pyqtgraph. The top layer of the project: it imports ``sblr_rt`` and
``calibration``; nothing imports it. The pure parts (model summary, scalp interpolation,
trial scheduling, snapshot normalisation) live in modules that import no Qt, so they are
tested without a display:

- :mod:`sblr_rt.gui.summary` turns a model (file) into the arrays the Model tab draws.
- :mod:`sblr_rt.gui.snapshot` normalises the online loop's ``snapshot()`` for the Live tab.
- :mod:`sblr_rt.gui.schedule` builds the Graz-style trial sequence of the paradigm window.

The Qt modules: :mod:`sblr_rt.gui.app` (main window, ``run``), :mod:`sblr_rt.gui.live_tab` (with
:mod:`sblr_rt.gui.live_status` and :mod:`sblr_rt.gui.live_traces`), :mod:`sblr_rt.gui.model_view`
(with :mod:`sblr_rt.gui.model_cv`), :mod:`sblr_rt.gui.calibrate_tab`, :mod:`sblr_rt.gui.paradigm`,
:mod:`sblr_rt.gui.scalp`, :mod:`sblr_rt.gui.screenshot`.
"""
