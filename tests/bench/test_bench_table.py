#!/usr/bin/env python3
"""Unit tests of bench/bench_table.py (ctest `bench_table`; standard library only).

data/kernels/ is a recorded `scripts/bench_suite.sh --smoke --part kernels` run on lavapipe
(the records as the bench programs write them); the other cases build small result folders
in a temporary directory, with values the assertions recompute."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import bench_table as bt  # noqa: E402

DATA = os.path.join(HERE, "data")


def results(root, name, records, meta=None, raw_tail=""):
    """A results folder with these records (dicts) and meta.json; raw_tail is appended as is."""
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "records.jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        f.write(raw_tail)
    with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta if meta is not None else {"part": name, "smoke": False, "date": "2026-12-05 10:00 UTC",
                                                 "host": "h", "revision": "abc", "gpu": "GPU X"}, f)
    return d


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def rec(bench, case, metric, unit, value, engine, **extra):
    r = {"bench": bench, "case": case, "metric": metric, "unit": unit, "value": value, "engine": engine}
    r.update(extra)
    return r


def row_of(table, what, shape):
    """The cells of the table line whose first two cells are what and shape."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 7 and cells[0] == what and cells[1].startswith(shape):
            return cells
    raise AssertionError(f"no row {what!r} / {shape!r} in\n{table}")


class RecordedSmokeRun(unittest.TestCase):
    def test_every_record_has_the_format(self):
        records, metas = bt.load([os.path.join(DATA, "kernels")])
        self.assertGreater(len(records), 10)
        for r in records:
            for k in ("bench", "case", "metric", "unit", "value", "engine"):
                self.assertIn(k, r)
        self.assertTrue(metas[0]["smoke"])

    def test_smoke_table_uses_the_smoke_cases(self):
        records, metas = bt.load([os.path.join(DATA, "kernels")])
        want = [r for r in records if r["bench"] == "matmul" and r["case"] == "f32 nn 128x128x128"
                and r.get("variant") == "auto"][-1]
        table = bt.render(records, metas)
        cells = row_of(table, "matmul 4096³ (TFLOP/s)", "f32 nn, npm Dawn")
        self.assertEqual(cells[2], bt.fmt(want["value"]))
        self.assertIn("smoke: f32 nn 128x128x128", cells[1])
        self.assertIn("SMOKE", table)
        # No PyTorch in a smoke run: the comparison is missing, not dropped, and has no ratio.
        self.assertEqual(cells[3], f"cuBLAS (torch): {bt.MISSING}")
        self.assertEqual(cells[4], "")
        # The models part did not run: its rows are there, marked.
        self.assertEqual(row_of(table, "prompt, pp512 (t/s)", "llama2-7b Q4_0")[2], bt.MISSING)
        self.assertEqual(table.count("\n| "), len(bt.ROWS) + 1)  # header + one line per row


class Parsing(unittest.TestCase):
    def test_truncated_line_is_skipped_and_the_rest_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = results(tmp, "kernels", [rec("bandwidth", "copy 256MiB", "wall_bandwidth", "GB/s", 3800.0, "npm")],
                        raw_tail='{"bench": "bandwidth", "case": "add 256')
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                records, _ = bt.load([d])
        self.assertEqual(len(records), 1)
        self.assertIn("not JSON", err.getvalue())

    def test_folder_without_records_or_meta(self):
        with tempfile.TemporaryDirectory() as tmp:
            records, metas = bt.load([tmp])
            self.assertEqual(records, [])
            self.assertIn("no meta.json", "\n".join(bt.stamp(metas)))

    def test_later_folder_wins_and_median_aggregate_preferred(self):
        sel = bt.Sel("cpu", "BM_OpAddF32/1", "time", "cpu")
        recs = [rec("cpu", "BM_OpAddF32/1", "time", "ms", 30.0, "cpu", aggregate=""),
                rec("cpu", "BM_OpAddF32/1", "time", "ms", 28.0, "cpu", aggregate="median"),
                rec("cpu", "BM_OpAddF32/1", "time", "ms", 1.5, "cpu", aggregate="stddev")]
        self.assertEqual(bt.find(recs, sel, False)["value"], 28.0)
        self.assertEqual(bt.find(recs[:1] + [rec("cpu", "BM_OpAddF32/1", "time", "ms", 25.0, "cpu")], sel, False)["value"], 25.0)

    def test_engine_and_variant_select(self):
        sel = bt.Sel("matmul", "f16 nn 4096x4096x4096", "rate", "debian", where={"variant": "auto"})
        recs = [rec("matmul", "f16 nn 4096x4096x4096", "rate", "TFLOP/s", 118.0, "debian", variant="auto"),
                rec("matmul", "f16 nn 4096x4096x4096", "rate", "TFLOP/s", 90.0, "debian", variant="sgmat=64x64x32x2x2"),
                rec("matmul", "f16 nn 4096x4096x4096", "rate", "TFLOP/s", 41.0, "npm", variant="auto")]
        self.assertEqual(bt.find(recs, sel, False)["value"], 118.0)
        self.assertIsNone(bt.find(recs[1:2], sel, False))

    def test_null_value_counts_as_missing(self):
        sel = bt.Sel("attention", "decode kv4096", "wall_time", "npm")
        self.assertIsNone(bt.find([rec("attention", "decode kv4096", "wall_time", "us", None, "npm")], sel, False))


class Formatting(unittest.TestCase):
    def test_three_significant_figures_and_std_like_the_value(self):
        self.assertEqual(bt.fmt(2092.4), "2092")
        self.assertEqual(bt.fmt(39.64), "39.6")
        self.assertEqual(bt.fmt(1.2093), "1.21")
        self.assertEqual(bt.fmt(0.0012345), "0.00123")
        self.assertEqual(bt.figure({"value": 2070.0, "std": 0.5}, 1), "2070 ± 0")
        self.assertEqual(bt.figure({"value": 58.1, "std": 1.234}, 1), "58.1 ± 1.2")
        self.assertEqual(bt.figure({"value": 37800.0}, 1e-3), "37.8")


class Ratios(unittest.TestCase):
    def test_rate_is_ours_over_theirs(self):
        o, t = rec("m", "c", "pp512", "t/s", 2092.0, "npm"), rec("m", "c", "pp512", "t/s", 25475.0, "torch")
        self.assertAlmostEqual(bt.speed_ratio(o, t), 2092.0 / 25475.0)

    def test_time_is_theirs_over_ours(self):
        o, t = rec("s", "c", "time", "us", 58.1, "npm"), rec("s", "c", "time", "us", 93.6, "torch")
        self.assertAlmostEqual(bt.speed_ratio(o, t), 93.6 / 58.1)

    def test_no_ratio_across_units_or_without_direction(self):
        self.assertIsNone(bt.speed_ratio(rec("a", "c", "m", "us", 1.0, "npm"), rec("a", "c", "m", "ms", 1.0, "torch")))
        self.assertIsNone(bt.speed_ratio(rec("a", "c", "m", "bytes", 1.0, "npm"), rec("a", "c", "m", "bytes", 2.0, "t")))
        self.assertIsNone(bt.speed_ratio(rec("a", "c", "m", "us", 0.0, "npm"), rec("a", "c", "m", "us", 2.0, "t")))

    def test_full_run_row_with_both_sides(self):
        with tempfile.TemporaryDirectory() as tmp:
            k = results(tmp, "models", [
                rec("model", "llama2-7b q4_0", "tg128 @ d512", "t/s", 180.0, "npm", std=9.0),
                rec("model", "llama2-7b fp16", "tg128 @ d512", "t/s", 42.8, "torch 2.9 cuda 12.8", std=0.4),
                rec("sparse", "spmv laplacian", "time", "us", 58.1, "npm"),
                rec("sparse", "spmv laplacian", "time", "us", 93.6, "torch 2.9 cuda 12.8 cusparse")])
            records, metas = bt.load([k])
        table = bt.render(records, metas)
        cells = row_of(table, "decode, tg128 @ d512 (t/s)", "llama2-7b Q4_0")
        self.assertEqual(cells[2], "180 ± 9")
        self.assertEqual(cells[3], "PyTorch fp16 (HF eager) 42.8 ± 0.4")
        self.assertEqual(cells[4], f"{180.0 / 42.8:.2f}")
        cells = row_of(table, "SpMV (µs)", "Laplacian")
        self.assertEqual(cells[4], f"{93.6 / 58.1:.2f}")
        # The Debian row of the same model was not measured: marked, not filled from npm's.
        self.assertEqual(row_of(table, "decode, tg128 @ d512 (t/s)", "llama2-7b Q4_0, Debian")[2], bt.MISSING)
        self.assertNotIn("SMOKE", table)


    def test_result_that_failed_its_check_is_not_a_figure(self):
        with tempfile.TemporaryDirectory() as tmp:
            k = results(tmp, "kernels", [
                rec("attention", "prefill seq4096 q16 attention_prefill_sg", "rate", "TFLOP/s", 86.3, "debian",
                    check="failed", max_rel_err=0.133, bound=0.01),
                rec("attention", "prefill seq4096", "rate", "TFLOP/s", 2.66, "npm", check="ok", max_rel_err=3e-5,
                    bound=1e-3),
                rec("attention", "prefill seq4096", "rate", "TFLOP/s", 525.0, "torch 2.11 cuda 13.0")])
            records, metas = bt.load([k])
        table = bt.render(records, metas)
        cells = row_of(table, "prefill attention (TFLOP/s, wall)", "seq 4096 causal, 32/8 heads")
        self.assertEqual(cells[2], "invalid: wrong results (max rel err 0.13 > 0.01)")
        self.assertEqual(cells[4], "")  # no ratio for an invalid result
        self.assertNotIn("86.3", table)
        cells = row_of(table, "prefill attention (TFLOP/s, wall)", "seq 4096 causal, 32 heads")
        self.assertEqual(cells[2], "2.66")  # a passed check is an ordinary figure
        self.assertEqual(cells[4], f"{2.66 / 525.0:.2f}")


class Markers(unittest.TestCase):
    DOC = "# Benchmarks\n\nintro\n\n{b}\nold table line\n| a | b |\n{e}\n\nafter\n"

    def test_only_the_region_is_replaced(self):
        text = self.DOC.format(b=bt.BEGIN, e=bt.END)
        new = bt.rewrite(text, "NEW TABLE\n")
        self.assertEqual(new, text.replace("old table line\n| a | b |\n", "NEW TABLE\n"))
        self.assertEqual(bt.rewrite(new, "NEW TABLE\n"), new)  # idempotent

    def test_missing_or_misordered_markers(self):
        with self.assertRaises(ValueError):
            bt.rewrite("no markers\n", "x\n")
        with self.assertRaises(ValueError):
            bt.rewrite(self.DOC.format(b=bt.END, e=bt.BEGIN), "x\n")

    def test_write_through_main(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = results(tmp, "kernels", [rec("bandwidth", "copy 256MiB", "wall_bandwidth", "GB/s", 3822.0, "npm")])
            doc = os.path.join(tmp, "B.md")
            with open(doc, "w", encoding="utf-8") as f:
                f.write(self.DOC.format(b=bt.BEGIN, e=bt.END))
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(bt.main([d, "--write", doc]), 0)
            text = read(doc)
            self.assertTrue(text.startswith("# Benchmarks\n\nintro\n\n" + bt.BEGIN + "\n"))
            self.assertTrue(text.endswith(bt.END + "\n\nafter\n"))
            self.assertNotIn("old table line", text)
            self.assertEqual(row_of(text, "copy, 256 MiB f32 (GB/s)", "contiguous")[2], "3822")

    def test_write_without_markers_fails_and_leaves_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = results(tmp, "kernels", [])
            doc = os.path.join(tmp, "B.md")
            with open(doc, "w", encoding="utf-8") as f:
                f.write("no markers\n")
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(bt.main([d, "--write", doc]), 1)
            self.assertEqual(read(doc), "no markers\n")

    def test_smoke_run_is_not_written_without_allow_smoke(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = os.path.join(tmp, "B.md")
            with open(doc, "w", encoding="utf-8") as f:
                f.write(self.DOC.format(b=bt.BEGIN, e=bt.END))
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
                bt.main([os.path.join(DATA, "kernels"), "--write", doc])
            self.assertIn("old table line", read(doc))
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(bt.main([os.path.join(DATA, "kernels"), "--write", doc, "--allow-smoke"]), 0)
            self.assertIn("SMOKE", read(doc))


if __name__ == "__main__":
    unittest.main()
