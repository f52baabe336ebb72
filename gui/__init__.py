"""The sblr-rt dashboard: live session, learned patterns and calibration in one window.

PyQt5 + pyqtgraph. The top layer of the project: it imports ``sblr_rt`` and
``calibration``; nothing imports it. The pure parts (model summary, scalp interpolation,
trial scheduling, snapshot normalisation) live in modules that import no Qt, so they are
tested without a display:

- :mod:`gui.summary` turns a model (file) into the arrays the Model tab draws.
- :mod:`gui.snapshot` normalises the online loop's ``snapshot()`` for the Live tab.
- :mod:`gui.schedule` builds the Graz-style trial sequence of the paradigm window.

The Qt modules: :mod:`gui.app` (main window, ``run``), :mod:`gui.live`,
:mod:`gui.model_view`, :mod:`gui.calibrate_tab`, :mod:`gui.paradigm`, :mod:`gui.scalp`,
:mod:`gui.screenshot`.
"""
