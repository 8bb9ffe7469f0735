#!/usr/bin/env python3
"""PyTorch reference for `wgt bench`: HF transformers LlamaForCausalLM in fp16 on CUDA with
random weights, the same shapes as wgt's synthetic models. Prints llama-bench-style rows:
ppN (one forward of N prompt tokens) and tgN (N greedy tokens by generate() after a prompt of
`depth` tokens, prompt time subtracted), mean and std over repetitions after a warm-up.
usage: torch_llm.py [--json FILE] [shape ...]   (llama2-7b llama3-8b llama3.2-1b; default: all)
--json appends records (bench/bench_records.py): bench "model", case "SHAPE fp16", metric ppN or
"tgN @ dD" (as `wgt bench --json`), t/s mean and std."""
import argparse
import statistics
import sys
import time

import torch
from bench_records import Records, torch_engine
from transformers import LlamaConfig, LlamaForCausalLM

REC = Records(None, "")

SHAPES = {  # the published hyper-parameters, as in src/model/synthetic.cpp
    "llama3.2-1b": dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                        intermediate_size=8192, vocab_size=128256, rope_theta=500000.0, tie_word_embeddings=True),
    "llama2-7b": dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                      intermediate_size=11008, vocab_size=32000, rope_theta=10000.0, tie_word_embeddings=False),
    "llama3-8b": dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                      intermediate_size=14336, vocab_size=128256, rope_theta=500000.0, tie_word_embeddings=False),
}


def sync_time(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def row(shape, test, xs):
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    print(f"| torch fp16 {shape:<17} | {test:<12} | {statistics.mean(xs):10.2f} ± {sd:.2f} |", flush=True)
    REC.emit("model", f"{shape} fp16", test, "t/s", statistics.mean(xs), std=sd, repetitions=len(xs))


def bench(shape, n_prompt=512, n_gen=128, depth=512, reps=3):
    cfg = LlamaConfig(max_position_embeddings=8192, **SHAPES[shape])
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.float16).eval()
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = lambda n: torch.randint(0, cfg.vocab_size, (1, n), device="cuda", generator=g)
    with torch.inference_mode():
        pp = []
        for r in range(reps + 1):
            x = ids(n_prompt)
            t, _ = sync_time(lambda: model(x, use_cache=True, logits_to_keep=1))
            if r:
                pp.append(n_prompt / t)
        row(shape, f"pp{n_prompt}", pp)
        tg = []
        for r in range(reps + 1):
            x = ids(depth)
            t_prompt, _ = sync_time(lambda: model.generate(x, max_new_tokens=1, min_new_tokens=1, do_sample=False))
            t_all, _ = sync_time(lambda: model.generate(x, max_new_tokens=n_gen + 1, min_new_tokens=n_gen + 1,
                                                         do_sample=False))
            if r:
                tg.append(n_gen / (t_all - t_prompt))
        row(shape, f"tg{n_gen} @ d{depth}", tg)
    del model
    torch.cuda.empty_cache()


def main():
    global REC
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="append JSON-lines records (bench/bench_records.py) to this file")
    ap.add_argument("shapes", nargs="*", help=" ".join(SHAPES) + " (default: all)")
    args = ap.parse_args()
    for s in args.shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r}; known: {' '.join(SHAPES)}")
    if not torch.cuda.is_available():
        print("torch: CUDA unavailable")
        return 1
    REC = Records(args.json, torch_engine(torch))
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    for s in args.shapes or list(SHAPES):
        bench(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
