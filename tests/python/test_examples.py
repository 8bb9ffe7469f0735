"""The README's Python hello world is examples/hello_world.py, and it runs."""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_shows_the_example():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert (ROOT / "examples" / "hello_world.py").read_text() in blocks


def test_hello_world_runs(device):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "hello_world.py")], env=dict(os.environ),
                         capture_output=True, text=True, timeout=120, check=True).stdout
    lines = out.splitlines()
    assert re.match(r"Tensor\(f32, \[4, 16\], (webgpu:0|cpu)\) ran on ", lines[0])
    if device == "webgpu":  # an adapter exists: the example must have used it
        assert "ran on webgpu:0" in lines[0]
    sums = [float(v) for v in lines[1].strip("[]").split()]
    assert len(sums) == 4 and all(abs(v - 1) < 1e-5 for v in sums)
    assert lines[2] == "ShapeMismatch in matmul"
