# Two entry points: `make demo` and `make test`. Both create .venv on first use.
# `make test-min` checks the stated floors: a separate .venv-min at .ci/minimum.txt.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_MIN := .venv-min
export QT_QPA_PLATFORM ?= offscreen

.PHONY: demo test lint test-offline test-live test-min check-wheel docs bench clean

# pip installs uv into .venv, and uv installs the project into both environments: the same
# packages pip would choose, several times faster. The modules are byte-compiled at install,
# as pip does: these machines set PYTHONDONTWRITEBYTECODE, so nothing compiles them later.
UV := $(VENV)/bin/uv
UV_INSTALL := $(UV) pip install --quiet --compile-bytecode

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'uv>=0.5'

$(VENV)/.installed: pyproject.toml | $(UV)
	$(UV_INSTALL) --python $(PY) -e '.[test]'
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed
	$(UV_INSTALL) --python $(PY) -e '.[test,bench]'
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	$(UV_INSTALL) --python $(PY) -e '.[test,docs]'
	touch $@

$(VENV_MIN)/.installed: pyproject.toml .ci/minimum.txt | $(UV)
	rm -rf $(VENV_MIN)
	$(PYTHON) -m venv --without-pip $(VENV_MIN)
	$(UV_INSTALL) --python $(VENV_MIN)/bin/python -c .ci/minimum.txt -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/sblr-rt demo
	$(VENV)/bin/sblr-rt demo --prior --out demo-output/prior

# ruff and ruff-format; the tests marked neither lsl nor gui; then the lsl and gui tests.
test: lint test-offline test-live

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The tests marked neither lsl nor gui on two pytest-xdist workers, each module whole on
# one, those with slow tests first (tests/conftest.py). Ends with its 25 slowest tests.
test-offline: $(VENV)/.installed
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder \
		-m "not lsl and not gui" --durations=25

# The lsl and gui tests on two workers, each module whole on one: they mostly wait on
# real time, and each opens streams of its own names (tests/conftest.py).
test-live: $(VENV)/.installed
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "lsl or gui" \
		--durations=25

# The model and calibration tests at the minimum versions, on two pytest-xdist workers (each
# module whole on one, those with slow tests first); ends with its 15 slowest tests. Two
# modules call no dependency the others do not, and are left to `make test`: the
# adaptation's process life cycle (test_adapt.py: worker processes killed, replaced, run
# below the session) and the search's racing schedule (test_racing.py).
# SCIPY_ARRAY_API=1: scikit-learn 1.6's test utilities refuse to import when
# array-api-compat (a pyriemann dependency) is installed without it; scipy computes the
# same on NumPy arrays.
test-min: $(VENV_MIN)/.installed
	@# every pin of .ci/minimum.txt installed exactly (a line missing from the freeze fails)
	$(UV) pip freeze --quiet --python $(VENV_MIN)/bin/python > $(VENV_MIN)/freeze.txt
	! grep -v -e '^#' -e '^$$' .ci/minimum.txt | grep -ivxF -f $(VENV_MIN)/freeze.txt
	SCIPY_ARRAY_API=1 $(VENV_MIN)/bin/python -m pytest -p no:cacheprovider \
		-n 2 --dist loadfile --no-loadscope-reorder --durations=15 \
		--ignore=tests/calibration/test_adapt.py --ignore=tests/calibration/test_racing.py \
		tests/model tests/calibration tests/test_without_qt.py

# The release as a user gets it: sdist and wheel built from a clean clone of HEAD, the wheel
# checked against the source tree, installed in a fresh venv and used from outside the tree.
check-wheel: $(VENV)/.installed
	$(PY) .ci/check_wheel.py

# The documentation site: user guide, API reference, the gallery (its examples run here,
# a few seconds each) and the benchmark reports; any warning fails the build.
docs: $(VENV)/.installed-docs
	rm -rf docs/_build docs/generated docs/auto_examples
	OPENBLAS_NUM_THREADS=1 $(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

bench: $(VENV)/.installed-bench
	$(PY) benchmarks/solver.py
	$(PY) benchmarks/calibration.py
	$(PY) benchmarks/accuracy.py
	$(PY) benchmarks/stream.py
	$(PY) benchmarks/online.py
	$(PY) benchmarks/dashboard.py
	$(PY) benchmarks/feedback.py

clean:
	rm -rf $(VENV) $(VENV_MIN) build dist *.egg-info docs/_build docs/generated docs/auto_examples
