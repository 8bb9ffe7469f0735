// Tests of the transformer ops on the CPU reference: RoPE, attention (GQA, causal, masks),
// silu_mul / FFNs, the KV cache and the llama block (decode step by step == prefill).
#include <cmath>

#include "core/ref_test_util.hpp"
#include "wgt/nn.hpp"
#include "wgt/quant.hpp"

namespace wgt::test {
namespace {

class NnTest : public RefTest {};

Tensor randn(const Shape& s, uint64_t seed, DType dt = DType::F32) { return rand_normal(s, seed, 0.0, 1.0, dt); }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  auto x = vals(a), y = vals(b);
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

// ------------------------------------------------------------------ RoPE

TEST_F(NnTest, RopeHandComputedNormalAndNeox) {
  Tensor x = F({1, 2, 3, 4}, {1, 1, 4});
  // position 1: theta_0 = 1, theta_1 = 10000^(-2/4) = 0.01 (values computed by hand).
  expect_near_vec(vals(rope(x, 1)), {-1.1426396637, 1.9220755965, 2.9598506679, 4.0297995017}, 1e-6, "normal");
  RopeConfig neox;
  neox.style = RopeStyle::Neox;  // pairs (x0, x2) and (x1, x3)
  expect_near_vec(vals(rope(x, 1, neox)), {-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683}, 1e-6, "neox");
  // Position 0 is the identity.
  expect_near_vec(vals(rope(x, 0)), {1, 2, 3, 4}, 0, "pos 0");
}

TEST_F(NnTest, RopePreservesNormsAndPassesUnrotatedDims) {
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
    RopeConfig cfg;
    cfg.style = style;
    cfg.n_rot = 6;  // of head_dim 9: dims 6..8 pass through
    Tensor x = randn({5, 3, 9}, 11, DType::F64);
    auto in = vals(x), out = vals(rope(x, 123, cfg));
    for (int64_t r = 0; r < 15; ++r) {
      double n_in = 0, n_out = 0;
      for (int d = 0; d < 9; ++d) {
        n_in += in[r * 9 + d] * in[r * 9 + d];
        n_out += out[r * 9 + d] * out[r * 9 + d];
        if (d >= 6) {
          EXPECT_EQ(in[r * 9 + d], out[r * 9 + d]) << "dim " << d;
        }
      }
      EXPECT_NEAR(n_in, n_out, 1e-12 * n_in) << "row " << r;
    }
    EXPECT_GT(max_abs_diff(x, rope(x, 123, cfg)), 1e-3);  // it did rotate something
  }
}

TEST_F(NnTest, RopePositionsFreqScaleAndBatch) {
  Tensor x = randn({4, 2, 8}, 3);
  // Explicit positions equal the offset form.
  EXPECT_EQ(max_abs_diff(rope(x, 5), rope(x, I64({5, 6, 7, 8}, {4}))), 0.0);
  EXPECT_EQ(max_abs_diff(rope(x, 5), rope(x, I32({5, 6, 7, 8}, {4}))), 0.0);
  // freq_scale multiplies positions: scale 0.5 at 2p == scale 1 at p.
  RopeConfig half;
  half.freq_scale = 0.5;
  EXPECT_LT(max_abs_diff(rope(x, I64({2, 4, 6, 8}, {4}), half), rope(x, I64({1, 2, 3, 4}, {4}))), 1e-6);
  // [batch, seq, H, D]: every batch entry gets the same positions.
  Tensor xb = randn({3, 4, 2, 8}, 4);
  Tensor yb = rope(xb, 2);
  for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(max_abs_diff(yb.select(0, b), rope(xb.select(0, b), 2)), 0.0);
  // Non-contiguous input (a transposed view) gives the same values as its compacted copy.
  Tensor xt = randn({2, 4, 8}, 5).transpose(0, 1);
  EXPECT_EQ(max_abs_diff(rope(xt, 3), rope(xt.contiguous(), 3)), 0.0);
}

TEST_F(NnTest, RopeErrors) {
  EXPECT_WGT_ERROR(rope(randn({4, 2, 33}, 1), 0), InvalidArgument, "rope");  // odd head_dim, no n_rot
  RopeConfig bad;
  bad.n_rot = 5;
  EXPECT_WGT_ERROR(rope(randn({4, 2, 8}, 1), 0, bad), InvalidArgument, "rope");
  EXPECT_WGT_ERROR(rope(randn({4, 8}, 1), 0), RankMismatch, "rope");
  EXPECT_WGT_ERROR(rope(randn({4, 2, 8}, 1), I64({0, 1, 2}, {3})), ShapeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(randn({4, 2, 8}, 1), F({0, 1, 2, 3}, {4})), DTypeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(I32({1, 2}, {1, 1, 2}), 0), DTypeMismatch, "rope");
  EXPECT_WGT_ERROR(rope(randn({4, 2, 8}, 1), -1), InvalidArgument, "rope");
  RopeConfig odd;
  odd.n_rot = 32;
  EXPECT_EQ(rope(randn({2, 1, 33}, 1), 0, odd).shape(), (Shape{2, 1, 33}));
}

// ------------------------------------------------------------------ attention

// Oracle built from other ops, one head at a time: softmax(scale q k^T + mask) v.
Tensor naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal) {
  const int64_t Lq = q.shape()[0], H = q.shape()[1], Lk = k.shape()[0], Hkv = k.shape()[1];
  std::vector<double> m(static_cast<size_t>(Lq * Lk), 0.0);
  for (int64_t i = 0; i < Lq; ++i)
    for (int64_t j = 0; j < Lk; ++j)
      if (causal && j > Lk - Lq + i) m[i * Lk + j] = -INFINITY;
  Tensor mask = D(m, {Lq, Lk});
  std::vector<Tensor> heads;
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / Hkv);
    Tensor s = mul(matmul_t(q.select(1, h), k.select(1, g)), scale) + mask;
    heads.push_back(matmul(softmax(s, -1), v.select(1, g)).unsqueeze(1));
  }
  return concat(heads, 1);
}

TEST_F(NnTest, AttentionHandCheckedSoftmax) {
  Tensor q = F({1, 0}, {1, 1, 2});
  Tensor k = F({1, 0, 0, 1}, {2, 1, 2});
  Tensor v = F({1, 2, 3, 4}, {2, 1, 2});
  AttnConfig c;
  c.scale = 1.0;
  // scores (1, 0): p = (e/(e+1), 1/(e+1)) = (0.7310586, 0.2689414).
  expect_near_vec(vals(attention(q, k, v, c)), {1.5378828427, 2.5378828427}, 1e-6, "one query");
  // Two queries over two keys, causal: query 0 sees key 0 only -> exactly v[0].
  Tensor q2 = F({1, 0, 1, 0}, {2, 1, 2});
  expect_near_vec(vals(attention(q2, k, v, c)), {1, 2, 1.5378828427, 2.5378828427}, 1e-6, "causal");
}

TEST_F(NnTest, AttentionMatchesNaiveForGqaRatios) {
  for (int64_t Hkv : {8, 2, 1}) {  // ratios 1, 4, 8
    for (bool causal : {true, false}) {
      Tensor q = randn({5, 8, 16}, 21, DType::F64), k = randn({9, Hkv, 16}, 22, DType::F64),
             v = randn({9, Hkv, 16}, 23, DType::F64);
      AttnConfig c;
      c.causal = causal;
      EXPECT_LT(max_abs_diff(attention(q, k, v, c), naive_attention(q, k, v, 0.25, causal)), 1e-12)
          << "Hkv " << Hkv << " causal " << causal;
    }
  }
}

TEST_F(NnTest, AttentionGqaEqualsRepeatedKvHeads) {
  Tensor q = randn({3, 8, 8}, 31), k = randn({6, 2, 8}, 32), v = randn({6, 2, 8}, 33);
  Tensor idx = I64({0, 0, 0, 0, 1, 1, 1, 1}, {8});  // query head h uses kv head h / 4
  EXPECT_LT(max_abs_diff(attention(q, k, v), attention(q, index_select(k, 1, idx), index_select(v, 1, idx))), 1e-6);
}

TEST_F(NnTest, AttentionCausalIgnoresFutureKeys) {
  Tensor q = randn({6, 4, 8}, 41), k = randn({6, 2, 8}, 42), v = randn({6, 2, 8}, 43);
  Tensor k2 = k.clone(), v2 = v.clone();
  for (int64_t i = 0; i < 16; ++i) {  // change key/value row 4 of both kv heads
    k2.data<float>()[4 * 16 + i] += 3.0f;
    v2.data<float>()[4 * 16 + i] -= 2.0f;
  }
  Tensor a = attention(q, k, v), b = attention(q, k2, v2);
  EXPECT_EQ(max_abs_diff(a.slice(0, 0, 4), b.slice(0, 0, 4)), 0.0);  // rows before 4: bit-identical
  EXPECT_GT(max_abs_diff(a.slice(0, 4, 6), b.slice(0, 4, 6)), 1e-3);
  // With kv_len > q_len the queries are the last positions: q_len 2 over kv 6 sees up to 4, 5.
  Tensor a2 = attention(q.slice(0, 4, 6), k, v);
  EXPECT_LT(max_abs_diff(a2, a.slice(0, 4, 6)), 1e-6);
}

TEST_F(NnTest, AttentionMaskOddHeadDimAndSeqOne) {
  // A -inf mask entry drops that key: same as attending without it.
  Tensor q = randn({1, 2, 33}, 51), k = randn({4, 1, 33}, 52), v = randn({4, 1, 33}, 53);
  AttnConfig c;
  c.causal = false;
  c.mask = F({0, -INFINITY, 0, 0}, {1, 4});
  Tensor keep = I64({0, 2, 3}, {3});
  AttnConfig nc;
  nc.causal = false;
  EXPECT_LT(max_abs_diff(attention(q, k, v, c), attention(q, index_select(k, 0, keep), index_select(v, 0, keep), nc)), 1e-6);
  // Every key masked: a zero row, not NaN.
  c.mask = F({-INFINITY}, {1});
  for (double x : vals(attention(q, k, v, c))) EXPECT_EQ(x, 0.0);
  // One key: the output is that value row for every head.
  Tensor v1 = randn({1, 1, 33}, 54);
  Tensor o = attention(q.slice(1, 0, 1), k.slice(0, 0, 1), v1);
  EXPECT_LT(max_abs_diff(o, v1), 1e-6);
}

TEST_F(NnTest, AttentionF16CacheWithF32Queries) {
  Tensor q = randn({3, 4, 8}, 61), k = randn({5, 2, 8}, 62, DType::F16), v = randn({5, 2, 8}, 63, DType::F16);
  Tensor o = attention(q, k, v);
  EXPECT_EQ(o.dtype(), DType::F32);
  // The reference reads f16 exactly, so an f32 copy of the same values gives the same result.
  EXPECT_EQ(max_abs_diff(o, attention(q, cast(k, DType::F32), cast(v, DType::F32))), 0.0);
}

TEST_F(NnTest, AttentionErrors) {
  Tensor q = randn({2, 6, 8}, 1), k = randn({4, 4, 8}, 2), v = randn({4, 4, 8}, 3);
  EXPECT_WGT_ERROR(attention(q, k, v), ShapeMismatch, "attention");  // 4 does not divide 6
  EXPECT_WGT_ERROR(attention(randn({2, 4, 8}, 1), randn({4, 4, 7}, 2), randn({4, 4, 7}, 3)), ShapeMismatch, "attention");
  EXPECT_WGT_ERROR(attention(randn({5, 4, 8}, 1), k, v), ShapeMismatch, "attention");  // causal, kv < q
  EXPECT_WGT_ERROR(attention(randn({2, 32}, 1), k, v), RankMismatch, "attention");
  EXPECT_WGT_ERROR(attention(randn({2, 4, 8}, 1), k, randn({4, 4, 8}, 3, DType::F16)), DTypeMismatch, "attention");
  AttnConfig c;
  c.mask = F({0, 0, 0}, {1, 3});
  EXPECT_WGT_ERROR(attention(randn({2, 4, 8}, 1), k, v, c), ShapeMismatch, "attention");
  c.mask = B({1, 1, 1, 1}, {1, 4});
  EXPECT_WGT_ERROR(attention(randn({2, 4, 8}, 1), k, v, c), DTypeMismatch, "attention");
}

// ------------------------------------------------------------------ FFN

TEST_F(NnTest, SiluMulAndFfnsHandChecked) {
  Tensor a = randn({3, 7}, 71), b = randn({3, 7}, 72);
  EXPECT_LT(max_abs_diff(silu_mul(a, b), silu(a) * b), 1e-6);
  EXPECT_WGT_ERROR(silu_mul(a, randn({1, 7}, 1)), ShapeMismatch, "silu_mul");
  EXPECT_WGT_ERROR(silu_mul(a, cast(b, DType::F16)), DTypeMismatch, "silu_mul");
  // silu(2) * (3 * 2) * 0.5 = 5.2847824679.
  expect_near_vec(vals(swiglu_ffn(F({2}, {1, 1}), F({1}, {1, 1}), F({3}, {1, 1}), F({0.5}, {1, 1}))), {5.2847824679}, 1e-6);
  // gelu(1) + gelu(-1) + gelu(0.5) + 0.1 = 1.1284207228.
  Tensor y = gelu_mlp(F({1, -1}, {1, 2}), F({1, 0, 0, 1, 1, 1}, {3, 2}), F({0, 0, 0.5}, {3}), F({1, 1, 1}, {1, 3}),
                      F({0.1f}, {1}));
  expect_near_vec(vals(y), {1.1284207228}, 1e-6, "gelu_mlp");
  EXPECT_WGT_ERROR(swiglu_ffn(randn({2, 4}, 1), randn({6, 4}, 2), randn({6, 4}, 3), randn({4, 5}, 4)), ShapeMismatch,
                   "swiglu_ffn");
  EXPECT_WGT_ERROR(gelu_mlp(randn({2, 4}, 1), randn({6, 4}, 2), randn({5}, 3), randn({3, 6}, 4), std::nullopt),
                   ShapeMismatch, "gelu_mlp");
  // f16 weights with f32 activations: the matmul runs in f16, the result comes back as f32.
  Tensor wg = randn({6, 4}, 81), wu = randn({6, 4}, 82), wd = randn({4, 6}, 83), x = randn({2, 4}, 84);
  Tensor y16 = swiglu_ffn(x, cast(wg, DType::F16), cast(wu, DType::F16), cast(wd, DType::F16));
  EXPECT_EQ(y16.dtype(), DType::F32);
  EXPECT_LT(max_abs_diff(y16, swiglu_ffn(x, wg, wu, wd)), 0.05);
}

// ------------------------------------------------------------------ KV cache

TEST_F(NnTest, KvCacheAppendViewClearAndOverflow) {
  for (DType dt : {DType::F32, DType::F16}) {
    KVCache cache(5, 2, 3, dt);
    Tensor k = randn({5, 2, 3}, 91), v = randn({5, 2, 3}, 92);
    cache.append(k.slice(0, 0, 2), v.slice(0, 0, 2));
    cache.append(k.slice(0, 2, 3), v.slice(0, 2, 3));
    EXPECT_EQ(cache.size(), 3);
    EXPECT_EQ(cache.view_k().shape(), (Shape{3, 2, 3}));
    EXPECT_EQ(cache.view_k().dtype(), dt);
    const double tol = dt == DType::F16 ? 2e-3 : 0.0;  // f16 rounding only
    EXPECT_LE(max_abs_diff(cast(cache.view_k(), DType::F32), k.slice(0, 0, 3)), tol * 4);
    EXPECT_LE(max_abs_diff(cast(cache.view_v(), DType::F32), v.slice(0, 0, 3)), tol * 4);
    EXPECT_WGT_ERROR(cache.append(k.slice(0, 0, 3), v.slice(0, 0, 3)), OutOfRange, "KVCache::append");
    EXPECT_EQ(cache.size(), 3);  // the failed append wrote nothing
    EXPECT_WGT_ERROR(cache.append(randn({1, 3, 3}, 1), randn({1, 3, 3}, 2)), ShapeMismatch, "KVCache::append");
    EXPECT_WGT_ERROR(cache.append(k.slice(0, 0, 1), v.slice(0, 0, 2)), ShapeMismatch, "KVCache::append");
    cache.clear();
    EXPECT_EQ(cache.size(), 0);
    cache.append(k.slice(0, 4, 5), v.slice(0, 4, 5));  // overwrites row 0
    EXPECT_LE(max_abs_diff(cast(cache.view_k(), DType::F32), k.slice(0, 4, 5)), tol * 4);
  }
  EXPECT_WGT_ERROR(KVCache(0, 2, 3), InvalidArgument, "KVCache");
  EXPECT_WGT_ERROR(KVCache(4, 2, 3, DType::I32), DTypeMismatch, "KVCache");
}

TEST_F(NnTest, DecodeStepByStepEqualsPrefillAttention) {
  const int64_t L = 7;
  Tensor q = randn({L, 4, 6}, 101), k = randn({L, 2, 6}, 102), v = randn({L, 2, 6}, 103);
  Tensor full = attention(q, k, v);
  KVCache cache(L, 2, 6);
  cache.append(k.slice(0, 0, 3), v.slice(0, 0, 3));  // prefill of 3, then 4 decode steps
  EXPECT_LT(max_abs_diff(attention(q.slice(0, 0, 3), cache.view_k(), cache.view_v()), full.slice(0, 0, 3)), 1e-6);
  for (int64_t t = 3; t < L; ++t) {
    cache.append(k.slice(0, t, t + 1), v.slice(0, t, t + 1));
    EXPECT_LT(max_abs_diff(attention(q.slice(0, t, t + 1), cache.view_k(), cache.view_v()), full.slice(0, t, t + 1)), 1e-6)
        << "step " << t;
  }
}

// Raw bytes of t (any dtype): bitwise comparisons.
std::vector<uint8_t> raw(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<uint8_t> b(c.nbytes());
  c.copy_to_host(b.data(), b.size());
  return b;
}

// append_rope == rope_ of q, then the append of rope_'d k and of v, bit for bit: f32 and f16
// caches and sources, normal and neox, n_rot < head_dim, appends at several positions; q, k
// and v as slices of one fused projection row (as the block passes them); k is not written.
TEST_F(NnTest, KvCacheAppendRopeEqualsRopeThenAppend) {
  const int64_t H = 3, Hkv = 1, D = 6, W = (H + 2 * Hkv) * D;
  for (DType cache_dt : {DType::F32, DType::F16})
    for (DType src_dt : {DType::F32, DType::F16})
      for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox})
        for (int64_t n_rot : {0, 4}) {
          SCOPED_TRACE(std::string("cache ") + dtype_name(cache_dt) + " src " + dtype_name(src_dt) +
                       (style == RopeStyle::Neox ? " neox" : " normal") + " n_rot " + std::to_string(n_rot));
          RopeConfig cfg;
          cfg.style = style;
          cfg.n_rot = n_rot;
          cfg.base = 500.0;
          cfg.freq_scale = 0.75;
          KVCache fused(8, Hkv, D, cache_dt), unfused(8, Hkv, D, cache_dt);
          int64_t pos = 0;
          for (int64_t n : {2, 1, 3, 1}) {
            const Tensor qkv = randn({n, W}, 500 + static_cast<uint64_t>(pos), src_dt);
            Tensor a = qkv.clone(), b = qkv.clone();
            Tensor q = a.slice(1, 0, H * D);
            if (n > 1) q = q.contiguous();  // rows of q, k and v interleave: q must be disjoint
            q = q.view({n, H, D});
            fused.append_rope(q, a.slice(1, H * D, (H + Hkv) * D).view({n, Hkv, D}),
                              a.slice(1, (H + Hkv) * D, W).view({n, Hkv, D}), cfg);
            Tensor qk = b.slice(1, 0, (H + Hkv) * D).view({n, H + Hkv, D});
            rope_(qk, pos, cfg);
            unfused.append(b.slice(1, H * D, (H + Hkv) * D).view({n, Hkv, D}), b.slice(1, (H + Hkv) * D, W).view({n, Hkv, D}));
            pos += n;
            ASSERT_EQ(fused.size(), pos);
            EXPECT_EQ(raw(q), raw(b.slice(1, 0, H * D))) << "q at " << pos - n;
            EXPECT_EQ(raw(a.slice(1, H * D, W)), raw(qkv.slice(1, H * D, W))) << "k and v must not be written";
            // Rows at positions > 0 are rotated: the cached k differs from the source k.
            EXPECT_NE(raw(fused.view_k().slice(0, pos - n, pos)),
                      raw(cast(qkv.slice(1, H * D, (H + Hkv) * D), cache_dt).view({n, Hkv, D})));
          }
          EXPECT_EQ(raw(fused.view_k()), raw(unfused.view_k()));
          EXPECT_EQ(raw(fused.view_v()), raw(unfused.view_v()));
        }
}

TEST_F(NnTest, KvCacheAppendRopeErrors) {
  KVCache cache(2, 2, 4);
  RopeConfig cfg;
  Tensor qkv = randn({2, 16 + 8 + 8}, 301);
  Tensor q = qkv.slice(1, 0, 16).view({2, 4, 4});
  const Tensor k = qkv.slice(1, 16, 24).view({2, 2, 4}), v = qkv.slice(1, 24, 32).view({2, 2, 4});
  const std::vector<uint8_t> before = raw(qkv);
  // At seq > 1 the q rows interleave with k's and v's in the fused row.
  EXPECT_WGT_ERROR(cache.append_rope(q, k, v, cfg), InvalidArgument, "KVCache::append_rope");
  Tensor q1 = randn({1, 4, 4}, 302);
  EXPECT_WGT_ERROR(cache.append_rope(q1, k, v, cfg), ShapeMismatch, "KVCache::append_rope");
  Tensor qc = q.contiguous();
  RopeConfig odd;
  odd.n_rot = 3;
  EXPECT_WGT_ERROR(cache.append_rope(qc, k, v, odd), InvalidArgument, "KVCache::append_rope");
  Tensor qe = randn({2, 1, 4}, 303).expand({2, 4, 4});
  EXPECT_WGT_ERROR(cache.append_rope(qe, k, v, cfg), InvalidArgument, "KVCache::append_rope");
  cache.append(k.slice(0, 0, 1), v.slice(0, 0, 1));
  Tensor qv = cache.view_k();  // [1, 2, 4]: a q of a valid shape inside the cache
  EXPECT_WGT_ERROR(cache.append_rope(qv, k.slice(0, 0, 1), v.slice(0, 0, 1), cfg), InvalidArgument, "KVCache::append_rope");
  EXPECT_WGT_ERROR(cache.append_rope(qc, k, v, cfg), OutOfRange, "KVCache::append_rope");  // 1 + 2 > 2
  EXPECT_EQ(cache.size(), 1);
  EXPECT_EQ(raw(qkv), before) << "a failed append_rope wrote";
  EXPECT_EQ(raw(qc), raw(q)) << "a failed append_rope rotated q";
}

// rms_norm_qkv_append_rope == rms_norm_matmul_t then append_rope on the output's q, k and v
// columns, bit for bit (the CPU runs exactly those ops): f32 and f16 weights and caches, GQA,
// n_rot < head_dim, one row per step and a step of two rows (q compacted).
TEST_F(NnTest, NormQkvRopeAppendEqualsNormMatmulThenAppendRope) {
  const int64_t H = 4, Hkv = 2, D = 6, dim = 12, qd = H * D, kvd = Hkv * D;
  for (DType w_dt : {DType::F32, DType::F16})
    for (DType cache_dt : {DType::F32, DType::F16}) {
      SCOPED_TRACE(std::string("w ") + dtype_name(w_dt) + " cache " + dtype_name(cache_dt));
      RopeConfig cfg;
      cfg.n_rot = 4;
      cfg.base = 500.0;
      const Tensor w = randn({qd + 2 * kvd, dim}, 610, w_dt), g = randn({dim}, 611);
      KVCache fused(6, Hkv, D, cache_dt), unfused(6, Hkv, D, cache_dt);
      int64_t pos = 0;
      for (int64_t n : {1, 2, 1}) {
        const Tensor x = randn({n, dim}, 620 + static_cast<uint64_t>(pos));
        const Tensor q = fused.rms_norm_qkv_append_rope(x, g, w, 1e-5, H, cfg);
        const Tensor qkv = rms_norm_matmul_t(x, g, w, 1e-5);
        Tensor uq = qkv.slice(1, 0, qd).contiguous().view({n, H, D});
        unfused.append_rope(uq, qkv.slice(1, qd, qd + kvd).view({n, Hkv, D}),
                            qkv.slice(1, qd + kvd, qd + 2 * kvd).view({n, Hkv, D}), cfg);
        pos += n;
        ASSERT_EQ(fused.size(), pos);
        EXPECT_EQ(shape_str(q.shape()), shape_str(Shape{n, H, D}));
        EXPECT_EQ(raw(q), raw(uq)) << "q at " << pos - n;
      }
      EXPECT_EQ(raw(fused.view_k()), raw(unfused.view_k()));
      EXPECT_EQ(raw(fused.view_v()), raw(unfused.view_v()));
    }
}

TEST_F(NnTest, NormQkvRopeAppendErrors) {
  const char* name = "KVCache::rms_norm_qkv_append_rope";
  KVCache cache(1, 2, 4);
  RopeConfig cfg;
  const Tensor x = randn({1, 8}, 630), g = randn({8}, 631), w = randn({(4 + 2 * 2) * 4, 8}, 632);
  EXPECT_WGT_ERROR(KVCache().rms_norm_qkv_append_rope(x, g, w, 1e-5, 4, cfg), RuntimeState, name);
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x, g, w, 1e-5, 3, cfg), ShapeMismatch, name);  // 3 + 2 * 2 heads
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x, g, w, 1e-5, 0, cfg), InvalidArgument, name);
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x.view({8}), g, w, 1e-5, 4, cfg), ShapeMismatch, name);
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x, randn({7}, 633), w, 1e-5, 4, cfg), ShapeMismatch,
                   "rms_norm_matmul_t");
  RopeConfig odd;
  odd.n_rot = 3;
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x, g, w, 1e-5, 4, odd), InvalidArgument, name);
  EXPECT_EQ(cache.size(), 0);
  (void)cache.rms_norm_qkv_append_rope(x, g, w, 1e-5, 4, cfg);
  EXPECT_WGT_ERROR(cache.rms_norm_qkv_append_rope(x, g, w, 1e-5, 4, cfg), OutOfRange, name);  // full
  EXPECT_EQ(cache.size(), 1);
}

// ------------------------------------------------------------------ block

BlockConfig small_cfg(int64_t head_dim = 0) {
  BlockConfig c;
  c.dim = 32;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = head_dim;
  c.ffn_dim = 48;
  if (head_dim % 2) c.rope.n_rot = head_dim - 1;
  return c;
}

TEST_F(NnTest, BlockDecodeEqualsPrefill) {
  for (int64_t hd : {0, 33}) {  // head_dim 8 (= dim / n_heads) and an odd one
    TransformerBlock blk(small_cfg(hd), BlockWeights::random(small_cfg(hd), 7));
    Tensor x = randn({6, 32}, 111);
    KVCache c1 = blk.make_cache(8), c2 = blk.make_cache(8);
    Tensor pre = blk.forward(x, c1, 0);
    EXPECT_EQ(pre.shape(), (Shape{6, 32}));
    for (int64_t t = 0; t < 6; ++t) {
      Tensor y = blk.forward(x.slice(0, t, t + 1), c2, t);
      EXPECT_LT(max_abs_diff(y, pre.slice(0, t, t + 1)), 2e-5) << "head_dim " << hd << " step " << t;
    }
    EXPECT_EQ(c2.size(), 6);
    EXPECT_LT(max_abs_diff(c1.view_k(), c2.view_k()), 1e-6);
  }
}

TEST_F(NnTest, BlockFirstTokenMatchesSimplifiedFormula) {
  // At position 0 with one token, attention returns v exactly (and rope(., 0) is identity),
  // so the block is x + (rmsnorm(x) Wv^T, repeated per group) Wo^T, then the FFN.
  BlockConfig cfg = small_cfg();
  BlockWeights w = BlockWeights::random(cfg, 9);
  TransformerBlock blk(cfg, w);
  Tensor x = randn({1, 32}, 121);
  KVCache cache = blk.make_cache(4);
  Tensor y = blk.forward(x, cache, 0);
  Tensor vv = matmul_t(rms_norm(x, w.attn_norm, cfg.norm_eps), w.wv).view({1, 2, 8});
  Tensor a = index_select(vv, 1, I64({0, 0, 1, 1}, {4})).reshape({1, 32});
  Tensor h = x + matmul_t(a, w.wo);
  Tensor g = matmul_t(rms_norm(h, w.ffn_norm, cfg.norm_eps), w.w_gate);
  Tensor u = matmul_t(rms_norm(h, w.ffn_norm, cfg.norm_eps), w.w_up);
  Tensor want = h + matmul_t(silu(g) * u, w.w_down);
  EXPECT_LT(max_abs_diff(y, want), 1e-5);
}

// q/k/v and gate/up are fused into one matrix per group at construction; the block's
// weights() become row views of it (equal to what was passed in, no second copy), and a block
// whose group cannot fuse (one member quantized, the others dense) gives the same result as
// the same weights all dense up to the quantization error.
TEST_F(NnTest, BlockFusesProjectionsIntoViews) {
  BlockConfig cfg = small_cfg();
  BlockWeights w = BlockWeights::random(cfg, 21);
  TransformerBlock fused(cfg, w);
  const BlockWeights& v = fused.weights();
  EXPECT_EQ(max_abs_diff(v.wq, w.wq), 0.0);
  EXPECT_EQ(max_abs_diff(v.wk, w.wk), 0.0);
  EXPECT_EQ(max_abs_diff(v.wv, w.wv), 0.0);
  EXPECT_EQ(max_abs_diff(v.w_gate, w.w_gate), 0.0);
  EXPECT_EQ(max_abs_diff(v.w_up, w.w_up), 0.0);
  EXPECT_EQ(v.wq.storage(), v.wv.storage()) << "q/k/v must be views of one fused matrix";
  EXPECT_EQ(v.w_gate.storage(), v.w_up.storage()) << "gate/up must be views of one fused matrix";
  EXPECT_NE(v.wq.storage(), w.wq.storage());

  BlockWeights mixed = w;
  mixed.quant.wk = quantize(w.wk, QType::Q8_0);
  mixed.wk = Tensor();
  TransformerBlock unfused(cfg, mixed);
  EXPECT_NE(unfused.weights().wq.storage(), unfused.weights().wv.storage()) << "a mixed group must stay unfused";
  Tensor x = randn({3, 32}, 22);
  KVCache c1 = fused.make_cache(4), c2 = unfused.make_cache(4);
  const double d = max_abs_diff(fused.forward(x, c1, 0), unfused.forward(x, c2, 0));
  EXPECT_GT(d, 0.0);
  EXPECT_LT(d, 0.05);

  // All quantized with one format: fused too; its row views dequantize to the originals.
  BlockWeights q = w;  // (w_down stays dense: its rows of ffn 48 are not whole Q4_0 blocks)
  for (auto [d, qt] : {std::pair{&q.wq, &q.quant.wq}, {&q.wk, &q.quant.wk}, {&q.wv, &q.quant.wv},
                       {&q.w_gate, &q.quant.w_gate}, {&q.w_up, &q.quant.w_up}}) {
    *qt = quantize(*d, QType::Q4_0);
    *d = Tensor();
  }
  TransformerBlock qb(cfg, q);
  EXPECT_EQ(qb.weights().quant.wq.bytes().storage(), qb.weights().quant.wv.bytes().storage());
  EXPECT_EQ(max_abs_diff(dequantize(qb.weights().quant.wv), dequantize(q.quant.wv)), 0.0);
  EXPECT_EQ(max_abs_diff(dequantize(qb.weights().quant.w_up), dequantize(q.quant.w_up)), 0.0);
}

TEST_F(NnTest, BlockStackAndF16Weights) {
  BlockConfig cfg = small_cfg();
  std::vector<TransformerBlock> blocks{TransformerBlock(cfg, BlockWeights::random(cfg, 1)),
                                       TransformerBlock(cfg, BlockWeights::random(cfg, 2))};
  BlockStack stack(blocks, 6, DType::F16);
  Tensor x = randn({4, 32}, 131);
  Tensor pre = stack.forward(x);
  EXPECT_EQ(stack.pos(), 4);
  Tensor step = stack.forward(randn({1, 32}, 132));
  EXPECT_EQ(stack.pos(), 5);
  EXPECT_EQ(step.shape(), (Shape{1, 32}));
  // Two blocks by hand, with f16 caches, give the same first rows.
  KVCache c0 = blocks[0].make_cache(6, DType::F16), c1 = blocks[1].make_cache(6, DType::F16);
  EXPECT_LT(max_abs_diff(blocks[1].forward(blocks[0].forward(x, c0, 0), c1, 0), pre), 1e-6);
  EXPECT_WGT_ERROR(stack.forward(randn({2, 32}, 133)), OutOfRange, "BlockStack::forward");
  EXPECT_EQ(stack.pos(), 5);
  stack.reset();
  EXPECT_EQ(stack.pos(), 0);
  EXPECT_LT(max_abs_diff(stack.forward(x), pre), 1e-6);  // reset replays identically

  // f16 weights: same model up to f16 rounding of activations and weights.
  BlockWeights w32 = BlockWeights::random(cfg, 3), w16 = BlockWeights::random(cfg, 3, DType::F16);
  EXPECT_EQ(w16.wq.dtype(), DType::F16);
  TransformerBlock b32(cfg, w32), b16(cfg, w16);
  KVCache k32 = b32.make_cache(4), k16 = b16.make_cache(4, DType::F16);
  Tensor y32 = b32.forward(x, k32, 0), y16 = b16.forward(x, k16, 0);
  EXPECT_EQ(y16.dtype(), DType::F32);
  EXPECT_LT(max_abs_diff(y16, y32), 0.05);
  EXPECT_GT(max_abs_diff(y16, y32), 0.0);  // the f16 path really ran in f16
}

TEST_F(NnTest, BlockErrors) {
  BlockConfig cfg = small_cfg();
  BlockWeights w = BlockWeights::random(cfg, 1);
  TransformerBlock blk(cfg, w);
  KVCache cache = blk.make_cache(4);
  EXPECT_WGT_ERROR(blk.forward(randn({2, 32}, 1), cache, 1), InvalidArgument, "TransformerBlock::forward");
  EXPECT_WGT_ERROR(blk.forward(randn({2, 31}, 1), cache, 0), ShapeMismatch, "TransformerBlock::forward");
  KVCache wrong(4, 4, 8);
  EXPECT_WGT_ERROR(blk.forward(randn({2, 32}, 1), wrong, 0), ShapeMismatch, "TransformerBlock::forward");
  EXPECT_WGT_ERROR(blk.forward(randn({5, 32}, 1), cache, 0), OutOfRange, "KVCache::append");
  BlockWeights bad = w;
  bad.wk = randn({12, 32}, 1);
  EXPECT_WGT_ERROR(TransformerBlock(cfg, bad), ShapeMismatch, "TransformerBlock");
  bad = w;
  bad.wo = cast(w.wo, DType::F16);
  EXPECT_WGT_ERROR(TransformerBlock(cfg, bad), DTypeMismatch, "TransformerBlock");
  BlockConfig c3 = cfg;
  c3.n_kv_heads = 3;
  EXPECT_WGT_ERROR(TransformerBlock(c3, w), ShapeMismatch, "TransformerBlock");
  EXPECT_WGT_ERROR(TransformerBlock(small_cfg(33), BlockWeights::random(small_cfg(32), 1)), ShapeMismatch,
                   "TransformerBlock");
}

}  // namespace
}  // namespace wgt::test
