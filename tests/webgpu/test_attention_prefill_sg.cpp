// Prefill attention on subgroup matrices (shaders/attention_prefill_sg.wgsl) against the CPU
// reference: f16 q / k / v, causal and unmasked, GQA groups 1 / 3 / 4 / 8, head dims 64 and
// 128, odd lengths (partial query blocks and key tiles), fewer queries than keys (a KV cache in
// front), more queries than keys, no keys at all, scores large enough that the lazy
// rescale of the running max fires, and NaN / inf in q, k and v. On an adapter with f16
// subgroup matrices (Debian's Dawn on NVIDIA, or sid's lavapipe: scripts/test_sgmat_cpu.sh)
// every case must run on that kernel; elsewhere the same cases check the scalar prefill kernel.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "settings_env.hpp"
#include "webgpu/kernels/nn.hpp"
#include "webgpu/plans/tuning.hpp"
#include "webgpu_test.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);
const char* const kSg = "attention_prefill_sg";
const char* const kScalar = "attention_prefill";

struct Case {
  int64_t lq, lk, heads, kv_heads, d;
  bool causal;
  double amp = 1.0;  // scale of q and k: amp^2 sqrt(d) sets the score magnitude
};

std::string name(const Case& c) {
  return "lq " + std::to_string(c.lq) + " lk " + std::to_string(c.lk) + " h " + std::to_string(c.heads) + "/" +
         std::to_string(c.kv_heads) + " d " + std::to_string(c.d) + (c.causal ? " causal" : "") +
         (c.amp != 1.0 ? " amp " + std::to_string(c.amp) : "");
}

std::vector<float> normal(int64_t n, uint32_t seed, double amp) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, static_cast<float>(amp));
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = nd(rng);
  return v;
}

class WebGpuAttentionPrefillSg : public testing::WebGpuTest {
 protected:
  // The kernel's tests hold whatever the environment asks for.
  EnvGuard default_{"WGT_ATTN_PREFILL", nullptr};
  struct Inputs {
    Tensor q, k, v;  // f16, on the host
  };
  static Inputs inputs(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                       const std::vector<float>& v) {
    auto f16 = [](const std::vector<float>& x, const Shape& s) { return cast(Tensor::from_vector(x, s), DType::F16); };
    return {f16(q, {c.lq, c.heads, c.d}), f16(k, {c.lk, c.kv_heads, c.d}), f16(v, {c.lk, c.kv_heads, c.d})};
  }
  static Inputs inputs(const Case& c, uint32_t seed) {
    return inputs(c, normal(c.lq * c.heads * c.d, seed, c.amp), normal(c.lk * c.kv_heads * c.d, seed + 1, c.amp),
                  normal(c.lk * c.kv_heads * c.d, seed + 2, 1.0));
  }
  static std::vector<double> values(const Tensor& t) { return cast(t.cpu(), DType::F64).to_vector<double>(); }

  // The reference (f64 on the f16 values) and the GPU output, with the kernel that ran.
  void run_both(const Case& c, const Inputs& in, std::vector<double>& want, std::vector<double>& got, std::string& shader) {
    AttnConfig ac;
    ac.causal = c.causal;
    use_cpu_reference();
    want = values(attention(in.q, in.k, in.v, ac));
    use_gpu();
    Tensor out = attention(in.q.to(kGpu), in.k.to(kGpu), in.v.to(kGpu), ac);
    shader = webgpu::attention_last_shader();
    use_cpu_reference();
    ASSERT_EQ(out.dtype(), DType::F16);
    got = values(out);
    ASSERT_EQ(got.size(), want.size());
  }

  // Error bound of the f16 kernel, per output element w (f64 reference on the same f16 inputs):
  // - the weights P are rounded to f16 (relative u = 2^-11 each, the sum uses the same rounded
  //   values): a weighted average of v with weights off by a factor 1 + delta moves by at most
  //   2 u max|v|;
  // - f32 scores: |dS| <= scale (d 2^-24 + 2^-22) |q| |k| (the dot's summation, the log2 e
  //   product and exp2), which scales the weights by e^dS: another 2 |dS| max|v|;
  // - the f16 output: u |w|.
  static double tolerance(const Case& c, const Inputs& in, double w) {
    const double u = std::ldexp(1.0, -11);
    double vmax = 0, qn = 0, kn = 0;
    for (double x : values(in.v)) vmax = std::max(vmax, std::fabs(x));
    auto max_row_norm = [&](const Tensor& t) {
      const auto x = values(t);
      double m = 0;
      for (size_t r = 0; r * c.d < x.size(); ++r) {
        double s = 0;
        for (int64_t i = 0; i < c.d; ++i) s += x[r * c.d + i] * x[r * c.d + i];
        m = std::max(m, std::sqrt(s));
      }
      return m;
    };
    qn = max_row_norm(in.q);
    kn = max_row_norm(in.k);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
    const double ds = scale * (c.d * std::ldexp(1.0, -24) + std::ldexp(1.0, -22)) * qn * kn;
    return 2 * vmax * (u + ds) * 1.01 + u * std::fabs(w) + 1e-7;
  }

  // Checks one case; returns the shader that ran.
  std::string expect_close(const Case& c, uint32_t seed, const Inputs* given = nullptr) {
    SCOPED_TRACE(name(c));
    const Inputs in = given ? *given : inputs(c, seed);
    std::vector<double> want, got;
    std::string shader;
    run_both(c, in, want, got, shader);
    if (HasFatalFailure()) return shader;
    const double tol0 = tolerance(c, in, 0);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(std::isfinite(want[i])) << "reference element " << i;
      const double tol = tol0 + std::ldexp(1.0, -11) * std::fabs(want[i]);
      if (!(std::fabs(got[i] - want[i]) <= tol)) {
        ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << want[i] << " (tolerance " << tol << ")";
        return shader;
      }
      worst = std::max(worst, std::fabs(got[i] - want[i]) / tol);
    }
    RecordProperty(name(c), std::to_string(worst));
    if (std::getenv("DBG")) std::fprintf(stderr, "%s: worst error / tolerance %.3f\n", name(c).c_str(), worst);
    return shader;
  }
};

TEST_F(WebGpuAttentionPrefillSg, MatchesReference) {
  const std::string expect = wgt::testing::adapter_has_f16_matrices() ? kSg : kScalar;
  const Case cases[] = {
      {37, 37, 4, 1, 64, true},      // GQA 4, one partial query block
      {200, 200, 8, 2, 128, true},   // several blocks and tiles, the last tile partial
      {130, 130, 2, 2, 128, false},  // GQA 1 (one head per workgroup), no mask
      {5, 5, 4, 1, 64, true},        // the fewest queries above the decode kernels
      {50, 173, 4, 1, 128, true},    // a KV cache before the queries: diagonal mid-tile
      {33, 100, 8, 8, 64, false},    // more keys than queries, no mask
      {70, 20, 4, 2, 64, false},     // more queries than keys (causal needs lk >= lq)
      {40, 40, 8, 1, 64, true},      // GQA 8
      {45, 61, 6, 2, 128, true},     // GQA 3: one head per workgroup
      {7, 0, 4, 1, 64, false},       // no keys at all: zeros
  };
  uint32_t seed = 10;
  for (const Case& c : cases) {
    const std::string shader = expect_close(c, seed += 3);
    if (HasFatalFailure()) return;
    if (c.lq > 4) {
      EXPECT_EQ(shader, expect) << name(c);
    }
  }
}

// Scores of tens to thousands (|q|, |k| ~ 3 and 9): the running maximum grows by more than the
// lazy threshold between tiles, so O is rescaled mid-row, repeatedly.
TEST_F(WebGpuAttentionPrefillSg, LargeScoresRescale) {
  const std::string expect = wgt::testing::adapter_has_f16_matrices() ? kSg : kScalar;
  const Case cases[] = {{100, 100, 4, 1, 64, true, 3.0}, {64, 150, 4, 4, 128, true, 9.0}, {90, 90, 2, 1, 64, false, 3.0}};
  uint32_t seed = 300;
  for (const Case& c : cases) {
    EXPECT_EQ(expect_close(c, seed += 3), expect) << name(c);
    if (HasFatalFailure()) return;
  }
  // Scores that rise key after key: every tile moves every row's maximum.
  const Case c{80, 80, 4, 1, 64, true};
  std::vector<float> q(static_cast<size_t>(c.lq * c.heads * c.d), 0.5f), k(static_cast<size_t>(c.lk * c.d)),
      v = normal(c.lk * c.d, 77, 1.0);
  for (int64_t j = 0; j < c.lk; ++j)
    for (int64_t i = 0; i < c.d; ++i) k[static_cast<size_t>(j * c.d + i)] = 0.05f * static_cast<float>(j) + (i % 2 ? 0.01f : 0.f);
  const Inputs in = inputs(c, q, k, v);
  EXPECT_EQ(expect_close(c, 0, &in), expect);
}

// NaN and inf as docs/semantics.md says: a NaN in q makes that (query, head) row NaN; a NaN in
// a key's k makes every row that sees the key NaN (only those: causal rows before it stay
// finite, also in the key's own tile); a NaN or inf in v reaches only the rows that give the
// key weight, and only that column; rows before it (weight 0) stay finite.
TEST_F(WebGpuAttentionPrefillSg, NanAndInfFollowTheReference) {
  const std::string expect = wgt::testing::adapter_has_f16_matrices() ? kSg : kScalar;
  const Case c{60, 60, 4, 2, 64, true};
  std::vector<float> q = normal(c.lq * c.heads * c.d, 1, 1.0), k = normal(c.lk * c.kv_heads * c.d, 2, 1.0),
                     v = normal(c.lk * c.kv_heads * c.d, 3, 1.0);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto at = [&](int64_t row, int64_t head, int64_t heads, int64_t dim) { return static_cast<size_t>((row * heads + head) * c.d + dim); };
  q[at(3, 1, c.heads, 5)] = nan;         // row 3, head 1
  k[at(41, 0, c.kv_heads, 9)] = nan;     // key 41 of kv head 0 (heads 0, 1): rows >= 41
  v[at(20, 1, c.kv_heads, 7)] = nan;     // key 20 of kv head 1 (heads 2, 3): rows >= 20, dim 7
  v[at(45, 1, c.kv_heads, 11)] = inf;    // key 45 of kv head 1: rows >= 45, dim 11 (+inf)
  const Inputs in = inputs(c, q, k, v);
  std::vector<double> want, got;
  std::string shader;
  run_both(c, in, want, got, shader);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(shader, expect);
  const double tol0 = tolerance(c, Inputs{in.q, in.k, cast(Tensor::from_vector(normal(c.lk * c.kv_heads * c.d, 3, 1.0),
                                                                                 {c.lk, c.kv_heads, c.d}), DType::F16)}, 0);
  int nans = 0, infs = 0, finite = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string where = "element " + std::to_string(i) + " (row " + std::to_string(i / (c.heads * c.d)) + ", head " +
                              std::to_string(i / c.d % c.heads) + ", dim " + std::to_string(i % c.d) + ")";
    if (std::isnan(want[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(got[i])) << where << ": got " << got[i];
    } else if (std::isinf(want[i])) {
      ++infs;
      EXPECT_EQ(got[i], want[i]) << where;
    } else {
      ++finite;
      EXPECT_NEAR(got[i], want[i], tol0 + std::ldexp(1.0, -11) * std::fabs(want[i])) << where;
    }
  }
  // The cases are really there: the q row (64 dims), the k rows (19 rows x 2 heads x 64), the
  // v columns (40 rows x 2 heads, one dim; some inside the k NaN rows do not count twice).
  EXPECT_GE(nans, c.d + 19 * 2 * c.d + 30);
  EXPECT_GE(infs, 10);
  EXPECT_GT(finite, nans);
}

// WGT_ATTN_PREFILL_SG changes the schedule (subgroups per workgroup, keys per tile), never the
// result: one subgroup (one head per workgroup even for GQA 4), short tiles, long tiles.
TEST_F(WebGpuAttentionPrefillSg, TunedTilesKeepResults) {
  const std::string expect = wgt::testing::adapter_has_f16_matrices() ? kSg : kScalar;
  const Case c{100, 100, 4, 1, 64, true};
  // Valid for 8x8x8 (lavapipe) and 16x16x16 (NVIDIA) fragments; x1: one lane per score row.
  for (const char* tile : {"1x16", "4x16", "2x64", "8x32x1", "4x32x1"}) {
    EnvGuard env("WGT_ATTN_PREFILL_SG", tile);
    SCOPED_TRACE(tile);
    EXPECT_EQ(expect_close(c, 1000), expect) << tile;
    if (HasFatalFailure()) return;
  }
}

// The subgroup-matrix kernel by default and with WGT_ATTN_PREFILL=sg where the adapter has f16
// matrices; WGT_ATTN_PREFILL=scalar, a general mask and f32 queries take the scalar kernel.
TEST_F(WebGpuAttentionPrefillSg, KernelChoice) {
  const bool tc = wgt::testing::adapter_has_f16_matrices();
  const Case c{24, 24, 4, 1, 64, true};
  {
    EnvGuard env("WGT_ATTN_PREFILL", nullptr);
    EXPECT_EQ(expect_close(c, 900), tc ? kSg : kScalar);
  }
  {
    EnvGuard env("WGT_ATTN_PREFILL", "scalar");
    EXPECT_EQ(expect_close(c, 900), kScalar);
  }
  {
    EnvGuard env("WGT_ATTN_PREFILL", "sg");
    EXPECT_EQ(expect_close(c, 900), tc ? kSg : kScalar);
  }
  const Inputs in = inputs(c, 901);
  use_gpu();
  AttnConfig masked;
  masked.mask = zeros({c.lq, c.lk}, DType::F32, kGpu);
  (void)attention(in.q.to(kGpu), in.k.to(kGpu), in.v.to(kGpu), masked);
  EXPECT_EQ(webgpu::attention_last_shader(), kScalar);
  (void)attention(cast(in.q, DType::F32).to(kGpu), in.k.to(kGpu), in.v.to(kGpu), AttnConfig{0.0, true, {}});
  EXPECT_EQ(webgpu::attention_last_shader(), kScalar);
  EnvGuard bad("WGT_ATTN_PREFILL", "fast");
  try {
    (void)attention(in.q.to(kGpu), in.k.to(kGpu), in.v.to(kGpu));
    ADD_FAILURE() << "WGT_ATTN_PREFILL=fast was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("WGT_ATTN_PREFILL"), std::string::npos) << e.what();
  }
}

// The diagnosis modes (AttentionTuning::prefill_sg_debug) make the kernel write an
// intermediate of its first key tile and stop: 1 the raw scores Q K^T, 2 the staged Q fragment,
// 3 the K^T fragment, 4 the scores over the first SK dims (one product). Each must match the
// f64 value from the f16 inputs within the f16 rounding of the output and f32 accumulation, so
// one run on a GPU tells which tensor-core step is wrong. Elsewhere the modes change nothing.
TEST_F(WebGpuAttentionPrefillSg, DebugModesMatchTheInputs) {
  struct Reset {
    ~Reset() { webgpu::set_kernel_tuning_override(std::nullopt); }
  } reset;
  const bool tc = wgt::testing::adapter_has_f16_matrices();
  const std::array<int64_t, 3> mnk = wgt::testing::f16_matrix_shape();
  const int64_t sm = mnk[0], sk = mnk[2];
  const Case c{20, 32, 4, 2, 64, false};
  const Inputs in = inputs(c, 1200);
  const int64_t group = c.heads / c.kv_heads;
  for (uint8_t mode = 1; mode <= 4; ++mode) {
    SCOPED_TRACE("debug mode " + std::to_string(mode));
    webgpu::KernelTuning t;
    t.attention.prefill_sg_debug = mode;
    webgpu::set_kernel_tuning_override(t);
    if (!tc) {
      EXPECT_EQ(expect_close(c, 1200), kScalar);
      continue;
    }
    use_gpu();
    Tensor out = attention(in.q.to(kGpu), in.k.to(kGpu), in.v.to(kGpu), AttnConfig{0.0, false, {}});
    ASSERT_EQ(webgpu::attention_last_shader(), kSg);
    use_cpu_reference();
    const std::vector<double> got = values(out), q = values(in.q), k = values(in.k);
    // Columns written: the first tile's 32 keys (every adapter here), or SK.
    const int64_t cols = mode == 1 ? 32 : sk;
    int bad = 0;
    for (int64_t r = 0; r < c.lq; ++r)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t g = h / group;
          if (mode == 3 && r % sm >= mnk[1]) continue;  // a K^T fragment has SN keys
          double want = 0, mag = 0;
          if (mode == 2) {
            want = q[(r * c.heads + h) * c.d + j];
          } else if (mode == 3) {
            want = k[((r % sm) * c.kv_heads + g) * c.d + j];
          } else {
            for (int64_t i = 0; i < (mode == 4 ? sk : c.d); ++i) {
              const double x = q[(r * c.heads + h) * c.d + i] * k[(j * c.kv_heads + g) * c.d + i];
              want += x;
              mag += std::fabs(x);
            }
          }
          const double v = got[(r * c.heads + h) * c.d + j];
          const double tol = std::ldexp(1.0, -11) * std::fabs(want) + c.d * std::ldexp(1.0, -23) * mag + 1e-7;
          if (!(std::fabs(v - want) <= tol) && bad++ < 6)
            ADD_FAILURE() << "row " << r << " head " << h << " column " << j << ": " << v << " vs " << want;
        }
    EXPECT_EQ(bad, 0);
  }
}

}  // namespace
}  // namespace wgt
