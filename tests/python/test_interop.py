"""NumPy and DLPack interop: zero-copy where promised (writes visible on both sides), copies
where not, and lifetimes tied both ways (reference counts)."""
import gc
import sys

import numpy as np
import pytest

import wgtensor as wgt


def test_from_numpy_is_zero_copy_and_keeps_the_array_alive():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = sys.getrefcount(a)
    t = wgt.from_numpy(a)
    assert sys.getrefcount(a) == before + 1  # the tensor holds the array
    a[1, 2] = -5.0
    assert np.asarray(t)[1, 2] == -5.0
    np.asarray(t)[0, 0] = 42.0
    assert a[0, 0] == 42.0
    del t
    gc.collect()
    assert sys.getrefcount(a) == before  # released with the tensor


def test_tensor_outlives_the_array_name():
    t = wgt.from_numpy(np.full((100,), 3.25, dtype=np.float64))  # only the tensor refers to the array
    gc.collect()
    assert t.dtype == "f64"
    np.testing.assert_array_equal(np.asarray(t), np.full(100, 3.25))


def test_numpy_view_keeps_the_tensor_storage_alive():
    t = wgt.arange(0, 10)
    a = np.asarray(t)
    b = np.asarray(t)
    assert np.shares_memory(a, b)  # both over the tensor's storage
    del t
    gc.collect()
    wgt.rand_normal([1 << 16], seed=1)  # allocations that would reuse freed memory
    np.testing.assert_array_equal(a, np.arange(10, dtype=np.float32))


def test_strided_arrays_are_views_negative_strides_copy():
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    v = a[1::2, ::3]
    t = wgt.from_numpy(v)
    assert not t.is_contiguous
    assert t.strides == (20, 3)  # elements
    np.testing.assert_array_equal(np.asarray(t), v)
    assert np.shares_memory(np.asarray(t), a)
    r = wgt.from_numpy(a[::-1])
    np.testing.assert_array_equal(np.asarray(r), a[::-1])
    assert not np.shares_memory(np.asarray(r), a)  # a copy: no negative strides here


def test_readonly_nonnative_and_copy_flag_copy():
    a = np.arange(5, dtype=np.float32)
    a.flags.writeable = False
    t = wgt.from_numpy(a)
    assert not np.shares_memory(np.asarray(t), a)
    be = np.arange(5, dtype=">f4")
    np.testing.assert_array_equal(np.asarray(wgt.from_numpy(be)), np.arange(5))
    c = np.arange(5, dtype=np.float32)
    assert not np.shares_memory(np.asarray(wgt.from_numpy(c, copy=True)), c)


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float16, "f16"), (np.float64, "f64"),
                                        (np.int32, "i32"), (np.int64, "i64"), (np.uint8, "u8"),
                                        (np.bool_, "bool"), (np.complex64, "c64")])
def test_dtypes_round_trip(dtype, name):
    a = (np.arange(7) % 3).astype(dtype)
    t = wgt.from_numpy(a)
    assert t.dtype == name
    back = np.asarray(t)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)


def test_unsupported_numpy_dtype_is_a_dtype_error():
    with pytest.raises(wgt.DTypeMismatch):
        wgt.from_numpy(np.arange(3, dtype=np.int16))
    with pytest.raises(TypeError):  # DTypeMismatch is a TypeError too
        wgt.from_numpy(np.arange(3, dtype=np.uint32))


def test_bf16_goes_to_numpy_as_f32():
    t = wgt.tensor([1.5, -2.25]).astype("bf16")
    a = np.asarray(t)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, [1.5, -2.25])


def test_dlpack_both_ways_without_copies():
    t = wgt.rand_normal([4, 6], seed=2)
    a = np.from_dlpack(t)
    assert np.shares_memory(a, np.asarray(t))
    del t
    gc.collect()
    assert a.shape == (4, 6) and np.isfinite(a).all()  # the capsule's owner keeps the storage
    src = np.arange(24, dtype=np.int64).reshape(4, 6)[:, 1:5]
    before = sys.getrefcount(src)
    u = wgt.from_dlpack(src)
    assert u.strides == (6, 1)
    src[0, 0] = -1
    assert np.asarray(u)[0, 0] == -1
    del u
    gc.collect()
    assert sys.getrefcount(src) == before
    assert wgt.from_dlpack(wgt.arange(0, 3)).shape == (3,)


def test_numpy_arrays_pass_where_tensors_are_expected():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.ones((3, 4), dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(wgt.matmul(a, b)), np.full((2, 4), 3.0))
    t = wgt.from_numpy(a)
    np.testing.assert_array_equal(np.asarray(t + a), 2 * a)


def test_webgpu_tensors_download_and_refuse_dlpack(device):
    if device == "cpu":
        return
    t = wgt.arange(0, 6).to("webgpu")
    assert t.__dlpack_device__()[0] != 1  # not host memory
    with pytest.raises(wgt.Unsupported):
        t.__dlpack__()
    np.testing.assert_array_equal(np.asarray(t), np.arange(6))
    assert t.cpu().device == "cpu"


def test_threads_share_the_runtime_without_deadlock(device):
    # Borrowed NumPy memory is released under the GIL while other threads run ops (without the
    # GIL) and read the runtime's stats (which take its lock): none may wait on the other.
    import threading

    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(30):
                a = rng.standard_normal((17, 9)).astype(np.float32)
                t = wgt.from_numpy(a).to(device)
                s = np.asarray(wgt.sum(t * 2.0, axis=1))
                np.testing.assert_allclose(s, 2 * a.sum(axis=1), rtol=1e-4, atol=1e-4)
                wgt.stats()
                del t, a
        except Exception as e:  # reported below: an assertion in a thread would be lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a thread is stuck"
    assert errors == []
