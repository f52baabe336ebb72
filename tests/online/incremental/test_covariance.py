"""The covariance form's block sums: any chunking, lost and non-finite samples, long runs."""

from __future__ import annotations

import numpy as np
import pytest

from sblr_rt.online import OnlineClassifier
from sblr_rt.online.incremental.covariance import FilteredCovarianceForm, covariance_block_for


@pytest.fixture(scope="module")
def model(make_model):
    """A covariance model, 6 channels at 100 Hz: a window of 100 filtered samples."""
    return make_model(features="covariance", rank=2, n_classes=3, tmin=0.0, tmax=1.0)


def _form_and_data(model, *, capacity, n_samples, block=16, seed=0):
    """A covariance form holding ``capacity`` raw windows, random data; and the window size.

    ``n_samples`` is in raw windows.
    """
    clf = OnlineClassifier(model)
    n_raw = clf.n_times_raw
    form = FilteredCovarianceForm(clf.scoring, capacity * n_raw, block=block)
    rng = np.random.default_rng(seed)
    return form, rng.standard_normal((int(n_samples * n_raw), len(clf.ch_names))), n_raw


def _offline(model, data, stop, n_raw):
    return np.atleast_1d(model.decision_function(data[stop - n_raw : stop].T[None])[0])


@pytest.mark.parametrize("chunk", [1, 7, 33])
@pytest.mark.parametrize("block", [16, 64, None])
def test_block_sums_equal_the_offline_pipeline_for_any_chunking(model, chunk, block):
    """Chunks that do not divide the block, a window that is not a multiple of it."""
    clf = OnlineClassifier(model)
    n_raw, n_window = clf.n_times_raw, model.preprocessor.n_window
    form = FilteredCovarianceForm(clf.scoring, 3 * n_raw, block=block)
    B = form.block
    assert B == (block or covariance_block_for(n_window))
    assert n_window % B or block is None  # the window ends inside a block
    rng = np.random.default_rng(chunk)
    data = rng.standard_normal((4 * n_raw + 29, len(clf.ch_names)))
    compared = 0
    for pos in range(0, len(data), chunk):
        form.push(data[pos : pos + chunk])
        form.settle()
        stop = min(pos + chunk, len(data))
        # The newest window, and one a little behind it (its last block is complete).
        for s in (stop, stop - 5 - stop % 11):
            if s >= n_raw and (s - pos) % 3 == 0:
                np.testing.assert_allclose(
                    form.scores(s), _offline(model, data, s, n_raw), rtol=1e-9, atol=1e-9
                )
                compared += 1
    assert compared > 10


def test_lost_samples_restart_the_blocks(model):
    """Lost samples that do not fill a block: the windows after them equal offline."""
    form, data, n_raw = _form_and_data(model, capacity=3, n_samples=4, seed=2)
    form.push(data[: n_raw + 5])
    form.skip(23)  # indices n_raw + 5 .. n_raw + 27 lost
    data[n_raw + 5 : n_raw + 28] = np.nan  # never read: no window spans them
    for pos in range(n_raw + 28, len(data), 9):
        form.push(data[pos : pos + 9])
        stop = min(pos + 9, len(data))
        if stop - n_raw >= n_raw + 28:
            np.testing.assert_allclose(
                form.scores(stop), _offline(model, data, stop, n_raw), rtol=1e-9, atol=1e-9
            )
    form.skip(10 * n_raw)  # longer than every block kept
    form.push(data[:n_raw])
    np.testing.assert_allclose(
        form.scores(form._n), _offline(model, data, n_raw, n_raw), rtol=1e-9
    )


def test_no_decision_while_a_nonfinite_sample_is_in_the_window(model):
    """A NaN entering and leaving the window: refused while inside, offline's after."""
    clf = OnlineClassifier(model)
    n_raw = clf.n_times_raw
    rng = np.random.default_rng(4)
    data = rng.standard_normal((4 * n_raw, len(clf.ch_names)))
    bad = n_raw + 17
    data[bad, 3] = np.nan
    times = np.arange(len(data)) / clf.sfreq
    state = clf.streaming(capacity=2 * n_raw)
    assert state.form == "filtered-covariance"
    decided = refused = 0
    for pos in range(0, len(data), 7):
        state.push(data[pos : pos + 7], times[pos : pos + 7])
        stop = state.n_pushed
        if stop < n_raw:
            continue
        if stop - n_raw <= bad < stop:
            assert state.why_not(stop) == "nonfinite"
            with pytest.raises(ValueError, match="nonfinite"):
                state.decide(stop)
            refused += 1
        else:
            got = state.decide(stop)["score"]
            np.testing.assert_allclose(got, _offline(model, data, stop, n_raw), rtol=1e-9)
            decided += 1
    assert refused > 10 and decided > 10


def test_no_error_accumulates_over_a_long_run(model):
    """Hundreds of windows and huge bursts long ago: the last windows are still exact.

    A burst 1e100 times the signal would ruin a running sum from which old samples are
    subtracted; one of 1e200 overflows its block (no decision while it is in the window).
    """
    clf = OnlineClassifier(model)
    n_raw, n_window = clf.n_times_raw, model.preprocessor.n_window
    form = FilteredCovarianceForm(clf.scoring, 2 * n_raw, block=16)
    rng = np.random.default_rng(6)
    chunk = 13
    data = rng.standard_normal((2000 * chunk, len(clf.ch_names)))  # 260 windows, 1625 blocks
    bursts = {650: 1e100, 9000: 1e200}
    for i, scale in bursts.items():
        data[i] *= scale
    # The filter bank's FFT rounding (relative to a block's largest sample) reaches up to
    # a block of the bank past the taps: past the warm-up, for a burst this large.
    margin = 2 * form._bank.block
    compared = refused = 0
    for k, pos in enumerate(range(0, len(data), chunk)):
        form.push(data[pos : pos + chunk])
        stop = pos + chunk
        if stop < n_raw or k % 7:
            continue
        if stop - n_window <= 9000 < stop:
            assert not np.isfinite(form.scores(stop)).any()
            refused += 1
        elif all(i < stop - n_raw - margin or i >= stop for i in bursts):
            np.testing.assert_allclose(
                form.scores(stop), _offline(model, data, stop, n_raw), rtol=1e-9, atol=1e-9
            )
            y = form._ring.get(stop - n_window, stop)[0]
            gram, total = form.window_sums(stop)
            np.testing.assert_allclose(gram, y @ y.T, rtol=1e-12, atol=1e-12 * n_window)
            np.testing.assert_allclose(total, y.sum(axis=1), rtol=1e-10, atol=1e-10)
            compared += 1
    assert compared > 200 and refused > 0


def test_a_window_older_than_the_blocks_is_computed_whole(model):
    """The blocks span two windows: an older one is summed from its samples."""
    form, data, n_raw = _form_and_data(model, capacity=8, n_samples=8, seed=8)
    form.push(data)
    for stop in (n_raw, 2 * n_raw + 3, 8 * n_raw - 1):
        np.testing.assert_allclose(
            form.scores(stop), _offline(model, data, stop, n_raw), rtol=1e-9, atol=1e-9
        )
