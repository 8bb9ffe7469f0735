// Conformance of the WebGPU transformer kernels (rope, silu_mul, kv_append, attention prefill
// and decode) against the CPU reference on small shapes, plus a device-resident block whose
// decode steps must equal its prefill.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "webgpu/kernels/matmul.hpp"
#include "webgpu/plans/qmatmul_plan.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace webgpu {
QMatmulPlan last_qmatvec_plan_for_testing();  // src/webgpu/kernels/quant.cpp: the last M <= 4 qmatmul's plan
}
namespace {

const Device kGpu = Device::webgpu(0);

std::vector<uint8_t> raw(const Tensor& t);

class WebGpuNn : public wgt::testing::WebGpuTest {
 protected:
  // A fused RoPE + append call against the same work done unfused on the device (q and both
  // caches equal in bits) and against the CPU reference (q within q_tol, caches within kv_tol).
  void expect_fused_matches(const Tensor& q, const Tensor& unfused_q, const KVCache& fused, const KVCache& unfused,
                            const Tensor& ref_q, const KVCache& ref, double q_tol, double kv_tol) {
    EXPECT_EQ(raw(q), raw(unfused_q)) << "q: fused and unfused differ";
    EXPECT_EQ(raw(fused.view_k()), raw(unfused.view_k())) << "k cache: fused and unfused differ";
    EXPECT_EQ(raw(fused.view_v()), raw(unfused.view_v())) << "v cache: fused and unfused differ";
    EXPECT_LE(rel_err(q, ref_q), q_tol);
    EXPECT_LE(rel_err(fused.view_k(), ref.view_k()), kv_tol);
    EXPECT_LE(rel_err(fused.view_v(), ref.view_v()), kv_tol);
  }

  std::vector<double> values(const Tensor& t) {
    Policy keep = Runtime::get().policy();
    use_cpu_reference();
    auto v = cast(t.cpu(), DType::F64).to_vector<double>();
    Runtime::get().set_policy(keep);
    return v;
  }
  // max |got - want| / (1 + |want|) over all elements, after checking shape and dtype.
  double rel_err(const Tensor& got, const Tensor& want) {
    EXPECT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    EXPECT_EQ(got.dtype(), want.dtype());
    auto g = values(got), w = values(want);
    double e = 0;
    for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
      if (std::isnan(g[i]) || std::isnan(w[i])) return INFINITY;
      e = std::max(e, std::fabs(g[i] - w[i]) / (1.0 + std::fabs(w[i])));
    }
    return e;
  }
  // Runs op on CPU inputs with the reference and on their device copies with WebGPU.
  void check(const std::string& what, const std::vector<Tensor>& host, const std::function<Tensor(const std::vector<Tensor>&)>& op,
             double tol, const char* expect_op) {
    SCOPED_TRACE(what);
    use_cpu_reference();
    Tensor want = op(host);
    std::vector<Tensor> dev;
    for (const Tensor& t : host) dev.push_back(t.to(kGpu));
    use_gpu();
    Runtime::get().set_record_log(true);
    Tensor got = op(dev);
    bool ran_on_gpu = false;
    for (const auto& d : Runtime::get().trace_log())
      if (d.op == expect_op) ran_on_gpu |= d.backend.rfind("webgpu", 0) == 0;
    Runtime::get().set_record_log(false);
    EXPECT_TRUE(ran_on_gpu) << expect_op << " did not run on webgpu";
    ASSERT_TRUE(got.device() == kGpu);
    EXPECT_LE(rel_err(got, want), tol);
  }

 private:
};

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

TEST_F(WebGpuNn, Rope) {
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    for (DType dt : {DType::F32, DType::F16}) {
      RopeConfig c;
      c.style = style;
      c.n_rot = 6;  // of head_dim 10: the last 4 dims pass through
      const double tol = dt == DType::F16 ? 2e-3 : 2e-5;
      check("offset", {randn({7, 3, 10}, 1, dt)}, [&](auto& in) { return rope(in[0], 5, c); }, tol, "rope");
      check("batch", {randn({2, 5, 2, 10}, 2, dt)}, [&](auto& in) { return rope(in[0], 0, c); }, tol, "rope");
      check("positions", {randn({4, 2, 10}, 3, dt), Tensor::from_vector(std::vector<int32_t>{9, 3, 100, 0}, {4})},
            [&](auto& in) { return rope(in[0], in[1], c); }, tol, "rope");
    }
  }
  // A transposed (non-contiguous) input is compacted first.
  check("view", {randn({4, 2, 8}, 4)}, [](auto& in) { return rope(in[0].transpose(0, 1), 3); }, 2e-5, "rope");
  // f16 with an odd element count (a half-filled last output word) and an odd head_dim, so
  // rows straddle words.
  RopeConfig c;
  c.n_rot = 4;
  check("f16 odd", {randn({3, 3, 5}, 9, DType::F16)}, [&](auto& in) { return rope(in[0], 2, c); }, 2e-3, "rope");
  check("f16 view", {randn({4, 2, 6}, 10, DType::F16)}, [&](auto& in) { return rope(in[0].transpose(0, 1), 1, c); }, 2e-3,
        "rope");
}

TEST_F(WebGpuNn, SiluMul) {
  check("f32", {randn({5, 77}, 5), randn({5, 77}, 6)}, [](auto& in) { return silu_mul(in[0], in[1]); }, 1e-5, "silu_mul");
  check("f16", {randn({3, 9}, 7, DType::F16), randn({3, 9}, 8, DType::F16)},
        [](auto& in) { return silu_mul(in[0], in[1]); }, 2e-3, "silu_mul");
  // Views starting at an odd f16 element are compacted first; large products overflow to inf
  // in f16 on both backends (rel_err turns NaN disagreements into a failure).
  check("f16 sliced", {randn({4, 11}, 14, DType::F16), randn({4, 11}, 15, DType::F16)},
        [](auto& in) { return silu_mul(in[0].slice(1, 1, 10), in[1].slice(1, 2, 11)); }, 2e-3, "silu_mul");
  // The two halves of one fused gate/up row, read in place at their offsets (odd f16 offset).
  for (DType dt : {DType::F32, DType::F16})
    check("fused halves", {randn({1, 2 * 37}, 16, dt)},
          [](auto& in) { return silu_mul(in[0].slice(1, 0, 37), in[0].slice(1, 37, 74)); }, 2e-3, "silu_mul");
}

TEST_F(WebGpuNn, AttentionPrefillAndDecodeShapes) {
  struct Case { int64_t lq, lk, h, hkv, d; bool causal; };
  const Case cases[] = {
      {37, 37, 4, 2, 16, true},  {37, 37, 4, 4, 16, false}, {20, 45, 8, 1, 33, true},  // prefill
      {1, 100, 8, 2, 16, true},  {1, 300, 4, 1, 64, true},  {3, 50, 4, 2, 33, true},   // decode
      {1, 1, 2, 2, 8, true},     {16, 16, 2, 1, 128, true},
  };
  for (const Case& c : cases) {
    AttnConfig ac;
    ac.causal = c.causal;
    const std::string what = "lq " + std::to_string(c.lq) + " lk " + std::to_string(c.lk) + " h " + std::to_string(c.h) +
                             "/" + std::to_string(c.hkv) + " d " + std::to_string(c.d);
    check(what, {randn({c.lq, c.h, c.d}, 11), randn({c.lk, c.hkv, c.d}, 12), randn({c.lk, c.hkv, c.d}, 13)},
          [&](auto& in) { return attention(in[0], in[1], in[2], ac); }, 1e-4, "attention");
  }
}

TEST_F(WebGpuNn, AttentionF16CacheMaskAndFullyMaskedRow) {
  check("f16 kv, f32 q (decode)", {randn({1, 8, 32}, 21), randn({70, 2, 32}, 22, DType::F16), randn({70, 2, 32}, 23, DType::F16)},
        [](auto& in) { return attention(in[0], in[1], in[2]); }, 1e-4, "attention");
  check("f16 kv, f32 q (prefill)", {randn({24, 4, 16}, 24), randn({24, 2, 16}, 25, DType::F16), randn({24, 2, 16}, 26, DType::F16)},
        [](auto& in) { return attention(in[0], in[1], in[2]); }, 1e-4, "attention");
  std::vector<float> m(6 * 9, 0.f);
  for (int j = 0; j < 9; ++j) m[2 * 9 + j] = -INFINITY;  // query row 2 sees nothing -> zeros
  m[0 * 9 + 1] = -INFINITY;
  m[4 * 9 + 3] = -2.5f;
  for (int64_t lq : {6, 1}) {
    check("mask lq " + std::to_string(lq),
          {randn({lq, 4, 8}, 27), randn({9, 2, 8}, 28), randn({9, 2, 8}, 29),
           Tensor::from_vector(std::vector<float>(m.begin(), m.begin() + lq * 9), {lq, 9})},
          [](auto& in) {
            AttnConfig ac;
            ac.causal = false;
            ac.mask = in[3];
            return attention(in[0], in[1], in[2], ac);
          },
          1e-4, "attention");
  }
}

// f16 queries (so an f16 output, written as packed words), with f16 or f32 K/V and f16 masks,
// through both kernels; head_dim 33 puts the rows of neighbouring heads in one output word.
TEST_F(WebGpuNn, AttentionF16QueriesPrefillAndDecode) {
  struct Case { int64_t lq, lk, h, hkv, d; bool causal; DType kv; };
  const Case cases[] = {
      {20, 20, 4, 2, 16, true, DType::F16}, {9, 13, 3, 1, 33, false, DType::F16}, {17, 17, 2, 2, 8, true, DType::F32},
      {1, 70, 8, 2, 32, true, DType::F16},  {2, 40, 3, 3, 33, true, DType::F16},  {1, 9, 4, 1, 7, true, DType::F32},
  };
  for (const Case& c : cases) {
    AttnConfig ac;
    ac.causal = c.causal;
    const std::string what = "lq " + std::to_string(c.lq) + " lk " + std::to_string(c.lk) + " h " + std::to_string(c.h) +
                             "/" + std::to_string(c.hkv) + " d " + std::to_string(c.d) + " kv " + dtype_name(c.kv);
    check(what,
          {randn({c.lq, c.h, c.d}, 51, DType::F16), randn({c.lk, c.hkv, c.d}, 52, c.kv), randn({c.lk, c.hkv, c.d}, 53, c.kv)},
          [&](auto& in) { return attention(in[0], in[1], in[2], ac); }, 2e-3, "attention");
  }
  for (int64_t lq : {5, 1}) {
    std::vector<float> m(lq * 6);
    for (size_t i = 0; i < m.size(); ++i) m[i] = i % 4 == 1 ? -INFINITY : -0.25f * static_cast<float>(i % 3);
    check("f16 mask lq " + std::to_string(lq),
          {randn({lq, 2, 10}, 54, DType::F16), randn({6, 1, 10}, 55, DType::F16), randn({6, 1, 10}, 56, DType::F16),
           cast(Tensor::from_vector(m, {lq, 6}), DType::F16)},
          [](auto& in) {
            AttnConfig ac;
            ac.causal = false;
            ac.mask = in[3];
            return attention(in[0], in[1], in[2], ac);
          },
          2e-3, "attention");
  }
}

TEST_F(WebGpuNn, AttentionWithoutKeysGivesZeros) {
  for (int64_t lq : {1, 7}) {  // decode and prefill kernels over an empty (non-causal) key set
    check("lq " + std::to_string(lq), {randn({lq, 2, 8}, 35), randn({0, 2, 8}, 36), randn({0, 2, 8}, 37)},
          [](auto& in) {
            AttnConfig ac;
            ac.causal = false;
            return attention(in[0], in[1], in[2], ac);
          },
          0.0, "attention");
  }
}

TEST_F(WebGpuNn, KvCacheOnDevice) {
  use_gpu();
  for (DType dt : {DType::F32, DType::F16}) {
    KVCache cache(6, 2, 4, dt, kGpu);
    EXPECT_TRUE(Runtime::get().is_resident(cache.view_k()));
    Tensor k = randn({6, 2, 4}, 31), v = randn({6, 2, 4}, 32);
    Runtime::get().reset_stats();
    cache.append(k.slice(0, 0, 4).to(kGpu), v.slice(0, 0, 4).to(kGpu));
    cache.append(k.slice(0, 4, 5).to(kGpu), v.slice(0, 4, 5).to(kGpu));
    const auto& per = Runtime::get().stats().per_op;
    ASSERT_TRUE(per.count("kv_append"));
    EXPECT_FALSE(per.at("kv_append").count("host-write")) << "kv_append must run as a WebGPU kernel";
    const double tol = dt == DType::F16 ? 1e-3 : 0.0;
    EXPECT_LE(rel_err(cast(cache.view_k().cpu(), DType::F32), k.slice(0, 0, 5).contiguous()), tol);
    EXPECT_LE(rel_err(cast(cache.view_v().cpu(), DType::F32), v.slice(0, 0, 5).contiguous()), tol);
    EXPECT_THROW(cache.append(k.slice(0, 0, 2).to(kGpu), v.slice(0, 0, 2).to(kGpu)), Error);
    EXPECT_EQ(cache.size(), 5);
  }
}

// k and v as slices of one fused projection row (contiguous at an element offset, odd for
// f16) are appended without a copy and land in the cache exactly.
TEST_F(WebGpuNn, KvCacheAppendsOffsetSlices) {
  use_gpu();
  for (DType dt : {DType::F32, DType::F16}) {
    KVCache cache(3, 3, 5, dt, kGpu);
    Tensor row = randn({1, 5 + 2 * 15}, 33, dt);  // q (5) | k (15) | v (15)
    Tensor dev = row.to(kGpu);
    const uint64_t d0 = webgpu_batch_stats().dispatches;
    cache.append(dev.slice(1, 5, 20).view({1, 3, 5}), dev.slice(1, 20, 35).view({1, 3, 5}));
    EXPECT_EQ(webgpu_batch_stats().dispatches - d0, dt == DType::F32 ? 1u : 2u);  // 15 f16: odd
    EXPECT_EQ(rel_err(cache.view_k(), row.slice(1, 5, 20).contiguous().view({1, 3, 5})), 0.0);
    EXPECT_EQ(rel_err(cache.view_v(), row.slice(1, 20, 35).contiguous().view({1, 3, 5})), 0.0);
  }
}

// Rows of an odd length (1 head x 3 dims) start at odd f16 elements, so appends share their
// boundary words with the previous row; f16 sources go into f32 and f16 caches.
TEST_F(WebGpuNn, KvCacheOddRowsAndMixedDtypes) {
  use_gpu();
  for (DType cache_dt : {DType::F16, DType::F32}) {
    for (DType src_dt : {DType::F32, DType::F16}) {
      SCOPED_TRACE(std::string("cache ") + dtype_name(cache_dt) + " src " + dtype_name(src_dt));
      KVCache cache(7, 1, 3, cache_dt, kGpu);
      Tensor k = randn({7, 1, 3}, 61, src_dt), v = randn({7, 1, 3}, 62, src_dt);
      Runtime::get().reset_stats();
      for (auto [b, e] : {std::pair<int64_t, int64_t>{0, 1}, {1, 4}, {4, 5}, {5, 7}}) {
        const Tensor kd = k.slice(0, b, e).to(kGpu), vd = v.slice(0, b, e).to(kGpu);
        const uint64_t d0 = webgpu_batch_stats().dispatches;
        cache.append(kd, vd);
        // K and V in one dispatch unless an f16 append starts or ends inside a word (odd
        // element offset or count): then one dispatch per cache keeps the neighbours' halves.
        const bool whole_words = cache_dt == DType::F32 || (b * 3 % 2 == 0 && (e - b) * 3 % 2 == 0);
        EXPECT_EQ(webgpu_batch_stats().dispatches - d0, whole_words ? 1u : 2u) << "rows " << b << ".." << e;
      }
      const auto& per = Runtime::get().stats().per_op;
      ASSERT_TRUE(per.count("kv_append"));
      EXPECT_FALSE(per.at("kv_append").count("host-write")) << "kv_append must run as a WebGPU kernel";
      // Every value is exact in f16 except f32 -> f16 rounding (relative 2^-11).
      const double tol = cache_dt == DType::F16 && src_dt == DType::F32 ? 1e-3 : 0.0;
      EXPECT_LE(rel_err(cast(cache.view_k().cpu(), DType::F32), cast(k, DType::F32)), tol);
      EXPECT_LE(rel_err(cast(cache.view_v().cpu(), DType::F32), cast(v, DType::F32)), tol);
    }
  }
}

TEST_F(WebGpuNn, KvCacheOnDeviceHostWritePath) {
  // Under policy cpu-only a device cache still takes the rows, through a host-side write.
  use_cpu_reference();
  KVCache cache(4, 1, 6, DType::F16, kGpu);
  Tensor k = randn({3, 1, 6}, 33), v = randn({3, 1, 6}, 34);
  Runtime::get().reset_stats();
  cache.append(k.to(kGpu), v.to(kGpu));
  ASSERT_TRUE(Runtime::get().stats().per_op.count("kv_append"));
  EXPECT_TRUE(Runtime::get().stats().per_op.at("kv_append").count("host-write"));
  EXPECT_LE(rel_err(cast(cache.view_k().cpu(), DType::F32), k), 1e-3);
  EXPECT_LE(rel_err(cast(cache.view_v().cpu(), DType::F32), v), 1e-3);
}

// Raw bytes of t (any dtype, any device): bitwise comparisons.
std::vector<uint8_t> raw(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<uint8_t> b(c.nbytes());
  c.copy_to_host(b.data(), b.size());
  return b;
}

struct RopeAppendCase {
  int64_t H, Hkv, D, n_rot;
  RopeStyle style;
  DType src, cache;
  int64_t seq;
};

// KVCache::append_rope on the device against the CPU reference (random rows appended after
// two plain ones, so positions start at 2) and against the unfused device path, rope_ over the
// q and k heads then append (same bits): odd head counts, GQA, f16/f32 sources and caches,
// neox and normal, n_rot < head_dim; seq 1 with q, k and v slices of one fused row (one
// dispatch, the row's buffer bound once) and seq 3 with q compacted first, as the block does.
TEST_F(WebGpuNn, KvCacheAppendRopeMatchesReferenceAndUnfused) {
  const DType f32 = DType::F32, f16 = DType::F16;
  const std::vector<RopeAppendCase> cases = {
      {3, 3, 8, 8, RopeStyle::Normal, f32, f32, 1},  {6, 2, 8, 6, RopeStyle::Neox, f16, f16, 1},
      {5, 1, 6, 4, RopeStyle::Neox, f32, f16, 1},    {4, 2, 12, 8, RopeStyle::Normal, f16, f32, 1},
      {3, 1, 10, 10, RopeStyle::Neox, f16, f16, 1},  // n_rot / 2 odd: f16 q units of whole rows
      {6, 2, 8, 8, RopeStyle::Normal, f32, f16, 3},  {3, 3, 6, 4, RopeStyle::Neox, f16, f16, 3},
  };
  const int64_t pre = 2;
  uint64_t seed = 700;
  for (const RopeAppendCase& c : cases) {
    SCOPED_TRACE("H " + std::to_string(c.H) + " Hkv " + std::to_string(c.Hkv) + " D " + std::to_string(c.D) + " n_rot " +
                 std::to_string(c.n_rot) + (c.style == RopeStyle::Neox ? " neox" : " normal") + " src " +
                 dtype_name(c.src) + " cache " + dtype_name(c.cache) + " seq " + std::to_string(c.seq));
    RopeConfig cfg;
    cfg.style = c.style;
    cfg.n_rot = c.n_rot;
    cfg.freq_scale = 0.5;
    const int64_t n = c.seq, qd = c.H * c.D, kvd = c.Hkv * c.D, W = qd + 2 * kvd;
    const Tensor qkv = randn({n, W}, seed++, c.src);
    const Tensor kpre = randn({pre, c.Hkv, c.D}, seed++), vpre = randn({pre, c.Hkv, c.D}, seed++);
    auto q_of = [&](const Tensor& t) {
      Tensor q = t.slice(1, 0, qd);
      return (n > 1 ? q.contiguous() : q).view({n, c.H, c.D});
    };
    auto k_of = [&](const Tensor& t) { return t.slice(1, qd, qd + kvd).view({n, c.Hkv, c.D}); };
    auto v_of = [&](const Tensor& t) { return t.slice(1, qd + kvd, W).view({n, c.Hkv, c.D}); };

    use_cpu_reference();
    KVCache ref(6, c.Hkv, c.D, c.cache);
    ref.append(kpre, vpre);
    Tensor ref_q = q_of(qkv.clone());
    ref.append_rope(ref_q, k_of(qkv), v_of(qkv), cfg);

    use_gpu();
    KVCache fused(6, c.Hkv, c.D, c.cache, kGpu), unfused(6, c.Hkv, c.D, c.cache, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor a = qkv.to(kGpu);
    Tensor q = q_of(a);
    Runtime::get().reset_stats();
    const uint64_t d0 = webgpu_batch_stats().dispatches;
    fused.append_rope(q, k_of(a), v_of(a), cfg);
    if (n == 1) {
      EXPECT_EQ(webgpu_batch_stats().dispatches - d0, 1u);
    }
    const auto& per = Runtime::get().stats().per_op;
    ASSERT_TRUE(per.count("kv_append_rope"));
    EXPECT_TRUE(per.at("kv_append_rope").count("webgpu:0")) << "kv_append_rope must run as a WebGPU kernel";
    EXPECT_EQ(raw(k_of(a)), raw(k_of(qkv))) << "the source k must not be written";

    const Tensor b = qkv.to(kGpu);
    Tensor qk = b.slice(1, 0, qd + kvd).view({n, c.H + c.Hkv, c.D});
    rope_(qk, pre, cfg);
    unfused.append(k_of(b), v_of(b));
    expect_fused_matches(q, b.slice(1, 0, qd), fused, unfused, ref_q, ref, c.src == f16 ? 2e-3 : 1e-5,
                         c.src == f16 || c.cache == f16 ? 2e-3 : 1e-5);
  }
}

// q, k and v in three buffers (the kernel's second binding layout: one dispatch), and calls
// the fused kernel does not take, which the launcher runs as rope_inplace, rope and the plain
// append (an f16 cache row of odd size starting inside a word, with sources of two dtypes; q
// sharing a buffer with k but not with v): every one equal in bits to rope_ + append, and
// close to the CPU reference.
TEST_F(WebGpuNn, KvCacheAppendRopeSeparateBuffersAndLauncherFallback) {
  struct Case {
    const char* what;
    int64_t H, Hkv, D, n_rot;
    DType cache, v_dtype;
    bool qk_shared;  // q and k slices of one tensor, v separate
    bool one_dispatch;
  };
  for (const Case& c : {Case{"three buffers", 4, 2, 8, 8, DType::F16, DType::F32, false, true},
                        Case{"odd f16 rows", 3, 1, 5, 4, DType::F16, DType::F16, false, false},
                        Case{"q shares k's buffer only", 2, 2, 6, 6, DType::F32, DType::F32, true, false}}) {
    SCOPED_TRACE(c.what);
    RopeConfig cfg;
    cfg.style = RopeStyle::Neox;
    cfg.n_rot = c.n_rot;
    const int64_t pre = 1;
    const Tensor qk = randn({1, (c.H + c.Hkv) * c.D}, 801);
    const Tensor v = randn({1, c.Hkv, c.D}, 802, c.v_dtype);
    const Tensor kpre = randn({pre, c.Hkv, c.D}, 803), vpre = randn({pre, c.Hkv, c.D}, 804);
    auto q_of = [&](const Tensor& t) { return t.slice(1, 0, c.H * c.D).view({1, c.H, c.D}); };
    auto k_of = [&](const Tensor& t) { return t.slice(1, c.H * c.D, (c.H + c.Hkv) * c.D).view({1, c.Hkv, c.D}); };

    use_cpu_reference();
    KVCache ref(4, c.Hkv, c.D, c.cache);
    ref.append(kpre, vpre);
    Tensor ref_q = q_of(qk).clone();
    ref.append_rope(ref_q, k_of(qk), v, cfg);

    use_gpu();
    KVCache fused(4, c.Hkv, c.D, c.cache, kGpu), unfused(4, c.Hkv, c.D, c.cache, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor a = qk.to(kGpu), vd = v.to(kGpu);
    Tensor q = c.qk_shared ? q_of(a) : q_of(a).clone();
    const Tensor k = c.qk_shared ? k_of(a) : k_of(a).clone();
    Runtime::get().reset_stats();
    const uint64_t d0 = webgpu_batch_stats().dispatches;
    fused.append_rope(q, k, vd, cfg);
    const uint64_t dispatches = webgpu_batch_stats().dispatches - d0;
    if (c.one_dispatch) EXPECT_EQ(dispatches, 1u);
    else EXPECT_GE(dispatches, 3u) << "the launcher's three-kernel path";
    const auto& per = Runtime::get().stats().per_op;
    ASSERT_TRUE(per.count("kv_append_rope"));
    EXPECT_TRUE(per.at("kv_append_rope").count("webgpu:0"));
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);

    const Tensor b = qk.to(kGpu);
    Tensor uq = q_of(b).clone(), uk = k_of(b).clone();
    rope_(uq, pre, cfg);
    rope_(uk, pre, cfg);
    unfused.append(uk, vd);
    expect_fused_matches(q, uq, fused, unfused, ref_q, ref, 1e-5, 2e-3);
  }
}

// Sets the matmul tuning for one scope through the C++ override (webgpu/plans/tuning.hpp)
// and clears it after.
struct ScopedMatmulTuning {
  explicit ScopedMatmulTuning(const webgpu::MatmulTuning& m) {
    webgpu::KernelTuning t;
    t.matmul = m;
    webgpu::set_kernel_tuning_override(t);
  }
  ~ScopedMatmulTuning() { webgpu::set_kernel_tuning_override(std::nullopt); }
};

bool has(const std::string& v, const char* part) { return v.find(part) != std::string::npos; }

struct QkvRopeCase {
  int64_t H, Hkv, D, n_rot;
  DType w, cache;
  // The matmul tuning of this case (the vector gemv's shape, its subgroup reduction), if any.
  std::optional<webgpu::MatmulTuning> tuning = std::nullopt;
  const char* tuning_name = "";
  const char* variant = "gemv_vec 256x32x2";  // part of the fused launch's variant name
};

// KVCache::rms_norm_qkv_append_rope on the device: one dispatch per decode step (the fused-norm
// vector gemv with the rope_append epilogue), equal in bits to the unfused device ops
// (rms_norm_matmul_t, then append_rope) and close to the CPU reference: q, the K cache and the
// V cache after each of three steps (positions 1 to 3, after one plain row). f16 and f32
// weights and caches, GQA and H == Hkv, odd head counts, n_rot < head_dim; the reduction by
// workgroup tree (subgroups off) and RB = 4.
TEST_F(WebGpuNn, NormQkvRopeAppendMatchesReferenceAndUnfused) {
  const DType f32 = DType::F32, f16 = DType::F16;
  webgpu::MatmulTuning no_subgroups, gemv_vec_128x32x4;
  no_subgroups.subgroups = false;
  gemv_vec_128x32x4.gemv_vec = {{128, 32, 4}};
  const std::vector<QkvRopeCase> cases = {
      {4, 2, 8, 8, f16, f16}, {4, 4, 8, 6, f32, f32}, {3, 1, 10, 6, f16, f32},
      {5, 5, 6, 4, f32, f16}, {3, 3, 12, 12, f16, f16},
      {4, 2, 8, 8, f16, f16, no_subgroups, "subgroups off", " tree"},
      {3, 1, 10, 6, f32, f32, gemv_vec_128x32x4, "gemv_vec 128x32x4", "gemv_vec 128x32x4"},
  };
  const int64_t dim = 48, pre = 1;
  const double eps = 1e-5;
  uint64_t seed = 900;
  for (const QkvRopeCase& c : cases) {
    SCOPED_TRACE("H " + std::to_string(c.H) + " Hkv " + std::to_string(c.Hkv) + " D " + std::to_string(c.D) +
                 " n_rot " + std::to_string(c.n_rot) + " w " + dtype_name(c.w) + " cache " + dtype_name(c.cache) +
                 " " + c.tuning_name);
    std::optional<ScopedMatmulTuning> tuning;
    if (c.tuning) tuning.emplace(*c.tuning);
    RopeConfig cfg;
    cfg.n_rot = c.n_rot;
    cfg.base = 500.0;
    cfg.freq_scale = 0.5;
    const int64_t qd = c.H * c.D, kvd = c.Hkv * c.D, W = qd + 2 * kvd;
    const Tensor w = randn({W, dim}, seed++, c.w), g = randn({dim}, seed++);
    const Tensor kpre = randn({pre, c.Hkv, c.D}, seed++), vpre = randn({pre, c.Hkv, c.D}, seed++);
    use_cpu_reference();
    KVCache ref(6, c.Hkv, c.D, c.cache);
    ref.append(kpre, vpre);
    use_gpu();
    KVCache fused(6, c.Hkv, c.D, c.cache, kGpu), unfused(6, c.Hkv, c.D, c.cache, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor wg = w.to(kGpu), gg = g.to(kGpu);
    for (int step = 0; step < 3; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Tensor x = randn({1, dim}, seed++);
      use_cpu_reference();
      const Tensor ref_q = ref.rms_norm_qkv_append_rope(x, g, w, eps, c.H, cfg);
      use_gpu();
      const Tensor xg = x.to(kGpu);
      synchronize();
      Runtime::get().reset_stats();
      const uint64_t d0 = webgpu_batch_stats().dispatches;
      const Tensor q = fused.rms_norm_qkv_append_rope(xg, gg, wg, eps, c.H, cfg);
      EXPECT_EQ(webgpu_batch_stats().dispatches - d0, 1u);
      const std::string variant = webgpu::matmul_last_variant();
      EXPECT_TRUE(has(variant, "+norm +rope_append") && has(variant, c.variant)) << variant;
      const auto& per = Runtime::get().stats().per_op;
      ASSERT_TRUE(per.count("rms_norm_qkv_append_rope"));
      EXPECT_TRUE(per.at("rms_norm_qkv_append_rope").count("webgpu:0"));
      EXPECT_EQ(fused.size(), pre + step + 1);

      const Tensor qkv = rms_norm_matmul_t(xg, gg, wg, eps);
      Tensor uq = qkv.slice(1, 0, qd).view({1, c.H, c.D});
      unfused.append_rope(uq, qkv.slice(1, qd, qd + kvd).view({1, c.Hkv, c.D}),
                          qkv.slice(1, qd + kvd, W).view({1, c.Hkv, c.D}), cfg);
      expect_fused_matches(q, uq, fused, unfused, ref_q, ref, 1e-4, c.cache == f16 ? 2e-3 : 1e-4);
    }
  }
}

// Calls the epilogue does not take give the same bits as rms_norm_matmul_t then append_rope on
// the device, and match the CPU reference: the launcher's two kernels for the neox layout, RB
// = 1 (the vector gemv tuned to 256x32) and an odd head dim; the front end's two ops for f16 x and
// for two rows.
TEST_F(WebGpuNn, NormQkvRopeAppendFallbacks) {
  struct Case {
    const char* what;
    int64_t H, Hkv, D, n_rot;
    RopeStyle style;
    DType x_dtype;
    int64_t n;
    bool rb1;              // the vector gemv at 256x32 (one row per invocation), else the plan's shape
    bool one_op;           // runs as the rms_norm_qkv_append_rope op (its launcher's fallback)
  };
  const DType f32 = DType::F32, f16 = DType::F16;
  for (const Case& c : {Case{"neox", 4, 2, 8, 8, RopeStyle::Neox, f32, 1, false, true},
                        Case{"rb 1", 4, 2, 8, 8, RopeStyle::Normal, f32, 1, true, true},
                        Case{"odd head dim", 3, 1, 5, 4, RopeStyle::Normal, f32, 1, false, true},
                        Case{"f16 x", 4, 2, 8, 8, RopeStyle::Normal, f16, 1, false, false},
                        Case{"two rows", 4, 2, 8, 6, RopeStyle::Normal, f32, 2, false, false}}) {
    SCOPED_TRACE(c.what);
    std::optional<ScopedMatmulTuning> tuning;
    if (c.rb1) {
      webgpu::MatmulTuning t;
      t.gemv_vec = {{256, 32, 1}};
      tuning.emplace(t);
    }
    RopeConfig cfg;
    cfg.style = c.style;
    cfg.n_rot = c.n_rot;
    const int64_t dim = 32, qd = c.H * c.D, kvd = c.Hkv * c.D, W = qd + 2 * kvd;
    const Tensor w = randn({W, dim}, 950, f16), g = randn({dim}, 951, c.x_dtype);
    const Tensor x = randn({c.n, dim}, 952, c.x_dtype);
    const Tensor kpre = randn({1, c.Hkv, c.D}, 953), vpre = randn({1, c.Hkv, c.D}, 954);
    use_cpu_reference();
    KVCache ref(4, c.Hkv, c.D, f16);
    ref.append(kpre, vpre);
    const Tensor ref_q = ref.rms_norm_qkv_append_rope(x, g, w, 1e-5, c.H, cfg);

    use_gpu();
    KVCache fused(4, c.Hkv, c.D, f16, kGpu), unfused(4, c.Hkv, c.D, f16, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const Tensor xg = x.to(kGpu), gg = g.to(kGpu), wg = w.to(kGpu);
    synchronize();
    Runtime::get().reset_stats();
    const uint64_t d0 = webgpu_batch_stats().dispatches;
    const Tensor q = fused.rms_norm_qkv_append_rope(xg, gg, wg, 1e-5, c.H, cfg);
    EXPECT_GE(webgpu_batch_stats().dispatches - d0, 2u);
    EXPECT_FALSE(has(webgpu::matmul_last_variant(), "+rope_append")) << webgpu::matmul_last_variant();
    const auto& per = Runtime::get().stats().per_op;
    EXPECT_EQ(per.count("rms_norm_qkv_append_rope"), c.one_op ? 1u : 0u);
    for (const auto& [op, backends] : per) EXPECT_TRUE(backends.count("webgpu:0")) << op;
    EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);

    const Tensor qkv = rms_norm_matmul_t(xg, gg, wg, 1e-5);
    Tensor uq = qkv.slice(1, 0, qd).contiguous().view({c.n, c.H, c.D});
    unfused.append_rope(uq, qkv.slice(1, qd, qd + kvd).view({c.n, c.Hkv, c.D}),
                        qkv.slice(1, qd + kvd, W).view({c.n, c.Hkv, c.D}), cfg);
    const double tol = c.x_dtype == f16 ? 1e-2 : 2e-3;
    expect_fused_matches(q, uq, fused, unfused, ref_q, ref, tol, tol);
  }
}

// KVCache::rms_norm_qkv_append_rope with a quantized q/k/v weight on the device: one dispatch
// per decode step (the subgroup matvec with the rope_append epilogue), equal in bits to the
// unfused device ops (rms_norm_qmatmul_t, then append_rope) and close to the CPU: formats of the
// 8-bit-x kernel (Q4_0, Q8_0, Q4_K, Q6_K) and of the f32-x one (Q4_1, Q5_K), GQA and H == Hkv,
// f16 and f32 caches, n_rot < head_dim, RoPE freq factors. The neox layout runs as the same op
// through the launcher's two kernels, with the same bits.
TEST_F(WebGpuNn, QuantizedNormQkvRopeAppend) {
  struct Case {
    QType t;
    int64_t H, Hkv, D, n_rot;
    DType cache;
    bool factors;
    RopeStyle style;
  };
  const DType f32 = DType::F32, f16 = DType::F16;
  const RopeStyle normal = RopeStyle::Normal;
  for (const Case& c : {Case{QType::Q4_0, 4, 2, 8, 8, f16, false, normal}, Case{QType::Q8_0, 4, 4, 8, 6, f32, false, normal},
                        Case{QType::Q4_K, 3, 1, 16, 16, f16, true, normal}, Case{QType::Q6_K, 2, 2, 16, 8, f32, false, normal},
                        Case{QType::Q4_1, 4, 2, 8, 8, f32, false, normal}, Case{QType::Q5_K, 2, 1, 16, 12, f16, false, normal},
                        Case{QType::Q4_0, 4, 2, 8, 8, f16, false, RopeStyle::Neox}}) {
    const bool fused_kernel = c.style == normal;
    SCOPED_TRACE(std::string(qtype_name(c.t)) + " H " + std::to_string(c.H) + " Hkv " + std::to_string(c.Hkv) + " D " +
                 std::to_string(c.D) + " n_rot " + std::to_string(c.n_rot) + " cache " + dtype_name(c.cache) +
                 (c.factors ? " factors" : "") + (fused_kernel ? "" : " neox"));
    RopeConfig cfg;
    cfg.n_rot = c.n_rot;
    cfg.base = 500.0;
    cfg.style = c.style;
    if (c.factors) cfg.freq_factors = Tensor::from_vector(std::vector<float>{1.f, 2.f, 4.f, 8.f, 1.5f, 3.f, 6.f, 12.f}, {8});
    const int64_t dim = 256, qd = c.H * c.D, kvd = c.Hkv * c.D, W = qd + 2 * kvd;
    const QTensor w = quantize(rand_normal({W, dim}, 960, 0.0, 0.05, f32), c.t);
    const Tensor g = randn({dim}, 961), kpre = randn({1, c.Hkv, c.D}, 962), vpre = randn({1, c.Hkv, c.D}, 963);
    use_cpu_reference();
    KVCache ref(5, c.Hkv, c.D, c.cache);
    ref.append(kpre, vpre);
    use_gpu();
    KVCache fused(5, c.Hkv, c.D, c.cache, kGpu), unfused(5, c.Hkv, c.D, c.cache, kGpu);
    fused.append(kpre.to(kGpu), vpre.to(kGpu));
    unfused.append(kpre.to(kGpu), vpre.to(kGpu));
    const QTensor wg = w.to(kGpu);
    const Tensor gg = g.to(kGpu);
    RopeConfig gcfg = cfg;
    if (c.factors) gcfg.freq_factors = cfg.freq_factors.to(kGpu);
    for (int step = 0; step < 3; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Tensor x = randn({1, dim}, 970 + step);
      use_cpu_reference();
      const Tensor ref_q = ref.rms_norm_qkv_append_rope(x, g, w, 1e-5, c.H, cfg);
      use_gpu();
      const Tensor xg = x.to(kGpu);
      synchronize();
      Runtime::get().reset_stats();
      const uint64_t d0 = webgpu_batch_stats().dispatches;
      const Tensor q = fused.rms_norm_qkv_append_rope(xg, gg, wg, 1e-5, c.H, gcfg);
      const uint64_t dispatches = webgpu_batch_stats().dispatches - d0;
      if (fused_kernel) EXPECT_EQ(dispatches, 1u);
      else EXPECT_GE(dispatches, 2u);
      EXPECT_EQ(webgpu::last_qmatvec_plan_for_testing().shader.epi, fused_kernel ? 1 : 0);
      const auto& per = Runtime::get().stats().per_op;
      ASSERT_TRUE(per.count("rms_norm_qkv_append_rope"));
      EXPECT_TRUE(per.at("rms_norm_qkv_append_rope").count("webgpu:0"));
      EXPECT_EQ(Runtime::get().stats().fallbacks, 0u);

      const Tensor qkv = rms_norm_qmatmul_t(xg, gg, wg, 1e-5);
      Tensor uq = qkv.slice(1, 0, qd).view({1, c.H, c.D});
      unfused.append_rope(uq, qkv.slice(1, qd, qd + kvd).view({1, c.Hkv, c.D}),
                          qkv.slice(1, qd + kvd, W).view({1, c.Hkv, c.D}), gcfg);
      // The default 8-bit x (i8x2) holds x to ~f16 precision (docs/quantization.md).
      expect_fused_matches(q, uq, fused, unfused, ref_q, ref, 2e-3, c.cache == f16 ? 3e-3 : 2e-3);
    }
  }
}

TEST_F(WebGpuNn, BlockF16WeightsOnDevice) {
  BlockConfig cfg;
  cfg.dim = 64;
  cfg.n_heads = 2;
  cfg.n_kv_heads = 1;
  cfg.ffn_dim = 80;
  {
    // The projections are f16 matmuls, owned by the matmul kernels: where they are not
    // available (no shader-f16 and no packed-f16 matmul yet) this block cannot stay on the GPU.
    DeviceBackend* gpu = Runtime::get().webgpu_backend(0);
    ASSERT_NE(gpu, nullptr);
    const Tensor a = Tensor::empty({2, 2}, DType::F16, kGpu);
    OpCall probe{OpKind::MatMul, "matmul_t", {a, a}, {Tensor::empty({2, 2}, DType::F16, kGpu)}, {}, 0.0, {}};
    probe.attrs.transpose_b = true;
    if (Support s = gpu->supports(probe); !s.ok) GTEST_SKIP() << "f16 matmul unavailable on this device: " << s.reason;
  }
  use_cpu_reference();
  BlockWeights w = BlockWeights::random(cfg, 6, DType::F16);
  Tensor x = randn({5, 64}, 42);
  TransformerBlock cpu_blk(cfg, w);
  KVCache cc = cpu_blk.make_cache(5, DType::F16);
  Tensor want = cpu_blk.forward(x, cc, 0);
  use_gpu();
  for (Tensor* t : {&w.attn_norm, &w.wq, &w.wk, &w.wv, &w.wo, &w.ffn_norm, &w.w_gate, &w.w_up, &w.w_down}) *t = t->to(kGpu);
  TransformerBlock blk(cfg, w);
  KVCache gc = blk.make_cache(5, DType::F16);
  // f16 matmul outputs may round differently by one f16 ulp between the backends.
  EXPECT_LE(rel_err(blk.forward(x.to(kGpu), gc, 0), want), 1e-2);
}

TEST_F(WebGpuNn, BlockDecodeEqualsPrefillOnDevice) {
  BlockConfig cfg;
  cfg.dim = 64;
  cfg.n_heads = 4;
  cfg.n_kv_heads = 2;
  cfg.ffn_dim = 96;
  use_cpu_reference();
  BlockWeights wc = BlockWeights::random(cfg, 5, DType::F32);
  Tensor x = randn({6, 64}, 41);
  TransformerBlock cpu_blk(cfg, wc);
  KVCache cpu_cache = cpu_blk.make_cache(8);
  Tensor want = cpu_blk.forward(x, cpu_cache, 0);

  use_gpu();
  BlockWeights wg = wc;
  for (Tensor* t : {&wg.attn_norm, &wg.wq, &wg.wk, &wg.wv, &wg.wo, &wg.ffn_norm, &wg.w_gate, &wg.w_up, &wg.w_down})
    *t = t->to(kGpu);
  TransformerBlock blk(cfg, wg);
  blk.pin_weights();
  KVCache c1 = blk.make_cache(8, DType::F16), c2 = blk.make_cache(8, DType::F16);
  Tensor xg = x.to(kGpu);
  Tensor pre = blk.forward(xg, c1, 0);
  EXPECT_TRUE(pre.device() == kGpu);
  EXPECT_LE(rel_err(pre, want), 5e-3);  // f16 cache vs the f32 reference cache
  for (int64_t t = 0; t < 6; ++t) {
    Tensor y = blk.forward(xg.slice(0, t, t + 1), c2, t);
    EXPECT_LE(rel_err(y, pre.slice(0, t, t + 1).contiguous()), 1e-4) << "step " << t;
  }
}

}  // namespace
}  // namespace wgt
