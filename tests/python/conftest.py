"""Shared fixtures of the Python suite: the devices under test and the reference fixtures.

WebGPU cases fail (never skip) when no adapter is found, as the C++ WebGPU tests do;
scripts/test.sh demands lavapipe where there is no GPU (WGT_REQUIRE_ADAPTER)."""
import os
import pathlib

import numpy as np
import pytest

import wgtensor as wgt


def _webgpu_required():
    if not wgt.webgpu_available():
        pytest.fail("no WebGPU adapter: " + wgt.webgpu_unavailable_reason())
    want = os.environ.get("WGT_REQUIRE_ADAPTER", "")
    if want == "lavapipe":
        want = "llvmpipe"
    name = wgt.adapters()[0]["name"]
    if want and want not in name:
        pytest.fail(f"expected an adapter named *{want}*, got {name}")


@pytest.fixture(params=["cpu", "webgpu"])
def device(request):
    """Each test that takes `device` runs on the host and on webgpu:0."""
    if request.param == "webgpu":
        _webgpu_required()
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def fixtures_dir():
    d = os.environ.get("WGTENSOR_TEST_FIXTURES")
    p = pathlib.Path(d) if d else pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
    if not (p / "gold-f16-mha.gguf").exists():
        pytest.fail(f"reference fixtures missing in {p}")
    return p


def on(device, array):
    """A tensor of the array on the device (an explicit upload for webgpu)."""
    t = wgt.tensor(array)
    return t.to(device) if device != "cpu" else t


def check(got, want, rtol, atol, device=None):
    """got (a tensor) against want (NumPy float64), NaN where NaN; got lives on device."""
    if device is not None:
        assert got.device.startswith(device), f"{got} should live on {device}"
    g = np.asarray(got).astype(np.float64)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
