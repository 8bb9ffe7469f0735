"""Sessions and host mappings from Python: the C++ rules through the binding (one submission
per session, typed errors, zero-copy host mappings, write-back of device mappings)."""
import threading

import numpy as np
import pytest

import wgtensor as wgt


def test_session_is_one_submission(device, rng):
    a = rng.standard_normal(257).astype(np.float32)
    b = rng.standard_normal(257).astype(np.float32)
    ta, tb = wgt.from_numpy(a).to(device), wgt.from_numpy(b).to(device)
    wgt.synchronize()
    with wgt.Session(device) as s:
        y = ta
        for _ in range(6):
            y = y * tb + ta
        assert s.stats()["submissions"] == 0
    st = s.stats()  # before the read below, which is a submission of its own
    if device == "webgpu":
        assert st["submissions"] == 1
        assert st["dispatches"] == 12
    want = a.astype(np.float64)
    for _ in range(6):
        want = want * b + a
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-4, atol=1e-4)


def test_session_exit_by_exception_submits_and_reraises(device):
    t = wgt.from_numpy(np.arange(8, dtype=np.float32)).to(device)
    kept = []
    with pytest.raises(KeyError):
        with wgt.Session(device):
            kept.append(t + 1)
            raise KeyError("leave")
    np.testing.assert_array_equal(np.asarray(kept[0]), np.arange(8, dtype=np.float32) + 1)


def test_session_misuse_is_runtime_state():
    s = wgt.Session("cpu")
    with pytest.raises(wgt.RuntimeState):
        s.flush()
    with s:
        with pytest.raises(wgt.RuntimeState):
            s.__enter__()
    with pytest.raises(wgt.RuntimeState):
        s.synchronize()


def test_other_thread_refused_inside_a_webgpu_session():
    if not wgt.webgpu_available():
        pytest.fail("no WebGPU adapter")
    t = wgt.from_numpy(np.ones(16, dtype=np.float32)).to("webgpu")
    errors = []

    def other():
        try:
            (t + 1).numpy()
        except wgt.Error as e:
            errors.append(e)

    with wgt.Session("webgpu"):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert len(errors) == 1 and isinstance(errors[0], wgt.RuntimeState)


def test_map_read_and_write(device):
    base = np.arange(12, dtype=np.float32)
    t = wgt.from_numpy(base.copy()).to(device)
    with wgt.map_read(t, offset=8, nbytes=16) as m:
        assert m.zero_copy == (device == "cpu")
        assert m.mode == "read"
        np.testing.assert_array_equal(m.array, base[2:6])
        assert not m.array.flags.writeable
    with wgt.map_write(t, offset=4 * 4) as m:
        m.array[:] = -1
    want = base.copy()
    want[4:] = -1
    np.testing.assert_array_equal(np.asarray(t), want)


def test_map_errors(device):
    t = wgt.from_numpy(np.zeros(4, dtype=np.float32)).to(device)
    with pytest.raises(wgt.OutOfRange):
        wgt.map_read(t, offset=4, nbytes=16)
    with pytest.raises(wgt.InvalidArgument):
        wgt.map_read(t, offset=2)
    with pytest.raises(wgt.InvalidArgument):
        wgt.map_read(wgt.from_numpy(np.zeros((3, 2), dtype=np.float32)).to(device).T)
    with wgt.map_write(t) as m:
        with pytest.raises(wgt.RuntimeState):
            t + 1
    m = wgt.map_read(t, nbytes=0)
    assert m.size == 0 and m.array.size == 0
    m.unmap()
    with pytest.raises(wgt.RuntimeState):
        m.unmap()
