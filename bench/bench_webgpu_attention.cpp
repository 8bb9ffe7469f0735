// Benchmark of the WebGPU transformer kernels. Each case is checked against the CPU reference
// first, then timed (bench/bench_timing.hpp): after a 200 ms warm-up, wall time over many calls
// between two synchronizes ("wall", device throughput including host overhead), and the GPU
// kernel time per call from timestamp queries ("gpu": the sum of the call's kernels; shown
// as "-" without timestamp-query). Rates are given for both:
//   decode : 1 query, KV 4096, 32 heads / 8 KV heads, d 128, f16 cache -> GB/s of K+V bytes
//   prefill: seq 4096 causal, 32 / 8 heads, d 128, f16 K/V, f32 q (--prefill-q f16: f16 q and
//            output, which the subgroup-matrix kernel needs; WGT_ATTN_PREFILL=scalar forces the
//            scalar kernel) -> TFLOP/s (4 H d per visible pair)
//   block  : one decode step of a llama-7B-shaped block (4096 wide, 32 heads, ffn 11008,
//            f16 weights, f16 cache) -> GB/s of weight bytes
//
//   bench_webgpu_attention [--case decode|prefill|block|all] [--kv N] [--seq N] [--ms N]
//                          [--prefill-q f32|f16]
//                          [--block-dim N] [--block-ffn N]   (head_dim stays 128)
//                          [--block-quant q4_0|q4_k|q6_k|q8_0|...]   (projections packed in
//                          that GGUF format, quantized on the host; default f16)
//                          [--json FILE]   (records of bench/bench_json.hpp: case "decode kvN",
//                          "prefill seqN", "block dimN ffnN <weights>")
// Peak HBM bandwidth of the H200 is 4.8 TB/s nominal; the anchor used here is 4.17 TB/s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "bench_json.hpp"
#include "bench_timing.hpp"
#include "webgpu/kernels/nn.hpp"
#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

const Device kGpu = Device::webgpu(0);
constexpr double kAnchorBytesPerS = 4.17e12;

struct Options {
  std::string which = "all";
  int64_t kv = 4096, seq = 4096;
  int64_t block_dim = 4096, block_ffn = 11008;  // smaller values for a smoke run on lavapipe
  double target_ms = 300;
  std::string block_quant;  // empty: f16 projections
  DType prefill_q = DType::F32;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "bench_webgpu_attention: %s\nusage: bench_webgpu_attention [--case decode|prefill|block|all] "
                       "[--kv N] [--seq N] [--ms N] [--prefill-q f32|f16] [--block-dim N] [--block-ffn N] "
                       "[--block-quant TYPE]\n", why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "--case") o.which = next();
    else if (a == "--kv") o.kv = std::stoll(next());
    else if (a == "--seq") o.seq = std::stoll(next());
    else if (a == "--ms") o.target_ms = std::stod(next());
    else if (a == "--block-dim") o.block_dim = std::stoll(next());
    else if (a == "--block-ffn") o.block_ffn = std::stoll(next());
    else if (a == "--block-quant") o.block_quant = next();
    else if (a == "--prefill-q") {
      const std::string t = next();
      if (t != "f32" && t != "f16") usage("--prefill-q takes f32 or f16");
      o.prefill_q = t == "f16" ? DType::F16 : DType::F32;
    }
    else usage("unknown argument " + a);
  }
  return o;
}

void set_mode(PolicyMode m, CpuMode c = CpuMode::Fast) {
  Policy p = Runtime::get().policy();
  p.mode = m;
  p.cpu_mode = c;
  p.allow_fallback = false;  // a case that cannot run on WebGPU must say so, not run on the CPU
  Runtime::get().set_policy(p);
}

// Max |a - b| / (1 + |b|) of two tensors (any devices), computed on the CPU.
// Bounds of rel_err for a result that counts (records: Record::checked): an f16 output carries
// its rounding (u = 2^-11) of values of a few units, the f16 kernel on subgroup matrices also
// its f16 weights; f32 outputs differ from the f64 reference by summation order only.
constexpr double kBoundF16 = 4e-3, kBoundF32 = 1e-4;

double rel_err(const Tensor& a, const Tensor& b) {
  auto x = cast(a.cpu(), DType::F64).to_vector<double>(), y = cast(b.cpu(), DType::F64).to_vector<double>();
  double e = x.size() == y.size() ? 0 : INFINITY;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) e = std::max(e, std::fabs(x[i] - y[i]) / (1 + std::fabs(y[i])));
  return e;
}

bench::Timing time_per_call(const std::function<void()>& fn, double target_ms) {
  bench::TimingOptions o;
  o.target_ms = target_ms;
  o.max_iters = 1 << 16;
  return bench::time_calls(fn, o);
}

// The costliest kernels of a profiled call (the block runs a dozen kernels per step).
void print_top_kernels(const bench::Timing& t, size_t n) {
  if (!t.has_gpu() || t.gpu_s <= 0) return;
  for (size_t i = 0; i < t.kernels.size() && i < n; ++i) {
    const KernelTime& k = t.kernels[i];
    std::printf("          %8.2f us/call  %5.1f%%  %s\n", k.total_us / t.gpu_iters, 100 * k.total_us * 1e-6 / t.gpu_iters / t.gpu_s,
                k.kernel.substr(0, 100).c_str());
  }
}

Tensor randn_on(const Shape& s, uint64_t seed, DType dt, Device d) {
  set_mode(PolicyMode::CpuOnly);
  Tensor t = rand_normal(s, seed, 0.0, 1.0, dt).to(d);
  set_mode(PolicyMode::Auto);
  return t;
}

void bench_decode(const Options& o) {
  const int64_t H = 32, Hkv = 8, D = 128;
  Tensor q = randn_on({1, H, D}, 1, DType::F32, kGpu);
  Tensor k = randn_on({o.kv, Hkv, D}, 2, DType::F16, kGpu), v = randn_on({o.kv, Hkv, D}, 3, DType::F16, kGpu);
  Tensor got = attention(q, k, v);
  set_mode(PolicyMode::CpuOnly, CpuMode::Reference);
  const double err = rel_err(got, attention(q.cpu(), k.cpu(), v.cpu()));
  set_mode(PolicyMode::Auto);
  // Extra K/V copies cycled through by the timed calls (WGT_BENCH_COPIES; see bench_timing.hpp).
  std::vector<std::pair<Tensor, Tensor>> kvs{{k, v}};
  for (int c = 1; c < bench::copies_from_env(2.0 * static_cast<double>(k.nbytes())); ++c)
    kvs.emplace_back(randn_on({o.kv, Hkv, D}, 10 + 2 * c, DType::F16, kGpu), randn_on({o.kv, Hkv, D}, 11 + 2 * c, DType::F16, kGpu));
  size_t call = 0;
  const bench::Timing t = time_per_call([&] {
    const auto& [kc, vc] = kvs[call++ % kvs.size()];
    (void)attention(q, kc, vc);
  }, o.target_ms);
  const double bytes = 2.0 * static_cast<double>(o.kv * Hkv * D) * 2;
  const double gpu_bps = bench::rate(bytes, t.gpu_s);
  std::printf("decode  q 1 x %lld/%lld heads, kv %lld, d %lld, f16 cache: wall %8.3f us %7.1f GB/s (%.1f%%) | gpu %s us %s GB/s (%s%%) of KV vs 4.17 TB/s  max rel err %.2e\n",
              (long long)H, (long long)Hkv, (long long)o.kv, (long long)D, t.wall_s * 1e6, bytes / t.wall_s / 1e9,
              100 * bytes / t.wall_s / kAnchorBytesPerS, bench::fmt(t.gpu_s, 1e6, 8, 3).c_str(),
              bench::fmt(gpu_bps, 1e-9, 7, 1).c_str(), bench::fmt(gpu_bps, 100 / kAnchorBytesPerS, 0, 1).c_str(), err);
  const std::string dcase = "decode kv" + std::to_string(o.kv);
  bench::emit(bench::Record("attention", dcase, "wall_time", "us", t.wall_s * 1e6).checked(err, kBoundF32));
  if (t.gpu_s >= 0) bench::emit(bench::Record("attention", dcase, "gpu_time", "us", t.gpu_s * 1e6));
  if (t.batch_gpu_s >= 0) bench::emit(bench::Record("attention", dcase, "batch_gpu_time", "us", t.batch_gpu_s * 1e6));
  print_top_kernels(t, 4);
  bench::print_gpu_note(t);
  std::printf("  (calls cycle through %zu K/V copies: WGT_BENCH_COPIES)\n", kvs.size());
}

void bench_prefill(const Options& o) {
  const int64_t H = 32, Hkv = 8, D = 128, L = o.seq;
  Tensor q = randn_on({L, H, D}, 4, o.prefill_q, kGpu);
  Tensor k = randn_on({L, Hkv, D}, 5, DType::F16, kGpu), v = randn_on({L, Hkv, D}, 6, DType::F16, kGpu);
  Tensor got = attention(q, k, v);
  const std::string kernel = webgpu::attention_last_shader();
  // The full oracle is O(L^2) in double; the last 4 queries (which see every key) check the
  // whole key range: attention of q[-4:] over all keys equals the prefill's last 4 rows.
  set_mode(PolicyMode::CpuOnly, CpuMode::Reference);
  const double err = rel_err(got.cpu().slice(0, L - 4, L), attention(q.cpu().slice(0, L - 4, L), k.cpu(), v.cpu()));
  const double err0 = rel_err(got.cpu().slice(0, 0, 4), attention(q.cpu().slice(0, 0, 4), k.cpu().slice(0, 0, 4), v.cpu().slice(0, 0, 4)));
  set_mode(PolicyMode::Auto);
  const bench::Timing t = time_per_call([&] { (void)attention(q, k, v); }, o.target_ms);
  const double flops = 4.0 * H * D * (static_cast<double>(L) * (L + 1) / 2);
  std::printf("prefill seq %lld causal, %lld/%lld heads, d %lld, %s q, f16 K/V (%s): wall %9.3f ms %6.2f TFLOP/s | gpu %s ms %s TFLOP/s  max rel err %.2e / %.2e\n",
              (long long)L, (long long)H, (long long)Hkv, (long long)D, dtype_name(o.prefill_q), kernel.c_str(),
              t.wall_s * 1e3, flops / t.wall_s / 1e12,
              bench::fmt(t.gpu_s, 1e3, 9, 3).c_str(), bench::fmt(bench::rate(flops, t.gpu_s), 1e-12, 6, 2).c_str(), err, err0);
  const std::string pcase = "prefill seq" + std::to_string(L) + (o.prefill_q == DType::F16 ? " q16 " + kernel : "");
  bench::emit(bench::Record("attention", pcase, "rate", "TFLOP/s", flops / t.wall_s / 1e12)
                  .with("wall_ms", t.wall_s * 1e3).with("gpu_ms", t.gpu_s >= 0 ? t.gpu_s * 1e3 : NAN)
                  .checked(std::max(err, err0), o.prefill_q == DType::F16 ? kBoundF16 : kBoundF32));
  print_top_kernels(t, 4);
  bench::print_gpu_note(t);
}

void bench_block(const Options& o) {
  BlockConfig cfg;
  cfg.dim = o.block_dim;
  cfg.n_heads = std::max<int64_t>(1, o.block_dim / 128);
  cfg.n_kv_heads = cfg.n_heads;
  cfg.head_dim = 128;
  cfg.ffn_dim = o.block_ffn;
  set_mode(PolicyMode::CpuOnly);
  BlockWeights w = BlockWeights::random(cfg, 7, DType::F16, Device::cpu());
  const std::string wname = o.block_quant.empty() ? "f16" : o.block_quant;
  if (!o.block_quant.empty()) w = w.quantized(qtype_from_name(o.block_quant));
  const BlockWeights wg = w.to(kGpu);
  double weight_bytes = 0;  // what one step reads: dense tensors and packed projections
  for (const Tensor* t : {&w.attn_norm, &w.wq, &w.wk, &w.wv, &w.wo, &w.ffn_norm, &w.w_gate, &w.w_up, &w.w_down})
    if (t->defined()) weight_bytes += static_cast<double>(t->nbytes());
  for (const QTensor* t : {&w.quant.wq, &w.quant.wk, &w.quant.wv, &w.quant.wo, &w.quant.w_gate, &w.quant.w_up, &w.quant.w_down})
    if (t->defined()) weight_bytes += static_cast<double>(t->nbytes());
  Tensor x = rand_normal({1, cfg.dim}, 8);
  TransformerBlock cpu_blk(cfg, w);
  KVCache cpu_cache = cpu_blk.make_cache(8, DType::F16);
  Tensor want = cpu_blk.forward(x, cpu_cache, 0);
  set_mode(PolicyMode::Auto);
  TransformerBlock blk(cfg, wg);
  blk.pin_weights();
  const int64_t max_ctx = 4096;
  KVCache cache = blk.make_cache(max_ctx, DType::F16);
  Tensor xg = x.to(kGpu);
  const double err = rel_err(blk.forward(xg, cache, 0), want);
  // Each timed call is one decode step at the next position (the cache grows by one).
  const bench::Timing t = time_per_call([&] {
    if (cache.size() == max_ctx) cache.clear();
    (void)blk.forward(xg, cache, cache.size());
  }, o.target_ms);
  const double gpu_bps = bench::rate(weight_bytes, t.gpu_s);
  std::printf("block   decode step (dim %lld, ffn %lld, %s weights %.0f MB, f16 cache): wall %8.3f ms %7.1f GB/s (%.1f%%) | gpu %s ms %s GB/s (%s%%) of weights vs 4.17 TB/s  max rel err %.2e\n",
              (long long)cfg.dim, (long long)cfg.ffn_dim, wname.c_str(), weight_bytes / 1e6, t.wall_s * 1e3, weight_bytes / t.wall_s / 1e9,
              100 * weight_bytes / t.wall_s / kAnchorBytesPerS, bench::fmt(t.gpu_s, 1e3, 8, 3).c_str(),
              bench::fmt(gpu_bps, 1e-9, 7, 1).c_str(), bench::fmt(gpu_bps, 100 / kAnchorBytesPerS, 0, 1).c_str(), err);
  bench::Record r("attention", "block dim" + std::to_string(cfg.dim) + " ffn" + std::to_string(cfg.ffn_dim) + " " + wname,
                  "wall_time", "us", t.wall_s * 1e6);
  r.with("weight_mb", weight_bytes / 1e6).with("wall_gbs", weight_bytes / t.wall_s / 1e9)
      .with("batch_gpu_us", t.batch_gpu_s >= 0 ? t.batch_gpu_s * 1e6 : NAN);
  // Quantized weights: the device kernels may round x to 8 bits (docs/quantization.md), a
  // bound this program does not derive; the error is recorded unjudged.
  if (o.block_quant.empty()) r.checked(err, kBoundF16);
  else r.with("max_rel_err", err);
  bench::emit(r);
  print_top_kernels(t, 6);
  bench::print_gpu_note(t);
  // Host side of a step: recording alone (no wait), over as many steps as the wall timing ran.
  // When this is close to the wall time per step, the step is bound by the host, not the GPU.
  const int n = std::max(10, static_cast<int>(0.2 / t.wall_s));
  synchronize();
  const auto h0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (cache.size() == max_ctx) cache.clear();
    (void)blk.forward(xg, cache, cache.size());
  }
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / n;
  synchronize();
  const WebGPUBatchStats bs0 = webgpu_batch_stats();
  (void)blk.forward(xg, cache, cache.size() == max_ctx ? (cache.clear(), 0) : cache.size());
  const uint64_t per_step = webgpu_batch_stats().dispatches - bs0.dispatches;
  std::printf("        host recording %.1f us/step (%llu dispatches/step, %.2f us each; wall %.1f us/step)\n", host_s * 1e6,
              (unsigned long long)per_step, host_s * 1e6 / std::max<uint64_t>(1, per_step), t.wall_s * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::json_from_args(argc, argv)) return 2;
  const Options o = parse(argc, argv);
  std::string why;
  if (!webgpu_available(&why)) {
    std::fprintf(stderr, "bench_webgpu_attention: WebGPU unavailable: %s\n", why.c_str());
    return 1;
  }
  try {
    if (o.which == "decode" || o.which == "all") bench_decode(o);
    if (o.which == "prefill" || o.which == "all") bench_prefill(o);
    if (o.which == "block" || o.which == "all") bench_block(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_webgpu_attention: %s\n", e.what());
    return 1;
  }
  return 0;
}
