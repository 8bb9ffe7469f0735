# The README's Python hello world: NumPy in, WebGPU when available, NumPy out.
import numpy as np
import wgtensor as wgt

dev = "webgpu" if wgt.webgpu_available() else "cpu"
x = wgt.from_numpy(np.random.default_rng(1).standard_normal((4, 8), dtype=np.float32))  # zero-copy
w = wgt.rand_normal([16, 8], seed=2)
y = wgt.softmax(wgt.matmul_t(wgt.rms_norm(x.to(dev)), w.to(dev)))  # runs where its inputs live
print(y, "ran on", wgt.last_decision()["backend"])
print(np.asarray(y).sum(axis=-1))  # explicit download; each row sums to 1
try:
    x @ x  # [4, 8] @ [4, 8]
except wgt.ShapeMismatch as e:  # every error is a wgt.Error subclass named after its kind
    print(e.kind, "in", e.op)
