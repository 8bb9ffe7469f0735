"""JSON-lines benchmark records for the Python benchmark scripts (torch_*.py), in the format of
bench/bench_json.hpp: one object per measurement, appended to the file given by --json.
Standard library only (the scripts import torch themselves)."""
import json
import math


class Records:
    """Appends records to `path` (nothing when path is None). `engine` is written into each one."""

    def __init__(self, path, engine):
        self.path = path
        self.engine = engine

    def emit(self, bench, case, metric, unit, value, std=None, **extra):
        if not self.path:
            return
        rec = {"bench": bench, "case": case, "metric": metric, "unit": unit,
               "value": value if value is not None and math.isfinite(value) else None}
        if std is not None and math.isfinite(std):
            rec["std"] = std
        rec["engine"] = self.engine
        rec.update(extra)
        # Open and close per record: what was measured before a timeout stays in the file.
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


def torch_engine(torch):
    """'torch <version> cuda <version>': the engine field of the PyTorch records."""
    return f"torch {torch.__version__} cuda {torch.version.cuda}"
