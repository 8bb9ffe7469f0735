// RoPE per-frequency factors (RopeConfig::freq_factors, llama3 rope scaling) on WebGPU, every
// kernel that rotates: rope, rope_, KVCache::append_rope (one dispatch, both source layouts,
// and the launcher's three-kernel path), the fused q/k/v matvec's rope_append epilogue and the
// block's prefill and decode; against the CPU reference with the llama3.2 factors
// llama3_rope_factors(8, 1, 4, 8192, 500000, 64) at positions up to a few thousand (where the
// factors change the angles a lot), and against the unfused device path in bits.
// Run also with WGT_WEBGPU_DISABLE_F16=1 (f16 caches and tensors without shader-f16).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "webgpu/kernels/matmul.hpp"
#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

Tensor llama32_factors() {
  const std::vector<float> f = llama3_rope_factors(8, 1, 4, 8192, 500000, 64);
  return Tensor::from_vector(f, {static_cast<int64_t>(f.size())});
}

// i32 positions in [lo, hi), reproducible.
Tensor random_positions(int64_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(lo, hi - 1);
  std::vector<int32_t> p(static_cast<size_t>(n));
  for (auto& v : p) v = d(rng);
  return Tensor::from_vector(p, {n});
}

class WebGpuRopeFactors : public wgt::testing::WebGpuTest {
 protected:
  std::vector<double> values(const Tensor& t) {
    Policy keep = Runtime::get().policy();
    use_cpu_reference();
    auto v = cast(t.cpu(), DType::F64).to_vector<double>();
    Runtime::get().set_policy(keep);
    return v;
  }
  std::vector<uint8_t> raw(const Tensor& t) {
    const Tensor c = t.contiguous();
    std::vector<uint8_t> b(c.nbytes());
    c.copy_to_host(b.data(), b.size());
    return b;
  }
  // max |got - want| / (1 + |want|) (infinite on NaN).
  double rel_err(const Tensor& got, const Tensor& want) {
    EXPECT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    auto g = values(got), w = values(want);
    double e = 0;
    for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
      if (std::isnan(g[i]) || std::isnan(w[i])) return INFINITY;
      e = std::max(e, std::fabs(g[i] - w[i]) / (1.0 + std::fabs(w[i])));
    }
    return e;
  }
  // The f32 angle bound of docs/transformer.md (as tests/webgpu/test_rope_inplace.cpp), on top
  // of the dtype's rounding. Factors >= 1 only shrink the angle.
  static double tol(DType dt, double max_pos) { return (dt == DType::F16 ? 2e-3 : 2e-5) + 4e-7 * max_pos; }
  bool ran_on_gpu(const char* op) {
    const auto& per = Runtime::get().stats().per_op;
    return per.count(op) && per.at(op).count("webgpu:0");
  }
};

TEST_F(WebGpuRopeFactors, RopeAndInPlaceMatchReference) {
  const Tensor fh = llama32_factors();
  // The factors on the device as a contiguous view at an element offset, and as a strided view
  // (which the launcher compacts): both are read element for element.
  const Tensor padded = concat({Tensor::from_vector(std::vector<float>{7, 7, 7}, {3}), fh}, 0).to(kGpu);
  const Tensor f_off = padded.slice(0, 3, 35);
  const Tensor f_strided = concat({fh.view({32, 1}), fh.view({32, 1})}, 1).to(kGpu).select(1, 1);
  ASSERT_FALSE(f_strided.is_contiguous());
  uint32_t seed = 1;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    for (DType dt : {DType::F32, DType::F16}) {
      for (int64_t D : {int64_t{64}, int64_t{70}}) {  // n_rot 64: all dims, or 6 passing through
        SCOPED_TRACE(std::string(style == RopeStyle::Neox ? "neox " : "normal ") + dtype_name(dt) + " D " + std::to_string(D));
        RopeConfig ch;
        ch.style = style;
        ch.n_rot = 64;
        ch.base = 500000;
        ch.freq_factors = fh;
        const Tensor x = randn({5, 3, D}, seed++, dt);
        const Tensor pos = random_positions(5, 0, 3000, seed++);
        use_cpu_reference();
        const Tensor want_pos = rope(x, pos, ch), want_off = rope(x, 2500, ch);
        RopeConfig plain = ch;
        plain.freq_factors = Tensor();
        const Tensor want_plain = rope(x, 2500, plain);

        use_gpu();
        const Tensor xg = x.to(kGpu), pg = pos.to(kGpu);
        for (const Tensor& f : {f_off, f_strided}) {
          RopeConfig cg = ch;
          cg.freq_factors = f;
          Runtime::get().reset_stats();
          EXPECT_LE(rel_err(rope(xg, pg, cg), want_pos), tol(dt, 3000));
          const Tensor y = rope(xg, 2500, cg);
          EXPECT_LE(rel_err(y, want_off), tol(dt, 2504));
          EXPECT_GT(rel_err(y, want_plain), 100 * tol(dt, 2504)) << "the factors must change the result";
          Tensor z = xg.clone(), w = xg.clone();
          rope_(z, pg, cg);
          rope_(w, 2500, cg);
          EXPECT_LE(rel_err(z, want_pos), tol(dt, 3000));
          EXPECT_LE(rel_err(w, want_off), tol(dt, 2504));
          EXPECT_EQ(raw(w), raw(y)) << "rope_ and rope share rope_common: the same bits";
          EXPECT_TRUE(ran_on_gpu("rope"));
          EXPECT_TRUE(ran_on_gpu("rope_"));
          EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);
        }
      }
    }
  }
}

// Device x and factors on the host paths: policy cpu-only (rope_ as a host round trip, rope
// and append_rope with their inputs moved to the CPU), and a call the kernel does not take
// (i64 positions) under policy auto with fallback: the factors travel with the call.
TEST_F(WebGpuRopeFactors, HostPathsCarryTheFactors) {
  RopeConfig ch;
  ch.style = RopeStyle::Neox;
  ch.base = 500000;
  ch.freq_factors = llama32_factors();
  RopeConfig cg = ch;
  cg.freq_factors = ch.freq_factors.to(kGpu);
  const Tensor x = randn({3, 2, 64}, 501), pos = random_positions(3, 0, 3000, 502);
  const Tensor q = randn({1, 2, 64}, 503), k = randn({1, 1, 64}, 504), v = randn({1, 1, 64}, 505);
  use_cpu_reference();
  const Tensor want_pos = rope(x, pos, ch), want_off = rope(x, 1200, ch);
  KVCache ref(4, 1, 64, DType::F32);
  Tensor ref_q = q.clone();
  ref.append_rope(ref_q, k, v, ch);

  // cpu-only (still the reference kernels) on device tensors.
  const Tensor xg = x.to(kGpu);
  Tensor y = xg.clone();
  rope_(y, pos.to(kGpu), cg);
  EXPECT_TRUE(y.device() == kGpu);
  EXPECT_LE(rel_err(y, want_pos), 1e-6);
  EXPECT_LE(rel_err(rope(xg, 1200, cg), want_off), 1e-6);
  KVCache dev(4, 1, 64, DType::F32, kGpu);
  Tensor qg = q.to(kGpu);
  dev.append_rope(qg, k.to(kGpu), v.to(kGpu), cg);
  EXPECT_LE(rel_err(qg, ref_q), 1e-6);
  EXPECT_LE(rel_err(dev.view_k(), ref.view_k()), 1e-6);

  // i64 positions: no WebGPU kernel; auto with fallback rotates through the host.
  Policy p = saved_;
  p.mode = PolicyMode::Auto;
  p.allow_fallback = true;
  Runtime::get().set_policy(p);
  Runtime::get().reset_stats();
  const Tensor pos64 = cast(pos, DType::I64).to(kGpu);
  Tensor z = xg.clone();
  rope_(z, pos64, cg);
  EXPECT_LE(rel_err(z, want_pos), 1e-6);
  EXPECT_LE(rel_err(rope(xg, pos64, cg), want_pos), 1e-6);
  EXPECT_GE(Runtime::get().stats().fallbacks, 1u);
}

// KVCache::append_rope with factors after 2000 plain rows: q, k and v in one buffer (one
// dispatch), in three buffers (one dispatch), and an f16 cache with odd rows (the launcher's
// three kernels); each equal in bits to rope_ then append on the device, and close to the CPU
// reference.
TEST_F(WebGpuRopeFactors, AppendRopeMatchesReferenceAndUnfused) {
  struct Case {
    const char* what;
    int64_t H, Hkv, D;
    RopeStyle style;
    DType cache;
    bool one_buffer;
    bool one_dispatch;
  };
  const Tensor fh = llama32_factors();
  const int64_t pre = 2000;
  uint64_t seed = 100;
  for (const Case& c : {Case{"one buffer f32", 4, 2, 64, RopeStyle::Normal, DType::F32, true, true},
                        Case{"one buffer f16 neox", 3, 1, 64, RopeStyle::Neox, DType::F16, true, true},
                        Case{"three buffers", 2, 2, 66, RopeStyle::Normal, DType::F16, false, true},
                        Case{"odd f16 rows", 2, 1, 65, RopeStyle::Neox, DType::F16, false, false}}) {
    SCOPED_TRACE(c.what);
    RopeConfig cfg;
    cfg.style = c.style;
    cfg.n_rot = 64;
    cfg.base = 500000;
    cfg.freq_factors = fh;
    const int64_t qd = c.H * c.D, kvd = c.Hkv * c.D;
    const Tensor qkv = randn({1, qd + 2 * kvd}, seed++);
    const Tensor kpre = randn({pre, c.Hkv, c.D}, seed++), vpre = randn({pre, c.Hkv, c.D}, seed++);
    auto q_of = [&](const Tensor& t) { return t.slice(1, 0, qd).view({1, c.H, c.D}); };
    auto k_of = [&](const Tensor& t) { return t.slice(1, qd, qd + kvd).view({1, c.Hkv, c.D}); };
    auto v_of = [&](const Tensor& t) { return t.slice(1, qd + kvd, qd + 2 * kvd).view({1, c.Hkv, c.D}); };

    use_cpu_reference();
    KVCache ref(pre + 2, c.Hkv, c.D, c.cache);
    ref.append(kpre, vpre);
    Tensor ref_q = q_of(qkv).clone();
    ref.append_rope(ref_q, k_of(qkv), v_of(qkv), cfg);

    use_gpu();
    RopeConfig cg = cfg;
    cg.freq_factors = fh.to(kGpu);
    KVCache fused(pre + 2, c.Hkv, c.D, c.cache, kGpu), unfused(pre + 2, c.Hkv, c.D, c.cache, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor a = qkv.to(kGpu);
    Tensor q = c.one_buffer ? q_of(a) : q_of(a).clone();
    const Tensor k = c.one_buffer ? k_of(a) : k_of(a).clone(), v = c.one_buffer ? v_of(a) : v_of(a).clone();
    synchronize();
    Runtime::get().reset_stats();
    const uint64_t d0 = webgpu_batch_stats().dispatches;
    fused.append_rope(q, k, v, cg);
    const uint64_t dispatches = webgpu_batch_stats().dispatches - d0;
    if (c.one_dispatch) EXPECT_EQ(dispatches, 1u);
    else EXPECT_GE(dispatches, 3u);
    EXPECT_TRUE(ran_on_gpu("kv_append_rope"));
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);

    const Tensor b = qkv.to(kGpu);
    Tensor uq = q_of(b).clone(), uk = k_of(b).clone();
    rope_(uq, pre, cg);
    rope_(uk, pre, cg);
    unfused.append(uk, v_of(b));
    EXPECT_EQ(raw(q), raw(uq)) << "q: fused and unfused differ";
    EXPECT_EQ(raw(fused.view_k()), raw(unfused.view_k())) << "k cache: fused and unfused differ";
    EXPECT_EQ(raw(fused.view_v()), raw(unfused.view_v()));
    EXPECT_LE(rel_err(q, ref_q), tol(DType::F32, pre));
    EXPECT_LE(rel_err(fused.view_k(), ref.view_k()), tol(c.cache, pre));
    EXPECT_LE(rel_err(fused.view_v(), ref.view_v()), tol(c.cache, 0));
  }
}

// KVCache::rms_norm_qkv_append_rope with factors: the vector gemv's rope_append epilogue with
// the factors bound (one dispatch), equal in bits to rms_norm_matmul_t then append_rope on the
// device and close to the CPU reference, for f32 and f16 weights and caches, at positions
// from 2200.
TEST_F(WebGpuRopeFactors, FusedDecodeEpilogueMatchesReferenceAndUnfused) {
  const int64_t H = 3, Hkv = 1, D = 64, dim = 48, pre = 2200;
  const int64_t qd = H * D, kvd = Hkv * D, W = qd + 2 * kvd;
  const Tensor fh = llama32_factors();
  uint64_t seed = 300;
  for (DType dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(dtype_name(dt));
    RopeConfig cfg;
    cfg.base = 500000;
    cfg.freq_factors = fh;
    const Tensor w = randn({W, dim}, seed++, dt), g = randn({dim}, seed++);
    const Tensor kpre = randn({pre, Hkv, D}, seed++), vpre = randn({pre, Hkv, D}, seed++);
    use_cpu_reference();
    KVCache ref(pre + 2, Hkv, D, dt);
    ref.append(kpre, vpre);
    use_gpu();
    RopeConfig cg = cfg;
    cg.freq_factors = fh.to(kGpu);
    KVCache fused(pre + 2, Hkv, D, dt, kGpu), unfused(pre + 2, Hkv, D, dt, kGpu);
    for (KVCache* c : {&fused, &unfused}) c->append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor wg = w.to(kGpu), gg = g.to(kGpu);
    for (int step = 0; step < 2; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Tensor x = randn({1, dim}, seed++);
      use_cpu_reference();
      const Tensor ref_q = ref.rms_norm_qkv_append_rope(x, g, w, 1e-5, H, cfg);
      use_gpu();
      const Tensor xg = x.to(kGpu);
      synchronize();
      Runtime::get().reset_stats();
      const uint64_t d0 = webgpu_batch_stats().dispatches;
      const Tensor q = fused.rms_norm_qkv_append_rope(xg, gg, wg, 1e-5, H, cg);
      EXPECT_EQ(webgpu_batch_stats().dispatches - d0, 1u);
      const std::string variant = webgpu::matmul_last_variant();
      EXPECT_NE(variant.find("+norm +rope_append+freqs"), std::string::npos) << variant;
      EXPECT_TRUE(ran_on_gpu("rms_norm_qkv_append_rope"));

      const Tensor qkv = rms_norm_matmul_t(xg, gg, wg, 1e-5);
      Tensor uq = qkv.slice(1, 0, qd).view({1, H, D});
      unfused.append_rope(uq, qkv.slice(1, qd, qd + kvd).view({1, Hkv, D}), qkv.slice(1, qd + kvd, W).view({1, Hkv, D}), cg);
      EXPECT_EQ(raw(q), raw(uq)) << "q: fused and unfused differ";
      EXPECT_EQ(raw(fused.view_k()), raw(unfused.view_k())) << "k cache: fused and unfused differ";
      EXPECT_EQ(raw(fused.view_v()), raw(unfused.view_v()));
      EXPECT_LE(rel_err(q, ref_q), 1e-4 + 4e-7 * (pre + step));
      EXPECT_LE(rel_err(fused.view_k(), ref.view_k()), tol(dt, pre + step) + 1e-4);
      EXPECT_LE(rel_err(fused.view_v(), ref.view_v()), dt == DType::F16 ? 2e-3 : 1e-4);
    }
  }
}

// A llama3.2-shaped block (head_dim 64, GQA) with the factors in its config (given on the host:
// the block keeps a device copy), its caches holding 1500 rows: prefill of 3 tokens (fused
// q/k/v matvec + append_rope) and 3 decode steps (the matvec's rope_append epilogue with the
// factors bound: one dispatch for projection, RoPE and append) against the CPU reference
// block, for f32 and f16 caches; and far from the block without factors.
TEST_F(WebGpuRopeFactors, BlockPrefillAndDecodeMatchReference) {
  BlockConfig cfg;
  cfg.dim = 128;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.head_dim = 64;
  cfg.ffn_dim = 96;
  cfg.rope.base = 500000;
  cfg.rope.freq_factors = llama32_factors();
  BlockConfig plain_cfg = cfg;
  plain_cfg.rope.freq_factors = Tensor();
  const int64_t pre = 1500, seq = 3;
  use_cpu_reference();
  const BlockWeights wc = BlockWeights::random(cfg, 5);
  const Tensor x = randn({seq, 128}, 41);
  const Tensor kpre = randn({pre, 1, 64}, 42), vpre = randn({pre, 1, 64}, 43);
  TransformerBlock cpu_blk(cfg, wc), cpu_plain(plain_cfg, wc);
  KVCache cc = cpu_blk.make_cache(pre + seq), cp = cpu_plain.make_cache(pre + seq);
  cc.append(kpre, vpre);
  cp.append(kpre, vpre);
  const Tensor want = cpu_blk.forward(x, cc, pre), want_plain = cpu_plain.forward(x, cp, pre);

  use_gpu();
  TransformerBlock blk(cfg, wc.to(kGpu));
  blk.pin_weights();
  EXPECT_TRUE(blk.config().rope.freq_factors.device() == kGpu);
  const Tensor xg = x.to(kGpu);
  for (DType cache_dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(std::string("cache ") + dtype_name(cache_dt));
    const double t = cache_dt == DType::F16 ? 5e-3 : 2e-3;  // the angle bound at 1500 is ~6e-4
    KVCache c1 = blk.make_cache(pre + seq, cache_dt), c2 = blk.make_cache(pre + seq, cache_dt);
    for (KVCache* c : {&c1, &c2}) c->append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor y = blk.forward(xg, c1, pre);
    EXPECT_LE(rel_err(y, want), t);
    EXPECT_GT(rel_err(y, want_plain), 5 * t) << "the factors must change the block's output";
    for (int64_t s = 0; s < seq; ++s) {
      SCOPED_TRACE("step " + std::to_string(s));
      synchronize();
      Runtime::get().reset_stats();
      const Tensor ys = blk.forward(xg.slice(0, s, s + 1), c2, pre + s);
      EXPECT_TRUE(ran_on_gpu("rms_norm_qkv_append_rope")) << "the fused decode projection";
      EXPECT_LE(rel_err(ys, want.slice(0, s, s + 1).contiguous()), t);
    }
    EXPECT_LE(rel_err(c2.view_k(), c1.view_k()), t);
  }
}

}  // namespace
}  // namespace wgt
