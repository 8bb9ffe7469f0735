"""nn ops and blocks against NumPy float64, quantized tensors, and the model runtime on the
reference fixture (HF logits and greedy output)."""
import json

import numpy as np
import pytest

import wgtensor as wgt
from conftest import check, on


def np_attention(q, k, v, causal=True):
    q_len, n_heads, d = q.shape
    kv_len, n_kv = k.shape[:2]
    out = np.zeros_like(q)
    for h in range(n_heads):
        g = h // (n_heads // n_kv)
        s = q[:, h] @ k[:, g].T / np.sqrt(d)
        if causal:
            s = s + np.where(np.arange(kv_len)[None, :] <= (kv_len - q_len + np.arange(q_len))[:, None], 0, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        out[:, h] = (w / w.sum(-1, keepdims=True)) @ v[:, g]
    return out


def np_rope(x, offset, base=10000.0):
    seq, heads, d = x.shape
    out = x.copy()
    for s in range(seq):
        for i in range(d // 2):
            th = (offset + s) * base ** (-2 * i / d)
            a, b = x[s, :, 2 * i], x[s, :, 2 * i + 1]
            out[s, :, 2 * i] = a * np.cos(th) - b * np.sin(th)
            out[s, :, 2 * i + 1] = a * np.sin(th) + b * np.cos(th)
    return out


def test_attention_gqa_causal(device, rng):
    q = rng.standard_normal((3, 4, 8)).astype(np.float32)
    k = rng.standard_normal((5, 2, 8)).astype(np.float32)
    v = rng.standard_normal((5, 2, 8)).astype(np.float32)
    got = wgt.attention(on(device, q), on(device, k), on(device, v))
    want = np_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    check(got, want, device=device, rtol=1e-4, atol=1e-5)


def test_rope_and_in_place(device, rng):
    x = rng.standard_normal((5, 3, 6)).astype(np.float32)
    want = np_rope(x.astype(np.float64), 7)
    check(wgt.rope(on(device, x), 7), want, device=device, rtol=1e-4, atol=1e-5)
    cfg = wgt.RopeConfig(style="normal", base=10000.0)
    t = on(device, x)
    wgt.rope_(t, wgt.tensor([7, 8, 9, 10, 11], dtype="i32").to(device), cfg)
    check(t, want, device=device, rtol=1e-4, atol=1e-5)


def test_ffn_and_linear(device, rng):
    x = rng.standard_normal((3, 16)).astype(np.float32)
    wg, wu = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((24, 16)).astype(np.float32)
    wd = rng.standard_normal((16, 24)).astype(np.float32)
    x64, g64, u64, d64 = (a.astype(np.float64) for a in (x, wg, wu, wd))
    h = x64 @ g64.T
    want = (h / (1 + np.exp(-h)) * (x64 @ u64.T)) @ d64.T
    got = wgt.swiglu_ffn(on(device, x), on(device, wg), on(device, wu), on(device, wd))
    check(got, want, device=device, rtol=1e-4, atol=1e-4)
    check(wgt.linear(on(device, x), on(device, wg)), x64 @ g64.T, device=device, rtol=1e-4, atol=1e-5)


def test_qtensor_round_trip_and_qmatmul(device, rng):
    w = rng.standard_normal((6, 64)).astype(np.float32)
    q = wgt.quantize(wgt.tensor(w), "q8_0")
    assert (q.qtype, q.shape, q.nbytes) == ("q8_0", (6, 64), 6 * 2 * 34)
    raw = np.asarray(q.bytes)
    q2 = wgt.QTensor.from_bytes("q8_0", 6, 64, raw.tobytes())
    deq = np.asarray(wgt.dequantize(q2)).astype(np.float64)
    assert np.abs(deq - w).max() <= np.abs(w).max() / 127  # q8_0: half a step of the block scale
    x = rng.standard_normal((3, 64)).astype(np.float32)
    got = wgt.qmatmul_t(on(device, x), q2.to(device))
    want = x.astype(np.float64) @ deq.T
    # The device kernel may round x to 8 bits per block as ggml does: a bound of that size.
    check(got, want, device=device, rtol=0, atol=2e-3 * np.abs(want).max())
    with pytest.raises(wgt.ShapeMismatch):
        wgt.QTensor.from_bytes("q8_0", 1, 33, b"\0" * 34)


def test_transformer_block_runs_incrementally(device):
    cfg = wgt.BlockConfig(dim=32, n_heads=4, n_kv_heads=2, ffn_dim=48)
    block = wgt.TransformerBlock(cfg, wgt.BlockWeights.random(cfg, seed=3, device=device))
    x = wgt.rand_normal([4, 32], seed=5).to(device)
    full = block.forward(x, block.make_cache(8), 0)
    cache = block.make_cache(8)
    first = block.forward(x[:3], cache, 0)
    last = block.forward(x[3:], cache, 3)
    assert cache.size == 4
    got = np.concatenate([np.asarray(first), np.asarray(last)])
    np.testing.assert_allclose(got, np.asarray(full), rtol=1e-4, atol=1e-4)


def gold(fixtures_dir):
    meta = json.loads((fixtures_dir / "gold-f16-mha.json").read_text())
    return meta, np.load(fixtures_dir / "gold-f16-mha.logits.npy")


def test_model_logits_match_reference(fixtures_dir):
    meta, ref = gold(fixtures_dir)
    m = wgt.load_model(str(fixtures_dir / "gold-f16-mha.gguf"))
    assert m.config["arch"] == "llama" and m.config["n_vocab"] == 800
    got = m.logits(meta["tokens"])
    assert isinstance(got, np.ndarray) and got.shape == (32, 800) and got.dtype == np.float32
    assert np.abs(got - ref).max() <= 1e-3 * np.abs(ref).max()
    with pytest.raises(wgt.OutOfRange):
        m.forward([800])


def test_model_generate_streams_the_greedy_continuation(device, fixtures_dir):
    meta, _ = gold(fixtures_dir)
    m = wgt.load_model(str(fixtures_dir / "gold-f16-mha.gguf"), device=device, n_ctx=64)
    prompt = meta["greedy_prompt"]
    want = meta["greedy_out"][len(prompt):]
    stream = m.generate(prompt, max_tokens=len(want), temperature=0, ignore_eos=True, tokens=True)
    first = next(stream)
    assert first == want[0] and stream.tokens == [want[0]]  # one token per step, not all at once
    assert [first] + list(stream) == want
    assert stream.stats["n_generated"] == len(want) and stream.stats["n_prompt"] == len(prompt)
    text = "".join(m.generate(prompt, max_tokens=len(want), temperature=0, ignore_eos=True))
    assert text == m.detokenize(want)


def test_synthetic_model_text_round_trip(tmp_path):
    path = str(tmp_path / "tiny.gguf")
    assert wgt.write_synthetic_model(path, "tiny", "q8_0") > 0
    m = wgt.load_model(path, n_ctx=32)
    ids = m.tokenize("hello")
    assert ids[0] == m.bos
    pieces = list(m.generate("hello", max_tokens=5, seed=1))
    assert all(isinstance(p, str) for p in pieces)
    with pytest.raises(wgt.OutOfRange):
        list(m.generate(list(range(1, 40)), max_tokens=1))  # the prompt does not fit n_ctx
