"""RingBuffer: numpy only, no LSL."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sblr_rt.stream.ring_buffer import RingBuffer


def _chunk(start, n, n_channels=3):
    """Samples whose value is their absolute index (channel c holds index + 1000 c)."""
    idx = np.arange(start, start + n, dtype=np.float64)
    data = idx[:, None] + 1000.0 * np.arange(n_channels)[None, :]
    return data, idx / 100.0


def _expected(start, stop, n_channels=3):
    data, ts = _chunk(start, stop - start, n_channels)
    return data.T, ts


def test_push_and_latest_shapes():
    buf = RingBuffer(3, 10)
    assert buf.n_pushed == 0 and buf.n_available == 0
    window, ts = buf.latest(0)
    assert window.shape == (3, 0) and ts.shape == (0,)
    buf.push(*_chunk(0, 4))
    window, ts = buf.latest(4)
    assert window.shape == (3, 4)
    assert window.flags.c_contiguous
    assert_array_equal(window, _expected(0, 4)[0])
    assert_array_equal(ts, _expected(0, 4)[1])
    assert buf.n_pushed == 4 and buf.n_available == 4 and buf.first_index == 0


def test_wrap_around_irregular_chunks():
    buf = RingBuffer(3, 7)
    rng = np.random.default_rng(0)
    start = 0
    for _ in range(50):
        n = int(rng.integers(0, 6))
        buf.push(*_chunk(start, n))
        start += n
        assert buf.n_pushed == start
        n_read = min(buf.n_available, int(rng.integers(0, 8)))
        window, ts = buf.latest(n_read)
        exp = _expected(start - n_read, start)
        assert_array_equal(window, exp[0])
        assert_array_equal(ts, exp[1])
        lo = buf.first_index
        a = int(rng.integers(lo, start + 1))
        b = int(rng.integers(a, start + 1))
        window, ts = buf.get(a, b)
        assert_array_equal(window, _expected(a, b)[0])
        assert_array_equal(ts, _expected(a, b)[1])


def test_chunk_larger_than_buffer():
    buf = RingBuffer(3, 5)
    buf.push(*_chunk(0, 3))
    buf.push(*_chunk(3, 12))
    assert buf.n_pushed == 15
    assert buf.first_index == 10
    assert_array_equal(buf.latest(5)[0], _expected(10, 15)[0])
    # exactly the capacity, then one more
    buf.push(*_chunk(15, 5))
    assert_array_equal(buf.latest(5)[0], _expected(15, 20)[0])
    buf.push(*_chunk(20, 1))
    assert_array_equal(buf.get(17, 21)[0], _expected(17, 21)[0])


def test_empty_chunk_is_a_no_op():
    buf = RingBuffer(3, 5)
    buf.push(np.empty((0, 3)), np.empty(0))
    assert buf.n_pushed == 0
    buf.push(*_chunk(0, 2))
    buf.push(np.empty((0, 3)), [])
    assert buf.n_pushed == 2


def test_reads_return_copies():
    buf = RingBuffer(3, 5)
    buf.push(*_chunk(0, 5))
    window, ts = buf.latest(5)
    buf.push(*_chunk(5, 5))
    assert_array_equal(window, _expected(0, 5)[0])
    assert_array_equal(ts, _expected(0, 5)[1])


def test_overwritten_and_future_ranges_are_refused():
    buf = RingBuffer(3, 5)
    buf.push(*_chunk(0, 8))
    with pytest.raises(ValueError, match="before index 3 were overwritten"):
        buf.get(2, 6)
    with pytest.raises(ValueError, match="only 8 samples were pushed"):
        buf.get(5, 9)
    with pytest.raises(ValueError, match="'stop' must be >= 'start'"):
        buf.get(6, 5)
    with pytest.raises(ValueError, match="at most the 5 samples held"):
        buf.latest(6)
    with pytest.raises(ValueError, match="'n_times' must be >= 0"):
        buf.latest(-1)
    with pytest.raises(TypeError, match="'start' must be an int"):
        buf.get(1.0, 3)


def test_bad_shapes_and_parameters():
    with pytest.raises(ValueError, match="'capacity' must be >= 1"):
        RingBuffer(3, 0)
    with pytest.raises(TypeError, match="'n_channels' must be an int"):
        RingBuffer(3.0, 10)
    with pytest.raises(TypeError, match="numeric numpy dtype"):
        RingBuffer(3, 10, dtype=object)
    buf = RingBuffer(3, 5)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 3\), got shape \(4, 2\)"):
        buf.push(np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(ValueError, match=r"'timestamps' must have shape \(4,\)"):
        buf.push(np.zeros((4, 3)), np.zeros(3))


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.int32, np.float64])
def test_dtype_is_kept(dtype):
    buf = RingBuffer(2, 4, dtype=dtype)
    buf.push(np.array([[1, 2], [3, 4]]), [0.0, 1.0])
    window, _ = buf.latest(2)
    assert window.dtype == np.dtype(dtype)
    assert_array_equal(window, [[1, 3], [2, 4]])


def test_index_at_time_across_wrap():
    buf = RingBuffer(3, 7)
    with pytest.raises(ValueError, match="No sample pushed yet"):
        buf.index_at_time(0.0)
    buf.push(*_chunk(0, 5))  # timestamps 0.00 .. 0.04
    with pytest.raises(ValueError, match="the first sample pushed"):
        buf.index_at_time(-0.001)
    assert buf.index_at_time(0.0) == 0
    assert buf.index_at_time(0.025) == 2
    assert buf.index_at_time(10.0) == 4
    buf.push(*_chunk(5, 6))  # now holds 4..10, wrapped
    with pytest.raises(ValueError, match="overwritten"):
        buf.index_at_time(0.035)
    for k in range(4, 11):
        assert buf.index_at_time(k / 100.0) == k
        assert buf.index_at_time(k / 100.0 + 0.005) == k
        assert buf.timestamp_at(k) == k / 100.0


def test_wait_for():
    buf = RingBuffer(3, 10)
    assert not buf.wait_for(1, timeout=0.01)
    timer = threading.Timer(0.05, buf.push, args=_chunk(0, 2))
    timer.start()
    assert buf.wait_for(2, timeout=10.0)
    timer.join()


def test_concurrent_push_and_read():
    """A writer and two readers: every window read is internally consistent."""
    n_channels, capacity, n_total = 4, 257, 8_000
    buf = RingBuffer(n_channels, capacity)
    errors = []
    done = threading.Event()

    def writer():
        rng = np.random.default_rng(1)
        start = 0
        while start < n_total:
            n = int(rng.integers(0, 40))
            buf.push(*_chunk(start, n, n_channels))
            start += n
        done.set()

    def reader():
        try:
            while not done.is_set():
                n = min(buf.n_available, 100)
                window, ts = buf.latest(n)
                if n:
                    first = window[0, 0]
                    assert_array_equal(window, _expected(int(first), int(first) + n, 4)[0])
                    assert_array_equal(ts, window[0] / 100.0)
                stop = buf.n_pushed
                start = max(buf.first_index + 50, stop - 30)  # margin: writer moves on
                if start < stop:
                    try:
                        window, _ = buf.get(start, stop)
                    except ValueError as err:
                        assert "overwritten" in str(err)
                    else:
                        assert_array_equal(window, _expected(start, stop, 4)[0])
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=f) for f in (writer, reader, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert buf.n_pushed >= n_total
    assert_array_equal(
        buf.latest(capacity)[0], _expected(buf.n_pushed - capacity, buf.n_pushed, 4)[0]
    )


def test_take_reads_rows_at_absolute_indices_across_the_wrap():
    ring = RingBuffer(2, 5)
    data = np.arange(16, dtype=float).reshape(8, 2)  # samples 0..7, 3 overwritten
    ring.push(data, np.arange(8.0))
    np.testing.assert_array_equal(ring.take([3, 7, 5]), data[[3, 7, 5]])
    with pytest.raises(ValueError, match="overwritten"):
        ring.take([2, 4])
    with pytest.raises(ValueError, match="only 8 samples"):
        ring.take([8])


def test_mirrored_buffer_gives_contiguous_views_across_the_wrap():
    ring = RingBuffer(2, 5, mirrored=True)
    data = np.arange(24, dtype=float).reshape(12, 2)
    for k in range(0, 12, 3):
        ring.push(data[k : k + 3], np.arange(k, k + 3, dtype=float))
    view = ring.rows(8, 12)  # wraps in storage
    assert_array_equal(view, data[8:12])
    assert not view.flags.writeable
    assert_array_equal(ring.get(7, 12)[0], data[7:12].T)  # get still copies, channels first
    with pytest.raises(ValueError, match="overwritten"):
        ring.rows(6, 8)
    with pytest.raises(RuntimeError, match="mirrored=True"):
        RingBuffer(2, 5).rows(0, 0)
