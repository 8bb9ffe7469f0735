// Reference matmul (vs a hand loop, 1-D operands, batch broadcasting, transposed views),
// softmax / log_softmax / rms_norm / layer_norm properties, concat / slice_copy /
// index_select / gather.
#include <cmath>

#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

using LinAlg = RefTest;
using Norm = RefTest;
using Index = RefTest;

namespace {
// C[b][m][n] = sum_k A[b][m][k] * B[b][k][n] on plain vectors (row-major, no views).
std::vector<double> hand_matmul(const std::vector<double>& A, const std::vector<double>& Bm, int64_t batch, int64_t M,
                                int64_t K, int64_t N) {
  std::vector<double> C(batch * M * N, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) C[(b * M + m) * N + n] += A[(b * M + m) * K + k] * Bm[(b * K + k) * N + n];
  return C;
}
}  // namespace

TEST_F(LinAlg, MatmulHandValuesAndHandLoop) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3}), b = F({7, 8, 9, 10, 11, 12}, {3, 2});
  EXPECT_EQ(matmul(a, b).to_vector<float>(), (std::vector<float>{58, 64, 139, 154}));
  Tensor A = rand_uniform({3, 5, 7}, 1, -1, 1, DType::F64), Bt = rand_uniform({3, 7, 4}, 2, -1, 1, DType::F64);
  Tensor C = matmul(A, Bt);
  EXPECT_EQ(C.shape(), (Shape{3, 5, 4}));
  expect_near_vec(C.to_vector<double>(), hand_matmul(A.to_vector<double>(), Bt.to_vector<double>(), 3, 5, 7, 4), 1e-14);
  // matmul_t(a, W) == matmul(a, W^T), W given as [N, K]
  Tensor W = rand_uniform({4, 7}, 3, -1, 1, DType::F64);
  expect_near_vec(matmul_t(A, W).to_vector<double>(), matmul(A, W.t()).to_vector<double>(), 1e-15);
  EXPECT_EQ(matmul(I32({1, 2, 3, 4}, {2, 2}), I32({1, 0, 0, 1}, {2, 2})).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  std::vector<c64_t> cv = {{0, 1}, {1, 0}};
  auto cm = matmul(Tensor::from_vector(cv, {1, 2}), Tensor::from_vector(cv, {2, 1})).to_vector<c64_t>();  // i*i + 1 = 0
  EXPECT_EQ(cm[0].re, 0);
  EXPECT_EQ(cm[0].im, 0);
}

TEST_F(LinAlg, MatmulVectorsAndBatchBroadcast) {
  Tensor m = F({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v3 = F({1, 0, -1}, {3}), v2 = F({1, 1}, {2});
  Tensor mv = matmul(m, v3);
  EXPECT_EQ(mv.shape(), (Shape{2}));
  EXPECT_EQ(mv.to_vector<float>(), (std::vector<float>{-2, -2}));
  Tensor vm = matmul(v2, m);
  EXPECT_EQ(vm.shape(), (Shape{3}));
  EXPECT_EQ(vm.to_vector<float>(), (std::vector<float>{5, 7, 9}));
  Tensor dot = matmul(v3, v3);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(dot.item(), 2.0);
  EXPECT_EQ(matmul_t(m, v3).shape(), (Shape{2}));
  // [2, 1, 2, 3] @ [4, 3, 2] -> [2, 4, 2, 2]
  Tensor A = rand_uniform({2, 1, 2, 3}, 5, -1, 1, DType::F64), Bm = rand_uniform({4, 3, 2}, 6, -1, 1, DType::F64);
  Tensor C = matmul(A, Bm);
  EXPECT_EQ(C.shape(), (Shape{2, 4, 2, 2}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      expect_near_vec(C.select(0, i).select(0, j).contiguous().to_vector<double>(),
                      matmul(A.select(0, i).select(0, 0), Bm.select(0, j)).to_vector<double>(), 1e-15);
  // Batched matrix @ vector: [4, 3, 2] @ [2] -> [4, 3]
  EXPECT_EQ(matmul(Bm, D({1, 1}, {2})).shape(), (Shape{4, 3}));
  // Transposed / strided operands give the same as their contiguous copies
  Tensor T = rand_uniform({6, 5}, 8, -1, 1, DType::F64);
  expect_near_vec(matmul(T.t(), T.slice(1, 0, 5, 2)).to_vector<double>(),
                  matmul(T.t().contiguous(), T.slice(1, 0, 5, 2).contiguous()).to_vector<double>(), 0);
  // Empty K gives zeros, empty M gives an empty result
  EXPECT_EQ(matmul(Tensor::empty({2, 0}, DType::F32), Tensor::empty({0, 3}, DType::F32)).to_vector<float>(), std::vector<float>(6, 0));
  EXPECT_EQ(matmul(Tensor::empty({0, 2}, DType::F32), F({1, 2}, {2, 1})).shape(), (Shape{0, 1}));
  EXPECT_WGT_ERROR(matmul(m, m), ShapeMismatch, "matmul");
  EXPECT_WGT_ERROR(matmul_t(m, F({1, 2}, {1, 2})), ShapeMismatch, "matmul_t");
  EXPECT_WGT_ERROR(matmul(m, F({1}, {})), RankMismatch, "matmul");
  EXPECT_WGT_ERROR(matmul(m, D({1, 2, 3}, {3})), DTypeMismatch, "matmul");
  EXPECT_WGT_ERROR(matmul(rand_uniform({2, 2, 3}, 1), rand_uniform({3, 3, 2}, 1)), ShapeMismatch, "matmul");
}

// f32 x f16/bf16 -> f32: the half operand converted exactly, so the result equals the f32
// matmul of the converted weights (reference and fast CPU backends alike); half x f32 is refused.
TEST_F(LinAlg, MatmulMixedPrecision) {
  Tensor x = rand_normal({3, 40}, 1), w16 = rand_normal({7, 40}, 2, 0.0, 1.0, DType::F16);
  Tensor wb = cast(rand_normal({40, 5}, 3), DType::BF16);
  Tensor y = matmul_t(x, w16);
  EXPECT_EQ(y.dtype(), DType::F32);
  const auto got = y.to_vector<float>(), want = matmul_t(x, cast(w16, DType::F32)).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])));
  const auto gb = matmul(x, wb).to_vector<float>(), wantb = matmul(x, cast(wb, DType::F32)).to_vector<float>();
  for (size_t i = 0; i < gb.size(); ++i) EXPECT_NEAR(gb[i], wantb[i], 1e-5 * (1 + std::fabs(wantb[i])));
  EXPECT_WGT_ERROR(matmul_t(w16, x.slice(0, 0, 3).slice(1, 0, 40)), DTypeMismatch, "matmul_t");
}

// rms_norm_matmul_t and silu_mul_matmul_t equal their two-op spelling exactly on both CPU
// modes (the backends run the same prologue kernel, then the same product), incl. strided
// operands, an addend and f16 weights; bad operands are typed errors naming the op.
TEST_F(LinAlg, MatmulProloguesEqualTwoOps) {
  Tensor x = rand_normal({3, 40}, 11), g = rand_normal({80}, 12, 1.0, 0.2).slice(0, 0, 80, 2);
  Tensor gu = rand_normal({3, 90}, 13), w = rand_normal({7, 40}, 14), w16 = cast(w, DType::F16), c = rand_normal({3, 7}, 15);
  const Tensor gate = gu.slice(1, 5, 45), up = gu.slice(1, 50, 90);
  for (CpuMode mode : {CpuMode::Reference, CpuMode::Fast}) {
    Policy p = Runtime::get().policy();
    p.cpu_mode = mode;
    Runtime::get().set_policy(p);
    for (const Tensor& wt : {w, w16}) {
      EXPECT_EQ(rms_norm_matmul_t(x, g, wt, 1e-5).to_vector<float>(), matmul_t(rms_norm(x, g, 1e-5), wt).to_vector<float>());
      EXPECT_EQ(silu_mul_matmul_t(gate, up, wt).to_vector<float>(), matmul_t(silu_mul(gate, up), wt).to_vector<float>());
      EXPECT_EQ(silu_mul_matmul_t(gate, up, wt, c).to_vector<float>(), addmm_t(c, silu_mul(gate, up), wt).to_vector<float>());
    }
  }
  EXPECT_WGT_ERROR(rms_norm_matmul_t(x, rand_normal({39}, 1), w), ShapeMismatch, "rms_norm_matmul_t");
  EXPECT_WGT_ERROR(rms_norm_matmul_t(x, cast(rand_normal({40}, 1), DType::F16), w), DTypeMismatch, "rms_norm_matmul_t");
  EXPECT_WGT_ERROR(rms_norm_matmul_t(x, rand_normal({40}, 1), w, -1.0), InvalidArgument, "rms_norm_matmul_t");
  EXPECT_WGT_ERROR(rms_norm_matmul_t(x, rand_normal({40}, 1), rand_normal({2, 7, 40}, 2)), ShapeMismatch, "rms_norm_matmul_t");
  EXPECT_WGT_ERROR(silu_mul_matmul_t(gate, up.slice(0, 0, 2), w), ShapeMismatch, "silu_mul_matmul_t");
  EXPECT_WGT_ERROR(silu_mul_matmul_t(gate, cast(up, DType::F16), w), DTypeMismatch, "silu_mul_matmul_t");
  EXPECT_WGT_ERROR(silu_mul_matmul_t(gate, up, w, rand_normal({3, 6}, 3)), ShapeMismatch, "silu_mul_addmm_t");
}

TEST_F(Norm, SoftmaxProperties) {
  Tensor x = D({1, 2, 3, 1000, 1000, 1000, -1e9, 0, 1e-3}, {3, 3});
  Tensor s = softmax(x);
  auto sv = s.to_vector<double>();
  expect_near_vec({sv[0], sv[1], sv[2]}, {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-15);
  expect_near_vec({sv[3], sv[4], sv[5]}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15);  // large values: no overflow
  expect_near_vec(sum(s, {1}).to_vector<double>(), {1, 1, 1}, 1e-15);
  // log_softmax == log(softmax) and exp(log_softmax) sums to 1
  auto ls = log_softmax(x).to_vector<double>();
  auto logs = log(s).to_vector<double>();
  expect_near_vec({ls.begin(), ls.begin() + 6}, {logs.begin(), logs.begin() + 6}, 1e-12);
  // where softmax underflows to 0, log_softmax stays finite: -1e9 - logsumexp
  const double lse = 1e-3 + std::log1p(std::exp(-1e-3));
  expect_near_vec({ls.begin() + 6, ls.end()}, {-1e9 - lse, -lse, 1e-3 - lse}, 1e-15);
  Tensor r = rand_uniform({4, 5, 6}, 11, -5, 5, DType::F64);
  expect_near_vec(sum(softmax(r, 1), {1}).to_vector<double>(), std::vector<double>(24, 1.0), 1e-14);
  expect_near_vec(sum(exp(log_softmax(r, 0)), {0}).to_vector<double>(), std::vector<double>(30, 1.0), 1e-14);
  // along a non-last axis the result equals softmax of the transposed tensor, transposed back
  expect_near_vec(softmax(r, 1).to_vector<double>(),
                  softmax(r.transpose(1, 2), -1).transpose(1, 2).contiguous().to_vector<double>(), 1e-15);
  Tensor f = softmax(F({0, 0, 0, 0}, {2, 2}).t());  // a transposed f32 input
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(softmax(Tensor::empty({0, 3}, DType::F32)).shape(), (Shape{0, 3}));
  EXPECT_WGT_ERROR(softmax(I32({1}, {1})), DTypeMismatch, "softmax");
  EXPECT_WGT_ERROR(log_softmax(x, 2), OutOfRange, "log_softmax");
}

TEST_F(Norm, RmsNormAndLayerNorm) {
  Tensor x = D({1, 2, 3, 4, -2, 0, 2, 4}, {2, 4});
  // rms of [1,2,3,4] = sqrt(7.5)
  auto r = rms_norm(x, std::nullopt, 0.0).to_vector<double>();
  const double k = 1 / std::sqrt(7.5);
  expect_near_vec({r[0], r[1], r[2], r[3]}, {k, 2 * k, 3 * k, 4 * k}, 1e-15);
  Tensor w = D({1, 0.5, 2, -1}, {4});
  auto rw = rms_norm(x, w, 0.0).to_vector<double>();
  expect_near_vec({rw[0], rw[1], rw[2], rw[3]}, {k, k, 6 * k, -4 * k}, 1e-15);
  // eps enters inside the sqrt: x = [0, 0] stays finite (0)
  EXPECT_EQ(rms_norm(D({0, 0}, {1, 2}), std::nullopt, 1e-6).to_vector<double>(), (std::vector<double>{0, 0}));
  // layer_norm: mean 0, biased variance 1 per row
  Tensor r3 = rand_uniform({5, 16}, 21, -3, 7, DType::F64);
  Tensor ln = layer_norm(r3, std::nullopt, std::nullopt, 0.0);
  expect_near_vec(mean(ln, {1}).to_vector<double>(), std::vector<double>(5, 0.0), 1e-14);
  expect_near_vec(mean(mul(ln, ln), {1}).to_vector<double>(), std::vector<double>(5, 1.0), 1e-13);
  auto l = layer_norm(D({1, 2, 3}, {3}), D({2, 2, 2}, {3}), D({1, 1, 1}, {3}), 0.0).to_vector<double>();
  // mean 2, biased var 2/3: (x - 2) / sqrt(2/3) * 2 + 1 = 1 -+ 2 sqrt(1.5)
  expect_near_vec(l, {1 - 2 * std::sqrt(1.5), 1, 1 + 2 * std::sqrt(1.5)}, 1e-15);
  // bias without weight
  expect_near_vec(layer_norm(D({5, 5}, {2}), std::nullopt, D({3, -3}, {2})).to_vector<double>(), {3, -3}, 0);
  // f16 input: computed in higher precision, output rounded to f16
  Tensor h = cast(D({1, 2, 3, 4}, {4}), DType::F16);
  expect_near_vec(vals(rms_norm(h, std::nullopt, 0.0)), {0.365234375, 0.73046875, 1.095703125, 1.4609375}, 0);
  EXPECT_WGT_ERROR(rms_norm(x, D({1, 2}, {2})), ShapeMismatch, "rms_norm");
  EXPECT_WGT_ERROR(rms_norm(x, D({1, 2, 3, 4}, {2, 2})), RankMismatch, "rms_norm");
  EXPECT_WGT_ERROR(layer_norm(x, F({1, 2, 3, 4}, {4})), DTypeMismatch, "layer_norm");
  EXPECT_WGT_ERROR(layer_norm(D({1}, {}), std::nullopt), RankMismatch, "layer_norm");
  EXPECT_WGT_ERROR(rms_norm(x, std::nullopt, -1), InvalidArgument, "rms_norm");
}

TEST_F(Index, ConcatAndSliceCopy) {
  Tensor a = F({1, 2, 3, 4}, {2, 2}), b = F({5, 6}, {2, 1});
  Tensor c = concat({a, b}, 1);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(concat({a, a.t()}, 0).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 1, 3, 2, 4}));
  EXPECT_EQ(concat({a, Tensor::empty({0, 2}, DType::F32)}, -2).shape(), (Shape{2, 2}));
  Tensor s = slice_copy(arange(0, 10), 0, 1, 8, 3);
  EXPECT_TRUE(s.is_contiguous());
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(slice_copy(a, 1, -1, 5).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_WGT_ERROR(concat({}, 0), InvalidArgument, "concat");
  EXPECT_WGT_ERROR(concat({a, b}, 0), ShapeMismatch, "concat");
  EXPECT_WGT_ERROR(concat({a, F({1, 2}, {2})}, 0), RankMismatch, "concat");
  EXPECT_WGT_ERROR(concat({a, cast(a, DType::F16)}, 0), DTypeMismatch, "concat");
  EXPECT_WGT_ERROR(slice_copy(a, 0, 0, 1, 0), InvalidArgument, "slice_copy");
}

TEST_F(Index, IndexSelectAndGather) {
  Tensor x = F({0, 1, 2, 10, 11, 12, 20, 21, 22}, {3, 3});
  Tensor rows = index_select(x, 0, I64({2, 0, 2}, {3}));
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{20, 21, 22, 0, 1, 2, 20, 21, 22}));
  Tensor cols = index_select(x, 1, I32({1, 0, 2, 2}, {2, 2}));  // [3, 2, 2]
  EXPECT_EQ(cols.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(cols.select(0, 1).contiguous().to_vector<float>(), (std::vector<float>{11, 10, 12, 12}));
  EXPECT_EQ(index_select(x, 0, I64({1}, {})).to_vector<float>(), (std::vector<float>{10, 11, 12}));  // 0-d index
  EXPECT_EQ(index_select(x.t(), 0, I64({0}, {1})).to_vector<float>(), (std::vector<float>{0, 10, 20}));
  // gather: out[i][j] = x[i][idx[i][j]]
  Tensor g = gather(x, 1, I64({2, 2, 0, 1}, {2, 2}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 2, 10, 11}));
  Tensor g0 = gather(x, 0, I32({2, 0, 1}, {1, 3}));  // out[0][j] = x[idx[0][j]][j]
  EXPECT_EQ(g0.to_vector<float>(), (std::vector<float>{20, 1, 12}));
  EXPECT_WGT_ERROR(index_select(x, 0, I64({3}, {1})), OutOfRange, "index_select");
  EXPECT_WGT_ERROR(index_select(x, 0, I64({-1}, {1})), OutOfRange, "index_select");
  EXPECT_WGT_ERROR(index_select(x, 0, F({0}, {1})), DTypeMismatch, "index_select");
  EXPECT_WGT_ERROR(gather(x, 1, I64({5}, {1, 1})), OutOfRange, "gather");
  EXPECT_WGT_ERROR(gather(x, 1, I64({0}, {1})), RankMismatch, "gather");
  EXPECT_WGT_ERROR(gather(x, 1, I64({0, 0, 0, 0}, {4, 1})), ShapeMismatch, "gather");
  EXPECT_WGT_ERROR(gather(x, 2, I64({0}, {1, 1})), OutOfRange, "gather");
}
