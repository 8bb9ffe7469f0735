"""wgtensor: a tensor runtime with a WebGPU (Dawn) backend and CPU backends.

    import numpy as np, wgtensor as wgt
    x = wgt.from_numpy(np.random.rand(4, 8).astype(np.float32))   # zero-copy host tensor
    y = wgt.softmax(x.to("webgpu") @ x.T.to("webgpu"))              # runs where its inputs live
    print(np.asarray(y))                                            # downloads

Errors are wgtensor.Error subclasses named after the C++ ErrorKind (Unsupported, OutOfMemory,
ShapeMismatch, ...). The policy (where ops run) is wgt.set_policy(...) or, for a block,
`with wgt.policy(mode="cpu-only"):`; `with wgt.trace() as log:` records the decisions.
"""
import contextlib as _contextlib
import functools as _functools

from ._wgtensor import *  # noqa: F401,F403
from ._wgtensor import (Error, Policy, Tensor, _KeepHostOpsOnCpu, _set_policy, _set_record_log,
                        get_policy, trace_log)
from . import _wgtensor

__version__ = _wgtensor.version()

# Every ErrorKind class the extension made (new kinds included), for `except wgt.<Kind>`.
_error_classes = [v for v in vars(_wgtensor).values()
                  if isinstance(v, type) and issubclass(v, Error)]
globals().update({c.__name__: c for c in _error_classes})


def set_policy(policy=None, **fields):
    """Sets the execution policy: a Policy, and/or its fields by name (mode='cpu-only',
    cpu_mode='reference', allow_fallback=False, min_gpu_work=..., memory_budget=..., trace=...).
    Returns the previous policy."""
    previous = get_policy()
    p = get_policy() if policy is None else policy
    for name, value in fields.items():
        if not hasattr(p, name):
            raise InvalidArgument(f"set_policy: Policy has no field '{name}'")  # noqa: F405
        setattr(p, name, value)
    _set_policy(p)
    return previous


@_contextlib.contextmanager
def policy(policy=None, **fields):
    """Context manager: the policy (as set_policy takes it) inside the block, the previous one after."""
    previous = set_policy(policy, **fields)
    try:
        yield get_policy()
    finally:
        _set_policy(previous)


@_contextlib.contextmanager
def keep_host_ops_on_cpu():
    """Context manager: ops on host tensors issued by this thread inside the block run on the
    CPU whatever their work (policy auto's load threshold no longer sends them to WebGPU with
    their inputs uploaded for the call); ops on device tensors and policy gpu-strict are
    unchanged. C++ wgt::KeepHostOpsOnCpu; a model loaded on the CPU holds it by itself."""
    scope = _KeepHostOpsOnCpu()
    scope.enter()
    try:
        yield
    finally:
        scope.exit()


@_contextlib.contextmanager
def trace():
    """Context manager recording every op decision made inside the block: yields a list that is
    filled with {'op', 'backend', 'reason', 'fallback'} dicts when the block ends."""
    log = []
    _set_record_log(False)  # starts an empty record
    _set_record_log(True)
    try:
        yield log
    finally:
        log.extend(trace_log())
        _set_record_log(False)


def _method(fn):
    @_functools.wraps(fn)
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return m


# The ops as Tensor methods too: t.sum(axis=1), t.softmax(), t.exp(), ...
for _name in ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "silu", "gelu",
              "sum", "mean", "max", "min", "prod", "argmax", "softmax", "log_softmax", "matmul",
              "matmul_t", "cast", "maximum", "minimum", "abs", "neg", "rms_norm", "layer_norm", "conj"):
    setattr(Tensor, _name, _method(getattr(_wgtensor, _name)))
del _name

# Classes print as wgtensor.Tensor, not wgtensor._wgtensor.Tensor.
for _cls in vars(_wgtensor).values():
    if isinstance(_cls, type) and _cls.__module__ == "wgtensor._wgtensor":
        _cls.__module__ = "wgtensor"
del _cls
