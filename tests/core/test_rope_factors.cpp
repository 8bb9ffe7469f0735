// RoPE per-frequency factors (RopeConfig::freq_factors, llama3 rope scaling) on the CPU:
// llama3_rope_factors against HF transformers' formula written out here, the reference
// kernel against a scalar formula, factors of 1 equal to no factors in bits, every path that
// takes a RopeConfig (rope, rope_, KVCache::append_rope, rms_norm_qkv_append_rope, the block)
// honouring them, and the typed errors of bad factors.
#include <cmath>
#include <numbers>

#include "core/ref_test_util.hpp"
#include "wgt/nn.hpp"

namespace wgt::test {
namespace {

class RopeFactorsTest : public RefTest {};

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

// max |a - b| over all elements; infinite when either has a NaN (so a NaN never passes).
double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  auto x = vals(a), y = vals(b);
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) return INFINITY;
    m = std::max(m, std::fabs(x[i] - y[i]));
  }
  return m;
}

Tensor factors_tensor(const std::vector<float>& f) { return Tensor::from_vector(f, {static_cast<int64_t>(f.size())}); }

// HF transformers' _compute_llama3_parameters, spelled as it is there: the scaled inverse
// frequencies (inv_freq / factor for long wavelengths, the smoothed mix in the band between),
// from which the factor is inv_freq / inv_freq_llama.
std::vector<double> hf_llama3_factors(double factor, double low, double high, double old_ctx, double base, int64_t dim) {
  std::vector<double> out;
  const double low_freq_wavelen = old_ctx / low, high_freq_wavelen = old_ctx / high;
  for (int64_t j = 0; j < dim; j += 2) {
    const double inv_freq = 1.0 / std::pow(base, static_cast<double>(j) / static_cast<double>(dim));
    const double wavelen = 2 * std::numbers::pi / inv_freq;
    double llama = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
    const double smooth = (old_ctx / wavelen - low) / (high - low);
    const double smoothed = (1 - smooth) * llama / factor + smooth * llama;
    const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
    if (medium) llama = smoothed;
    out.push_back(inv_freq / llama);
  }
  return out;
}

TEST_F(RopeFactorsTest, Llama3FactorsFollowTheHfFormula) {
  struct Case {
    double scale, low, high;
    int64_t ctx;
    double base;
    int64_t n_rot;
  };
  for (const Case& c : {Case{8, 1, 4, 8192, 500000, 64}, Case{32, 1, 4, 8192, 500000, 64},
                        Case{8, 1, 4, 8192, 500000, 128}, Case{4, 2, 8, 2048, 10000, 18}}) {
    SCOPED_TRACE("scale " + std::to_string(c.scale) + " n_rot " + std::to_string(c.n_rot));
    const std::vector<float> f = llama3_rope_factors(c.scale, c.low, c.high, c.ctx, c.base, c.n_rot);
    const std::vector<double> want = hf_llama3_factors(c.scale, c.low, c.high, static_cast<double>(c.ctx), c.base, c.n_rot);
    ASSERT_EQ(f.size(), want.size());
    int n_one = 0, n_scale = 0, n_mid = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      EXPECT_NEAR(f[i], want[i], 1e-6 * want[i]) << i;
      if (i > 0) {
        EXPECT_GE(f[i], f[i - 1]) << "factors grow with the wavelength";
      }
      n_one += f[i] == 1.0f;
      n_scale += f[i] == static_cast<float>(c.scale);
      n_mid += f[i] > 1.0f && f[i] < static_cast<float>(c.scale);
    }
    // All three regimes occur for these settings (high frequencies kept, low ones scaled, a
    // smooth band between), so the test exercises each branch.
    EXPECT_GT(n_one, 0);
    EXPECT_GT(n_scale, 0);
    EXPECT_GT(n_mid, 0);
  }
}

TEST_F(RopeFactorsTest, Llama3FactorsRejectBadArguments) {
  EXPECT_WGT_ERROR(llama3_rope_factors(8, 4, 1, 8192, 500000, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(8, 2, 2, 8192, 500000, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(0, 1, 4, 8192, 500000, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(NAN, 1, 4, 8192, 500000, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(8, 1, 4, 0, 500000, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(8, 1, 4, 8192, -1, 64), InvalidArgument, "llama3_rope_factors");
  EXPECT_WGT_ERROR(llama3_rope_factors(8, 1, 4, 8192, 500000, 63), InvalidArgument, "llama3_rope_factors");
}

// theta_i = p * freq_scale * base^(-2i / n_rot) / f_i, pairs (2i, 2i+1) or (i, i + n_rot/2).
std::vector<double> scalar_rope(const std::vector<double>& x, int64_t rows, int64_t H, int64_t D,
                                const std::vector<double>& pos, const RopeConfig& c, const std::vector<float>& f) {
  std::vector<double> y = x;
  const int64_t n_rot = c.n_rot == 0 ? D : c.n_rot, half = n_rot / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const double p = pos[static_cast<size_t>(r / H)];
    for (int64_t i = 0; i < half; ++i) {
      const double theta = p * c.freq_scale * std::pow(c.base, -2.0 * i / n_rot) / f[static_cast<size_t>(i)];
      const int64_t a = r * D + (c.style == RopeStyle::Neox ? i : 2 * i);
      const int64_t b = r * D + (c.style == RopeStyle::Neox ? i + half : 2 * i + 1);
      y[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
      y[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
    }
  }
  return y;
}

TEST_F(RopeFactorsTest, ReferenceMatchesTheScalarFormula) {
  const int64_t seq = 5, H = 3, D = 20;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    for (int64_t n_rot : {int64_t{20}, int64_t{12}}) {
      RopeConfig cfg;
      cfg.style = style;
      cfg.n_rot = n_rot;
      cfg.base = 500000;
      cfg.freq_scale = 0.75;
      const std::vector<float> f = llama3_rope_factors(8, 1, 4, 64, cfg.base, n_rot);
      cfg.freq_factors = factors_tensor(f);
      const Tensor x = randn({seq, H, D}, 31);
      const std::vector<int32_t> p{2999, 0, 17, 1234, 2048};
      const Tensor pos = Tensor::from_vector(p, {seq});
      const std::vector<double> want = scalar_rope(vals(x), seq * H, H, D, {2999, 0, 17, 1234, 2048}, cfg, f);
      expect_near_vec(vals(rope(x, pos, cfg)), want, 2e-6, "positions");
      const std::vector<double> want_off = scalar_rope(vals(x), seq * H, H, D, {700, 701, 702, 703, 704}, cfg, f);
      expect_near_vec(vals(rope(x, 700, cfg)), want_off, 2e-6, "offset");
      // The factors change the result (they are not all 1 here).
      RopeConfig plain = cfg;
      plain.freq_factors = Tensor();
      EXPECT_GT(max_abs_diff(rope(x, 700, plain), rope(x, 700, cfg)), 1e-2);
    }
  }
}

TEST_F(RopeFactorsTest, FactorsOfOneEqualNoFactorsInBits) {
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    for (DType dt : {DType::F32, DType::F16}) {
      RopeConfig plain;
      plain.style = style;
      plain.n_rot = 6;
      RopeConfig ones = plain;
      ones.freq_factors = factors_tensor({1, 1, 1});
      const Tensor x = randn({2, 4, 3, 8}, 41, dt);
      EXPECT_EQ(max_abs_diff(rope(x, 321, ones), rope(x, 321, plain)), 0.0);
      Tensor a = x.clone(), b = x.clone();
      rope_(a, 321, ones);
      rope_(b, 321, plain);
      EXPECT_EQ(max_abs_diff(a, b), 0.0);
    }
  }
}

// Strided factors (a view of every other element) read element for element.
TEST_F(RopeFactorsTest, StridedFactorsAndInPlace) {
  RopeConfig cfg;
  cfg.n_rot = 8;
  const std::vector<float> f{1, 9, 2, 9, 4, 9, 8, 9};
  cfg.freq_factors = factors_tensor(f).slice(0, 0, 8, 2);
  RopeConfig dense = cfg;
  dense.freq_factors = factors_tensor({1, 2, 4, 8});
  const Tensor x = randn({3, 2, 10}, 43);
  EXPECT_EQ(max_abs_diff(rope(x, 100, cfg), rope(x, 100, dense)), 0.0);
  Tensor y = x.clone();
  rope_(y, 100, cfg);
  EXPECT_EQ(max_abs_diff(y, rope(x, 100, dense)), 0.0);
}

TEST_F(RopeFactorsTest, KvCachePathsHonourFactors) {
  const int64_t H = 4, Hkv = 2, D = 8, dim = 24;
  RopeConfig cfg;
  cfg.base = 500000;
  cfg.freq_factors = factors_tensor(llama3_rope_factors(8, 1, 4, 64, cfg.base, D));
  // append_rope == rope_(q) then append(rope(k), v).
  const Tensor q0 = randn({2, H, D}, 51), k = randn({2, Hkv, D}, 52), v = randn({2, Hkv, D}, 53);
  KVCache a(8, Hkv, D, DType::F32), b(8, Hkv, D, DType::F32);
  a.append(randn({3, Hkv, D}, 54), randn({3, Hkv, D}, 55));
  b.append(a.view_k().clone(), a.view_v().clone());
  Tensor qa = q0.clone(), qb = q0.clone();
  a.append_rope(qa, k, v, cfg);
  rope_(qb, 3, cfg);
  b.append(rope(k, 3, cfg), v);
  EXPECT_EQ(max_abs_diff(qa, qb), 0.0);
  EXPECT_EQ(max_abs_diff(a.view_k(), b.view_k()), 0.0);
  // rms_norm_qkv_append_rope == rms_norm_matmul_t then append_rope.
  const Tensor x = randn({1, dim}, 56), g = randn({dim}, 57), w = randn({(H + 2 * Hkv) * D, dim}, 58);
  const Tensor q = a.rms_norm_qkv_append_rope(x, g, w, 1e-5, H, cfg);
  const Tensor qkv = rms_norm_matmul_t(x, g, w, 1e-5);
  Tensor uq = qkv.slice(1, 0, H * D).contiguous().view({1, H, D});
  b.append_rope(uq, qkv.slice(1, H * D, (H + Hkv) * D).view({1, Hkv, D}),
                qkv.slice(1, (H + Hkv) * D, (H + 2 * Hkv) * D).view({1, Hkv, D}), cfg);
  EXPECT_EQ(max_abs_diff(q, uq), 0.0);
  EXPECT_EQ(max_abs_diff(a.view_k(), b.view_k()), 0.0);
  EXPECT_EQ(max_abs_diff(a.view_v(), b.view_v()), 0.0);
}

BlockConfig block_cfg() {
  BlockConfig c;
  c.dim = 32;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = 16;
  c.ffn_dim = 40;
  c.rope.base = 500000;
  c.rope.freq_factors = factors_tensor(llama3_rope_factors(8, 1, 4, 64, c.rope.base, 16));
  return c;
}

// A block with factors: prefill equals its decode steps, from a cache that already holds many
// rows (positions where the factors matter), and differs from the block without factors.
TEST_F(RopeFactorsTest, BlockPrefillEqualsDecodeWithFactors) {
  const BlockConfig cfg = block_cfg();
  const BlockWeights w = BlockWeights::random(cfg, 61);
  TransformerBlock blk(cfg, w);
  BlockConfig plain_cfg = cfg;
  plain_cfg.rope.freq_factors = Tensor();
  TransformerBlock plain(plain_cfg, w);
  const int64_t pre = 300, seq = 4;
  const Tensor kp = randn({pre, 1, 16}, 62), vp = randn({pre, 1, 16}, 63), x = randn({seq, 32}, 64);
  KVCache c1 = blk.make_cache(pre + seq), c2 = blk.make_cache(pre + seq), c3 = blk.make_cache(pre + seq);
  for (KVCache* c : {&c1, &c2, &c3}) c->append(kp, vp);
  const Tensor y = blk.forward(x, c1, pre);
  for (int64_t t = 0; t < seq; ++t)
    EXPECT_LT(max_abs_diff(blk.forward(x.slice(0, t, t + 1), c2, pre + t), y.slice(0, t, t + 1)), 2e-5) << t;
  EXPECT_GT(max_abs_diff(plain.forward(x, c3, pre), y), 1e-3);
}

// The fast CPU backend (its matmuls; RoPE and the cache ops run the reference kernels there)
// gives the reference's block output with factors, prefill and decode.
TEST_F(RopeFactorsTest, FastCpuMatchesReference) {
  const BlockConfig cfg = block_cfg();
  const BlockWeights w = BlockWeights::random(cfg, 65);
  const Tensor x = randn({3, 32}, 66), kp = randn({200, 1, 16}, 67), vp = randn({200, 1, 16}, 68);
  auto run = [&](CpuMode mode) {
    Policy p = Runtime::get().policy();
    const Policy keep = p;
    p.cpu_mode = mode;
    Runtime::get().set_policy(p);
    TransformerBlock blk(cfg, w);
    KVCache c1 = blk.make_cache(210), c2 = blk.make_cache(210);
    c1.append(kp, vp);
    c2.append(kp, vp);
    Tensor pre = blk.forward(x, c1, 200);
    Tensor dec = blk.forward(x.slice(0, 0, 1), c2, 200);
    Runtime::get().set_policy(keep);
    return std::pair{pre, dec};
  };
  const auto [pre_ref, dec_ref] = run(CpuMode::Reference);
  const auto [pre_fast, dec_fast] = run(CpuMode::Fast);
  EXPECT_LT(max_abs_diff(pre_fast, pre_ref), 1e-4);
  EXPECT_LT(max_abs_diff(dec_fast, dec_ref), 1e-4);
  EXPECT_LT(max_abs_diff(dec_ref, pre_ref.slice(0, 0, 1)), 2e-5);
}

TEST_F(RopeFactorsTest, BadFactorsAreTypedErrors) {
  const Tensor x = randn({2, 2, 8}, 71);
  auto with = [](const Tensor& f) {
    RopeConfig c;
    c.n_rot = 6;
    c.freq_factors = f;
    return c;
  };
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, 2}))), ShapeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, 2, 3, 4}))), ShapeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, 2, 3}).view({1, 3}))), ShapeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(D({1, 2, 3}, {3}))), DTypeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(cast(factors_tensor({1, 2, 3}), DType::F16))), DTypeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, 0, 3}))), InvalidArgument, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, -2, 3}))), InvalidArgument, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, NAN, 3}))), InvalidArgument, "rope");
  EXPECT_WGT_ERROR(rope(x, 0, with(factors_tensor({1, 2, INFINITY}))), InvalidArgument, "rope");
  // rope_ validates before writing: x is unchanged.
  Tensor y = x.clone();
  EXPECT_WGT_ERROR(rope_(y, 5, with(factors_tensor({1, 2}))), ShapeMismatch, "rope_");
  EXPECT_EQ(max_abs_diff(y, x), 0.0);
  // The cache ops check them before anything is written or counted.
  KVCache cache(4, 2, 8, DType::F32);
  Tensor q = randn({1, 2, 8}, 72);
  EXPECT_WGT_ERROR(cache.append_rope(q, randn({1, 2, 8}, 73), randn({1, 2, 8}, 74), with(factors_tensor({1, 0, 1}))),
                   InvalidArgument, "KVCache::append_rope");
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(randn({1, 8}, 75), randn({8}, 76), randn({48, 8}, 77), 1e-5, 2,
                                                  with(factors_tensor({1, 1}))),
                   ShapeMismatch, "KVCache::rms_norm_qkv_append_rope");
  EXPECT_EQ(cache.size(), 0);
  // Factors inside the storage an op writes (valid values: only the sharing is wrong).
  Tensor buf = full({3 * 16 + 3}, 1.5);
  Tensor xs = buf.slice(0, 0, 48).view({3, 2, 8});
  EXPECT_WGT_ERROR(rope_(xs, 0, with(buf.slice(0, 48, 51))), InvalidArgument, "rope_");
  EXPECT_EQ(max_abs_diff(xs, full({3, 2, 8}, 1.5)), 0.0);
  Tensor qs = buf.slice(0, 0, 16).view({1, 2, 8});
  EXPECT_WGT_ERROR(cache.append_rope(qs, randn({1, 2, 8}, 73), randn({1, 2, 8}, 74), with(buf.slice(0, 48, 51))),
                   InvalidArgument, "KVCache::append_rope");
  EXPECT_EQ(cache.size(), 0);
  KVCache filled(4, 2, 8, DType::F32);
  filled.append(full({1, 2, 8}, 1.5), full({1, 2, 8}, 1.5));
  const Tensor in_cache = filled.view_k().flatten().slice(0, 0, 3);
  EXPECT_WGT_ERROR(filled.append_rope(q, randn({1, 2, 8}, 73), randn({1, 2, 8}, 74), with(in_cache)), InvalidArgument,
                   "KVCache::append_rope");
  EXPECT_WGT_ERROR(filled.rms_norm_qkv_append_rope(randn({1, 8}, 75), randn({8}, 76), randn({48, 8}, 77), 1e-5, 2,
                                                   with(in_cache)),
                   InvalidArgument, "KVCache::rms_norm_qkv_append_rope");
  EXPECT_EQ(filled.size(), 1);
  // The block checks them at construction.
  BlockConfig bc = block_cfg();
  bc.rope.freq_factors = factors_tensor({1, 2, 3});
  EXPECT_WGT_ERROR(TransformerBlock(bc, BlockWeights::random(block_cfg(), 78)), ShapeMismatch, "TransformerBlock");
  bc.rope.freq_factors = factors_tensor({1, 1, 1, 1, 1, 1, 1, -1});
  EXPECT_WGT_ERROR(TransformerBlock(bc, BlockWeights::random(block_cfg(), 78)), InvalidArgument, "TransformerBlock");
}

}  // namespace
}  // namespace wgt::test
