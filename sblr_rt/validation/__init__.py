"""What a setting, a parameter or a file's number accepts: one system of rules.

- :mod:`.limits`: the range of each kind of number (seconds, an epoch's bounds, a rate,
  channels, ...), shared by the command line, configuration files, the Python API and
  model files;
- :mod:`.constraints`: the rule of each setting's type and range (scikit-learn's
  ``_parameter_constraints`` idea), and :func:`~.constraints.apply_constraints`, which
  checks a settings object against a table of them. The preprocessor's parameters
  (:data:`sblr_rt.preprocessing.PARAMETER_RULES`) and the calibration's settings
  (:data:`sblr_rt.calibration.concerns.CONSTRAINTS`) are such tables; the second takes
  the first's rules for the settings they share.

Messages quote the setting, say what was expected and end with what was got: TypeError
for a wrong type, ValueError for a wrong value.
"""
