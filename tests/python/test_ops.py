"""Ops against NumPy in float64, on the host and on WebGPU: odd sizes, size-1 and empty dims,
non-contiguous views, broadcasting, NaN/inf."""
import numpy as np
import pytest

import wgtensor as wgt
from conftest import check, on

F32 = dict(rtol=2e-5, atol=2e-6)


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(device, rng, name):
    x = f32(rng, 7, 13)
    x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    if name == "exp":
        x[1, :2] = [80.0, -100.0]  # near the top of f32's range, underflow to ~0
    got = getattr(wgt, name)(on(device, x))
    with np.errstate(all="ignore"):
        want = UNARY[name](x.astype(np.float64))
    check(got, want, device=device, **F32)


def test_complex_parts(device, rng):
    z = (rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))).astype(np.complex64)
    t = on(device, z)
    got = wgt.conj(t)
    assert got.dtype == "c64" and got.device.startswith(device)
    np.testing.assert_allclose(np.asarray(got), np.conj(z), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(t.conj()), np.conj(z), rtol=1e-6)
    for name, ref in (("real", np.real), ("imag", np.imag), ("abs", np.abs)):
        r = getattr(wgt, name)(t)
        assert r.dtype == "f32", name
        check(r, ref(z.astype(np.complex128)), device=device, **F32)
    x = f32(rng, 3, 4)  # real dtypes: conj and real the input, imag zeros
    check(wgt.conj(on(device, x)), x.astype(np.float64), device=device, **F32)
    check(wgt.imag(on(device, x)), np.zeros((3, 4)), device=device, **F32)


def test_log_sqrt_rsqrt_domain(device, rng):
    x = np.abs(f32(rng, 5, 9)) + 0.01
    x[0, :3] = [0.0, -1.0, np.inf]
    t = on(device, x)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        check(wgt.log(t), np.log(x64), device=device, **F32)
        check(wgt.sqrt(t), np.sqrt(x64), device=device, **F32)
        check(wgt.rsqrt(t), 1 / np.sqrt(x64), device=device, rtol=1e-4, atol=0)


@pytest.mark.parametrize("op,ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                                    ("div", np.divide), ("maximum", np.maximum), ("minimum", np.minimum)])
def test_binary_broadcast(device, rng, op, ref):
    a, b = f32(rng, 3, 1, 5), f32(rng, 4, 1)
    got = getattr(wgt, op)(on(device, a), on(device, b))
    assert got.shape == (3, 4, 5)
    with np.errstate(all="ignore"):
        check(got, ref(a.astype(np.float64), b.astype(np.float64)), device=device, **F32)


def test_operators_and_scalars(device, rng):
    a, b = f32(rng, 6, 5), np.abs(f32(rng, 6, 5)) + 0.5
    ta, tb = on(device, a), on(device, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(ta + tb, a64 + b64, device=device, **F32)
    check(ta - tb, a64 - b64, device=device, **F32)
    check(ta * tb, a64 * b64, device=device, **F32)
    check(ta / tb, a64 / b64, device=device, **F32)
    check(tb ** 2.0, b64 ** 2, device=device, rtol=1e-5, atol=1e-6)
    check(-ta, -a64, device=device, **F32)
    check(abs(ta), np.abs(a64), device=device, **F32)
    check(ta * 3.0 + 1.0, a64 * 3 + 1, device=device, **F32)
    check(2.0 - ta, 2 - a64, device=device, **F32)
    check(1.0 / tb, 1 / b64, device=device, **F32)
    np.testing.assert_array_equal(np.asarray(ta < tb), a < b)
    np.testing.assert_array_equal(np.asarray(ta == ta), np.ones_like(a, dtype=bool))
    assert (ta >= 0.0).dtype == "bool"


def test_python_scalar_takes_tensor_dtype():
    t = wgt.tensor([1, 2, 3], dtype="i32")
    r = t * 2.7  # as the C++ mul(Tensor, double): the scalar becomes an i32 (2)
    assert r.dtype == "i32"
    np.testing.assert_array_equal(np.asarray(r), [2, 4, 6])


def test_pow_where_cast(device, rng):
    a = np.abs(f32(rng, 4, 7)) + 0.1
    b = f32(rng, 4, 7)
    ta, tb = on(device, a), on(device, b)
    check(wgt.pow(ta, tb), a.astype(np.float64) ** b.astype(np.float64), device=device, rtol=1e-4, atol=1e-6)
    check(wgt.where(ta > 1.0, ta, tb), np.where(a > 1, a, b).astype(np.float64), device=device, rtol=0, atol=0)
    x = np.array([1.7, -1.7, 3e9, -3e9, np.nan, 0.0], dtype=np.float32)
    c = wgt.cast(on(device, x), "i32")
    assert c.dtype == "i32"
    # toward zero, saturating, NaN -> 0 (docs/semantics.md)
    np.testing.assert_array_equal(np.asarray(c), [1, -1, 2**31 - 1, -2**31, 0, 0])
    assert on(device, x).astype(np.float16).dtype == "f16"


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions(device, rng, name):
    x = f32(rng, 5, 6, 7, scale=0.5) + (1.0 if name == "prod" else 0.0)
    t = on(device, x)
    ref = getattr(np, name if name not in ("max", "min") else "a" + name)
    x64 = x.astype(np.float64)
    rtol = 1e-4 if name == "prod" else 2e-5
    check(getattr(wgt, name)(t), np.asarray(ref(x64)), device=device, rtol=rtol, atol=1e-5)
    check(getattr(wgt, name)(t, axis=(0, 2), keepdim=True), ref(x64, axis=(0, 2), keepdims=True),
          device=device, rtol=rtol, atol=1e-5)
    check(getattr(t, name)(axis=-1), ref(x64, axis=-1), device=device, rtol=rtol, atol=1e-5)


def test_argmax_and_empty(device, rng):
    x = f32(rng, 6, 11)
    np.testing.assert_array_equal(np.asarray(wgt.argmax(on(device, x), 1)), np.argmax(x, axis=1))
    e = wgt.zeros([0, 3], device=device)
    assert e.shape == (0, 3)
    check(wgt.sum(e, axis=0), np.zeros(3), device=device, rtol=0, atol=0)


@pytest.mark.parametrize("shape_a,shape_b", [((5, 7), (7, 3)), ((2, 3, 9), (9, 4)), ((7,), (7, 5)), ((1, 1), (1, 1))])
def test_matmul(device, rng, shape_a, shape_b):
    a, b = f32(rng, *shape_a), f32(rng, *shape_b)
    got = on(device, a) @ on(device, b)
    check(got, np.matmul(a.astype(np.float64), b.astype(np.float64)), device=device, rtol=1e-4, atol=1e-5)


def test_matmul_t_addmm_noncontiguous(device, rng):
    a, w = f32(rng, 13, 9), f32(rng, 6, 17)
    ta = on(device, a)
    wt = on(device, w).T  # [17, 6] view of w
    assert not wt.is_contiguous
    a64, w64 = a.astype(np.float64), w.astype(np.float64)
    x = ta[:, 3:9]   # a strided view [13, 6]
    check(wgt.matmul(x, on(device, w)), a64[:, 3:9] @ w64, device=device, rtol=1e-4, atol=1e-5)
    check(wgt.matmul_t(ta, on(device, f32(rng, 4, 9) * 0 + 1)), a64 @ np.ones((9, 4)), device=device,
          rtol=1e-4, atol=1e-5)
    c = f32(rng, 13, 17)
    check(wgt.addmm_t(on(device, c), x, wt), c + a64[:, 3:9] @ w64, device=device, rtol=1e-4, atol=1e-5)


def test_softmax_and_norms(device, rng):
    x = f32(rng, 9, 33, scale=3)
    x[0, 5] = -np.inf
    x[1, :] = -np.inf
    t = on(device, x)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        sm = e / e.sum(-1, keepdims=True)
    sm[1, :] = np.nan  # every entry -inf: NaN (docs/semantics.md)
    check(wgt.softmax(t), sm, device=device, rtol=1e-5, atol=1e-6)
    y = f32(rng, 4, 33)
    g, b = f32(rng, 33), f32(rng, 33)
    y64 = y.astype(np.float64)
    rms = y64 / np.sqrt((y64 ** 2).mean(-1, keepdims=True) + 1e-6) * g
    check(wgt.rms_norm(on(device, y), on(device, g)), rms, device=device, rtol=1e-4, atol=1e-5)
    mu, var = y64.mean(-1, keepdims=True), y64.var(-1, keepdims=True)
    ln = (y64 - mu) / np.sqrt(var + 1e-5) * g + b
    check(wgt.layer_norm(on(device, y), on(device, g), on(device, b)), ln, device=device, rtol=1e-4, atol=1e-5)


def test_concat_index_gather(device, rng):
    a, b = f32(rng, 3, 5), f32(rng, 2, 5)
    check(wgt.concat([on(device, a), on(device, b)], 0), np.concatenate([a, b]).astype(np.float64),
          device=device, rtol=0, atol=0)
    idx = np.array([4, 0, 0, 2], dtype=np.int64)
    got = wgt.index_select(on(device, a), 1, on(device, idx))
    check(got, a[:, idx].astype(np.float64), device=device, rtol=0, atol=0)
    gi = rng.integers(0, 5, size=(3, 4)).astype(np.int64)
    check(wgt.gather(on(device, a), 1, on(device, gi)), np.take_along_axis(a, gi, 1).astype(np.float64),
          device=device, rtol=0, atol=0)
    with pytest.raises(wgt.OutOfRange):
        np.asarray(wgt.index_select(on(device, a), 1, on(device, np.array([5], dtype=np.int64))))


def test_creation(device):
    check(wgt.arange(2, 11, 3, device=device), np.arange(2, 11, 3).astype(np.float64), device=device, rtol=0, atol=0)
    check(wgt.full([2, 3], 7.5, device=device), np.full((2, 3), 7.5), device=device, rtol=0, atol=0)
    assert wgt.ones([4], dtype="i64", device=device).dtype == "i64"
    u = np.asarray(wgt.rand_uniform([1000], seed=3, low=-2, high=5, device=device))
    assert u.min() >= -2 and u.max() < 5
    # counter-based: the same values on every backend (to the last bit of the scaling)
    np.testing.assert_allclose(u, np.asarray(wgt.rand_uniform([1000], seed=3, low=-2, high=5)), rtol=1e-6, atol=1e-6)


def test_indexing_views(device, rng):
    x = f32(rng, 4, 5, 6)
    t = on(device, x)
    for key in [1, -1, (slice(None), 2), (Ellipsis, 3), (slice(1, None, 2), None, slice(None, 4)),
                (2, slice(None), slice(0, 6, 4)), (None, Ellipsis, 0)]:
        got = t[key]
        np.testing.assert_array_equal(np.asarray(got), x[key])
        if device == "cpu":
            assert np.shares_memory(np.asarray(got), np.asarray(t))  # views, not copies
    np.testing.assert_array_equal(np.asarray(t[:, [4, 0, 1]]), x[:, [4, 0, 1]])
    np.testing.assert_array_equal(np.asarray(t.permute(2, 0, 1)), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(t.reshape(-1, 6)), x.reshape(-1, 6))
    np.testing.assert_array_equal(np.asarray(t[1:3].contiguous()), x[1:3])
    assert [r.shape for r in t] == [(5, 6)] * 4
    with pytest.raises(IndexError):
        t[4]
    with pytest.raises(wgt.Unsupported):
        t[::-1]
    with pytest.raises(wgt.OutOfRange):
        t[0, 0, 0, 0]
