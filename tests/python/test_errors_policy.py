"""Errors map to exception classes per ErrorKind; the policy, its context manager, decisions,
stats and trace; info() and the docstrings."""
import re

import numpy as np
import pytest

import wgtensor as wgt
from conftest import _webgpu_required


def test_error_classes_are_the_error_kinds():
    kinds = {c.__name__ for c in wgt.Error.__subclasses__()}
    assert {"InvalidArgument", "ShapeMismatch", "DTypeMismatch", "RankMismatch", "OutOfRange", "Unsupported",
            "OutOfMemory", "DeviceLost", "RuntimeState", "IO", "Format"} <= kinds
    for name in kinds:
        assert getattr(wgt, name).__module__ == "wgtensor"


@pytest.mark.parametrize("call,kind,builtin", [
    (lambda: wgt.matmul(wgt.zeros([2, 3]), wgt.zeros([2, 3])), "ShapeMismatch", ValueError),
    (lambda: wgt.zeros([2]).astype(np.int16), "DTypeMismatch", TypeError),
    (lambda: wgt.zeros([2]).select(0, 5), "OutOfRange", IndexError),
    (lambda: wgt.load_model("/nonexistent/model.gguf"), "IO", OSError),
    (lambda: wgt.QTensor.from_bytes("q8_0", 2, 32, b"\0" * 10), "Format", ValueError),
    (lambda: wgt.softmax(wgt.zeros([2]), 3), "OutOfRange", IndexError),
    (lambda: wgt.set_policy(mode="fastest"), "InvalidArgument", ValueError),
])
def test_errors_map_to_kinds(call, kind, builtin):
    with pytest.raises(builtin) as e:
        call()
    if kind:
        assert isinstance(e.value, wgt.Error)
        assert type(e.value).__name__ == kind
        assert e.value.kind == kind
        assert e.value.op and e.value.message
        assert f"wgt::{kind} in {e.value.op}" in str(e.value)


def test_unsupported_under_gpu_strict(device):
    if device == "cpu":
        return
    with wgt.policy(mode="gpu-strict"):
        with pytest.raises(wgt.Unsupported) as e:
            wgt.zeros([3], dtype="i64")  # WebGPU has no i64 creation kernel
    assert isinstance(e.value, NotImplementedError)


def test_policy_context_manager_restores():
    before = wgt.get_policy()
    with wgt.policy(mode="cpu-only", cpu_mode="reference") as p:
        assert p.mode == "cpu-only" and wgt.get_policy().cpu_mode == "reference"
        with pytest.raises(RuntimeError):
            with wgt.policy(min_gpu_work=5):
                assert wgt.get_policy().min_gpu_work == 5
                raise RuntimeError("leaves the block")
        assert wgt.get_policy().min_gpu_work == before.min_gpu_work
    after = wgt.get_policy()
    assert (after.mode, after.cpu_mode) == (before.mode, before.cpu_mode)
    prev = wgt.set_policy(allow_fallback=False)
    try:
        assert not wgt.get_policy().allow_fallback
    finally:
        wgt.set_policy(prev)


def test_decisions_stats_and_trace(device):
    x = wgt.rand_normal([8, 8], seed=1).to(device)
    wgt.reset_stats()
    with wgt.trace() as log:
        y = wgt.exp(x)
        z = y + y
    assert [d["op"] for d in log][-2:] == ["exp", "add"]
    backend = log[-1]["backend"]
    assert backend.startswith("webgpu") if device == "webgpu" else backend.startswith("cpu")
    assert wgt.last_decision()["op"] == "add"
    s = wgt.stats()
    assert sum(c["calls"] for c in s["per_op"]["exp"].values()) == 1
    assert wgt.trace_log() == []  # recording ends with the block
    with wgt.policy(mode="cpu-only"):
        wgt.exp(x)
        assert wgt.last_decision()["backend"].startswith("cpu")
    del z


def test_keep_host_ops_on_cpu():
    _webgpu_required()
    x = wgt.rand_normal([1000], seed=2)
    with wgt.policy(mode="auto", min_gpu_work=1):
        wgt.add(x, x)
        outside = wgt.last_decision()["backend"]
        with wgt.keep_host_ops_on_cpu():
            wgt.add(x, x)
            inside = wgt.last_decision()
            d = x.to("webgpu")
            wgt.add(d, d)  # device inputs still run on their device
            device_inside = wgt.last_decision()["backend"]
        wgt.add(x, x)
        after = wgt.last_decision()["backend"]
    assert outside == "webgpu:0" and after == "webgpu:0" and device_inside == "webgpu:0"
    assert inside["backend"].startswith("cpu") and "KeepHostOpsOnCpu" in inside["reason"]


def test_info_and_docstrings():
    text = wgt.info()
    assert text.startswith("wgtensor ") and "policy: mode=" in text and "backends: cpu-reference" in text
    assert re.match(r"\d+\.\d+\.\d+", wgt.__version__)
    assert "1-D operands are promoted like" in wgt.matmul.__doc__  # the C++ header's comment
    assert "zero-copy" in wgt.from_numpy.__doc__
    assert wgt.Tensor.sum.__doc__ == wgt.sum.__doc__
    assert np.asarray(wgt.zeros([2]).sum()).shape == ()
