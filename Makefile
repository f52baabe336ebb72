# Two entry points: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export QT_QPA_PLATFORM ?= offscreen

.PHONY: demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/sblr-rt demo

test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

bench: $(VENV)/.installed-bench
	$(PY) benchmarks/solver.py
	$(PY) benchmarks/calibration.py
	$(PY) benchmarks/accuracy.py
	$(PY) benchmarks/stream.py
	$(PY) benchmarks/online.py
	$(PY) benchmarks/dashboard.py

clean:
	rm -rf $(VENV) build *.egg-info
