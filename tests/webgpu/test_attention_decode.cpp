// Decode attention (q_len <= 4) on WebGPU against the CPU reference, through both pass-1
// kernels: the subgroup streaming kernel (attention_decode_sg.wgsl) and the staged split-KV
// kernel (attention_decode.wgsl), forced with WGT_ATTN_DECODE_KERNEL. Shapes cover the lane
// splits (head dims 64, 96, 128) and one that falls back (80 with f16 K/V), GQA 1/4/8, key
// counts that are not a multiple of a chunk, masks, f16/f32 caches and very large scores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settings_env.hpp"
#include "webgpu_test.hpp"
#include "wgt/webgpu_info.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

struct Case {
  int64_t lq, lk, heads, kv_heads, d;
  bool causal;
  DType q_dt, kv_dt;
  bool mask = false;
  double amp = 1.0;  // scale of q and k: amp^2 * d sets the score magnitude
};

std::string name(const Case& c) {
  return "lq " + std::to_string(c.lq) + " lk " + std::to_string(c.lk) + " h " + std::to_string(c.heads) + "/" +
         std::to_string(c.kv_heads) + " d " + std::to_string(c.d) + (c.causal ? " causal" : "") + " q " +
         dtype_name(c.q_dt) + " kv " + dtype_name(c.kv_dt) + (c.mask ? " mask" : "") +
         (c.amp != 1.0 ? " amp " + std::to_string(c.amp) : "");
}

class WebGpuAttentionDecode : public wgt::testing::WebGpuTest {
 protected:
  // Inputs on the host: q [lq, heads, d], k/v [lk, kv_heads, d], mask [lq, lk] (zeros, some
  // -inf, some negative finite values, one fully masked row when lq > 1).
  std::vector<Tensor> inputs(const Case& c, uint64_t seed) {
    std::vector<Tensor> in{rand_normal({c.lq, c.heads, c.d}, seed, 0.0, c.amp, c.q_dt),
                           rand_normal({c.lk, c.kv_heads, c.d}, seed + 1, 0.0, c.amp, c.kv_dt),
                           rand_normal({c.lk, c.kv_heads, c.d}, seed + 2, 0.0, 1.0, c.kv_dt)};
    if (c.mask) {
      std::vector<float> m(static_cast<size_t>(c.lq * c.lk));
      for (size_t i = 0; i < m.size(); ++i) m[i] = i % 5 == 2 ? -INFINITY : -0.5f * static_cast<float>(i % 3);
      if (c.lq > 1)
        for (int64_t j = 0; j < c.lk; ++j) m[static_cast<size_t>(c.lk + j)] = -INFINITY;  // row 1 sees nothing
      in.push_back(Tensor::from_vector(m, {c.lq, c.lk}));
    }
    return in;
  }
  static Tensor run(const Case& c, const std::vector<Tensor>& in) {
    AttnConfig ac;
    ac.causal = c.causal;
    if (c.mask) ac.mask = in[3];
    return attention(in[0], in[1], in[2], ac);
  }
  std::vector<double> host_values(const Tensor& t) {
    Policy keep = Runtime::get().policy();
    use_cpu_reference();
    auto v = cast(t.cpu(), DType::F64).to_vector<double>();
    Runtime::get().set_policy(keep);
    return v;
  }
  // Runs the case on WebGPU (no fallback) and returns its output on the device.
  Tensor run_gpu(const Case& c, const std::vector<Tensor>& host) {
    std::vector<Tensor> dev;
    for (const Tensor& t : host) dev.push_back(t.to(kGpu));
    use_gpu();
    Runtime::get().set_record_log(true);
    Tensor got = run(c, dev);
    bool on_gpu = false;
    for (const auto& d : Runtime::get().trace_log())
      if (d.op == "attention") on_gpu |= d.backend.rfind("webgpu", 0) == 0;
    Runtime::get().set_record_log(false);
    EXPECT_TRUE(on_gpu) << "attention did not run on webgpu";
    return got;
  }
  // max |got - want| / (1 + |want|); NaN or inf anywhere fails.
  void expect_close(const Case& c, const std::string& kernel, uint64_t seed) {
    SCOPED_TRACE(kernel + ": " + name(c));
    const std::vector<Tensor> host = inputs(c, seed);
    use_cpu_reference();
    const Tensor want = run(c, host);
    const Tensor got = run_gpu(c, host);
    ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape()));
    ASSERT_EQ(got.dtype(), want.dtype());
    const auto g = host_values(got), w = host_values(want);
    ASSERT_EQ(g.size(), w.size());
    double err = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_TRUE(std::isfinite(g[i]) && std::isfinite(w[i])) << "element " << i << ": " << g[i] << " vs " << w[i];
      err = std::max(err, std::fabs(g[i] - w[i]) / (1.0 + std::fabs(w[i])));
    }
    // f16 outputs round to 11 bits; f32 ones differ from the reference by summation order.
    EXPECT_LE(err, c.q_dt == DType::F16 ? 2e-3 : 1e-4);
  }
};

// Both kernels on the shapes of the brief; each case is one pipeline variant per kernel.
TEST_F(WebGpuAttentionDecode, MatchesReferenceBothKernels) {
  const DType f32 = DType::F32, f16 = DType::F16;
  const Case cases[] = {
      // lane splits of the subgroup kernel (f16 rows need d % 8L == 0, f32 d % 4L == 0)
      {1, 4097, 32, 8, 128, true, f32, f16},  // the benchmark's shape, lk past a chunk multiple
      {1, 5000, 8, 1, 128, true, f32, f32},   // GQA 8, f32 cache (16 lanes; split where subgroups are 8 wide)
      {4, 5000, 16, 2, 64, true, f32, f32},   // GQA 8, f32 cache, 8 lanes
      {4, 4097, 4, 4, 64, true, f32, f16},    // GQA 1, max decode queries, causal
      {4, 7, 8, 2, 64, true, f16, f16},       // f16 queries and output, few keys
      {1, 1, 4, 1, 128, true, f32, f16},      // a single key
      {1, 7, 4, 1, 96, false, f32, f32},      // d 96, f32: 8 lanes of 12 dims
      {3, 5000, 4, 2, 96, true, f32, f16},    // d 96, f16: 4 lanes of 24 dims
      {2, 4097, 12, 4, 96, true, f16, f32},   // GQA 3
      // d 80 with an f16 cache fits no lane split: the subgroup kernel falls back to split
      {1, 5000, 8, 2, 80, true, f32, f16},
      {4, 7, 4, 4, 80, true, f16, f16},
      // masks (with -inf entries; row 1 fully masked gives zeros)
      {1, 4097, 8, 1, 64, false, f32, f16, true},
      {4, 5000, 8, 2, 128, false, f16, f16, true},
      {4, 7, 4, 1, 128, true, f32, f32, true},
  };
  for (const char* kernel : {"sg", "split"}) {
    EnvGuard env("WGT_ATTN_DECODE_KERNEL", kernel);
    uint64_t seed = 100;
    for (const Case& c : cases) expect_close(c, kernel, seed += 3);
  }
}

// Scores near +-1e4 (|q|, |k| ~ 9, d 128): exp must only ever see differences from a running
// max, and a lane group whose max is far below the workgroup's must contribute exactly 0.
TEST_F(WebGpuAttentionDecode, LargeScoresStayFinite) {
  const Case cases[] = {
      {1, 4097, 8, 2, 128, true, DType::F32, DType::F32, false, 9.0},
      {4, 5000, 8, 8, 64, true, DType::F32, DType::F16, true, 9.0},
  };
  for (const char* kernel : {"sg", "split"}) {
    EnvGuard env("WGT_ATTN_DECODE_KERNEL", kernel);
    uint64_t seed = 500;
    for (const Case& c : cases) expect_close(c, kernel, seed += 3);
  }
}

// The sweep knobs of the subgroup kernel change only the schedule, never the result.
TEST_F(WebGpuAttentionDecode, TuningKnobsKeepResults) {
  const Case c{1, 4097, 8, 4, 128, true, DType::F32, DType::F16};  // GQA 2: 4 or 8 lanes fit
  EnvGuard kernel("WGT_ATTN_DECODE_KERNEL", "sg");
  struct Knobs { const char *chunk, *lanes, *warps, *unroll; };
  const Knobs sweeps[] = {{"1", "4", "1", "1"}, {"100", "8", "2", "4"}, {"4096", nullptr, "8", "2"}, {"33", "4", "4", "2"}};
  for (const Knobs& k : sweeps) {
    EnvGuard e1("WGT_ATTN_DECODE_CHUNK", k.chunk), e2("WGT_ATTN_DECODE_LANES", k.lanes),
        e3("WGT_ATTN_DECODE_WARPS", k.warps), e4("WGT_ATTN_DECODE_UNROLL", k.unroll);
    expect_close(c, std::string("chunk ") + k.chunk + " warps " + k.warps + " unroll " + k.unroll, 700);
  }
}

// WGT_ATTN_DECODE_KERNEL really selects a different pass 1 for a shape the subgroup kernel
// takes: the two sum in different orders, so f32 outputs differ in their last bits (both are
// checked against the reference above).
TEST_F(WebGpuAttentionDecode, KernelKnobSwitchesKernels) {
  const Case c{1, 4097, 8, 2, 128, true, DType::F32, DType::F32};
  const std::vector<Tensor> host = inputs(c, 900);
  std::vector<double> out[2];
  int i = 0;
  for (const char* kernel : {"sg", "split"}) {
    EnvGuard env("WGT_ATTN_DECODE_KERNEL", kernel);
    out[i++] = host_values(run_gpu(c, host));
  }
  EXPECT_NE(out[0], out[1]);
}

// With one key split (short contexts, or a chunk as long as the keys) the subgroup kernel
// stores O itself: one dispatch instead of two, and the same values as the reduction pass
// bit for bit (its weight is exp(0) = 1), NaN rows, fully masked rows and f16 outputs included.
TEST_F(WebGpuAttentionDecode, DirectStoreEqualsTheReductionPass) {
  const DType f32 = DType::F32, f16 = DType::F16;
  struct DirectCase {
    Case c;
    const char* chunk;  // nullptr: the plan's (one split for these key counts on any adapter)
    bool poison;        // a NaN in one key row of kv head 0
  };
  const DirectCase cases[] = {
      {{1, 7, 8, 2, 128, true, f32, f16}, nullptr, false},
      {{4, 33, 8, 2, 64, true, f16, f16, true}, nullptr, false},  // row 1 fully masked: zeros
      {{2, 300, 8, 4, 64, true, f32, f32}, "512", false},        // a chunk past the keys
      {{1, 1, 4, 4, 64, false, f32, f32}, nullptr, true},        // one key, NaN in head 0
  };
  EnvGuard kernel("WGT_ATTN_DECODE_KERNEL", "sg");
  uint64_t seed = 1200;
  for (const DirectCase& dc : cases) {
    SCOPED_TRACE(name(dc.c));
    std::vector<Tensor> host = inputs(dc.c, seed += 5);
    if (dc.poison) {
      auto k = host[1].to_vector<float>();
      k[static_cast<size_t>(dc.c.lk / 2 * dc.c.kv_heads * dc.c.d + 3)] = NAN;
      host[1] = Tensor::from_vector(k, host[1].shape());
    }
    EnvGuard chunk("WGT_ATTN_DECODE_CHUNK", dc.chunk);
    std::vector<double> out[2];
    uint64_t dispatches[2];
    for (int direct = 0; direct < 2; ++direct) {
      EnvGuard env("WGT_ATTN_DECODE_DIRECT", direct ? "1" : "0");
      run_gpu(dc.c, host);  // warm-up: the pipelines exist, inputs are uploaded the same way
      synchronize();
      const uint64_t d0 = webgpu_batch_stats().dispatches;
      const Tensor got = run_gpu(dc.c, host);
      dispatches[direct] = webgpu_batch_stats().dispatches - d0;
      out[direct] = host_values(got);
    }
    EXPECT_EQ(dispatches[0] - dispatches[1], 1u) << "the direct store did not save the reduction pass";
    ASSERT_EQ(out[0].size(), out[1].size());
    size_t nans = 0;
    for (size_t i = 0; i < out[0].size(); ++i) {
      if (std::isnan(out[0][i])) {
        ++nans;
        EXPECT_TRUE(std::isnan(out[1][i])) << "element " << i;
      } else {
        EXPECT_EQ(out[0][i], out[1][i]) << "element " << i;
      }
    }
    // The poisoned key (every query sees it: not causal) reaches the query heads of kv head 0.
    if (dc.poison) EXPECT_EQ(nans, static_cast<size_t>(dc.c.lq * (dc.c.heads / dc.c.kv_heads) * dc.c.d));
    else EXPECT_EQ(nans, 0u);
    if (!dc.poison) {
      use_cpu_reference();
      const auto want = host_values(run(dc.c, host));
      double err = 0;
      for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(out[1][i] - want[i]) / (1.0 + std::fabs(want[i])));
      EXPECT_LE(err, dc.c.q_dt == f16 ? 2e-3 : 1e-4);
    }
  }
}

TEST_F(WebGpuAttentionDecode, BadKnobIsATypedError) {
  const Case c{1, 7, 4, 1, 64, true, DType::F32, DType::F32};
  std::vector<Tensor> dev;
  for (const Tensor& t : inputs(c, 950)) dev.push_back(t.to(kGpu));
  use_gpu();
  for (const auto& [knob, value] : {std::pair{"WGT_ATTN_DECODE_KERNEL", "fast"}, std::pair{"WGT_ATTN_DECODE_CHUNK", "-3"},
                                    std::pair{"WGT_ATTN_DECODE_LANES", "6"}}) {
    EnvGuard env(knob, value);
    try {
      run(c, dev);
      ADD_FAILURE() << knob << "=" << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(knob), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace wgt
