// dot_general: XLA semantics against direct summation (batch and contracting lists, negative
// axes, strided operands), zero-copy lowering (no compaction for permuted views, one where
// strides cannot merge), f16/bf16/c64/mixed precision, empty contractions, prepared plans and
// typed errors.
#include <complex>

#include "einsum_ref.hpp"
#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

namespace {

class DotGeneral : public RefTest {};

Tensor cplx(const Shape& s, uint64_t seed) {
  Tensor re = rand_uniform(s, seed, -1, 1), im = rand_uniform(s, seed + 100, -1, 1);
  std::vector<float> r = re.to_vector<float>(), i = im.to_vector<float>();
  std::vector<c64_t> v;
  for (size_t k = 0; k < r.size(); ++k) v.push_back({r[k], i[k]});
  return Tensor::from_vector(v, s);
}

void expect_close(const std::vector<std::complex<double>>& got, const std::vector<std::complex<double>>& want,
                  double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(got[i] - want[i]), tol * std::max(1.0, std::abs(want[i]))) << "[" << i << "]";
}

uint64_t copies() {
  auto st = Runtime::get().stats();
  uint64_t n = 0;
  auto it = st.per_op.find("contiguous");
  if (it != st.per_op.end())
    for (auto& [backend, c] : it->second) n += c.calls;
  return n;
}

}  // namespace

TEST_F(DotGeneral, MatchesDirectSummation) {
  // a [b=2, m=3, k=4, l=5], b [k=4, b=2, l=5, n=6]: batch (0 | 1), contract (2, 3 | 0, 2).
  Tensor a = rand_uniform({2, 3, 4, 5}, 1, -1, 1, DType::F64), b = rand_uniform({4, 2, 5, 6}, 2, -1, 1, DType::F64);
  Tensor r = dot_general(a, b, {{0}, {1}, {2, 3}, {0, 2}});
  EXPECT_EQ(r.shape(), (Shape{2, 3, 6}));
  expect_near_vec(vals(r), re_parts(ref_einsum("bmkl,kbln->bmn", {a, b})), 1e-13);
  // Negative axes, contracting axes listed in the other order, several free axes on each side.
  Tensor r2 = dot_general(a, b, {{-4}, {-3}, {-1, -2}, {2, 0}});
  expect_near_vec(vals(r2), vals(r), 1e-13);
  Tensor c = rand_uniform({3, 7}, 3, -1, 1, DType::F64), d = rand_uniform({2, 3, 5}, 4, -1, 1, DType::F64);
  Tensor r3 = dot_general(c, d, {{}, {}, {0}, {1}});  // free: c's 7, then d's 2, 5
  EXPECT_EQ(r3.shape(), (Shape{7, 2, 5}));
  expect_near_vec(vals(r3), re_parts(ref_einsum("km,akb->mab", {c, d})), 1e-13);
  // No contraction at all: a batched outer product.
  Tensor r4 = dot_general(c, c, {{0}, {0}, {}, {}});
  EXPECT_EQ(r4.shape(), (Shape{3, 7, 7}));
  expect_near_vec(vals(r4), re_parts(ref_einsum("bi,bj->bij", {c, c})), 1e-13);
}

TEST_F(DotGeneral, StridedOperandsInReferenceAndFastModes) {
  for (CpuMode mode : {CpuMode::Reference, CpuMode::Fast}) {
    Policy p = Runtime::get().policy();
    p.cpu_mode = mode;
    Runtime::get().set_policy(p);
    // Transposed, sliced (step 2) and expanded (stride-0) operands.
    Tensor base = rand_uniform({5, 9, 4}, 5, -1, 1);
    Tensor a = base.permute({2, 0, 1}).slice(2, 0, 9, 2);          // [4, 5, 5], no unit stride on dim 2
    Tensor b = rand_uniform({5, 3}, 6, -1, 1).unsqueeze(0).expand({4, 5, 3});  // batch stride 0
    Tensor r = dot_general(a, b, {{0}, {0}, {1}, {1}});
    EXPECT_EQ(r.shape(), (Shape{4, 5, 3}));
    expect_near_vec(vals(r), re_parts(ref_einsum("bkm,bkn->bmn", {a, b})), 1e-5);
  }
}

TEST_F(DotGeneral, PermutedViewsAreNotCopiedAndUnmergeableOnesOnce) {
  // a [K1, M, K2] contracted over (K1, K2): the two axes cannot merge in either order (M lies
  // between them in memory), so a is compacted once; b, a transposed view, never is.
  Tensor a = rand_uniform({3, 4, 5}, 7, -1, 1, DType::F64);
  Tensor b = rand_uniform({6, 5, 3}, 8, -1, 1, DType::F64).permute({2, 1, 0});  // [K1, K2, N] view
  uint64_t before = copies();
  Tensor r = dot_general(a, b, {{}, {}, {0, 2}, {0, 1}});
  EXPECT_EQ(copies() - before, 1u);
  expect_near_vec(vals(r), re_parts(ref_einsum("kmj,kjn->mn", {a, b})), 1e-13);
  // Permuted views whose contracting axes nest in memory (in the other order than listed)
  // need no copy at all.
  Tensor x = rand_uniform({4, 3, 5}, 9, -1, 1, DType::F64).permute({1, 2, 0});  // [3, 5, 4], memory order 4,3,5
  Tensor y = rand_uniform({4, 3, 2}, 10, -1, 1, DType::F64);                    // [4, 3, 2]
  before = copies();
  Tensor r2 = dot_general(x, y, {{}, {}, {0, 2}, {1, 0}});
  EXPECT_EQ(copies() - before, 0u);
  EXPECT_EQ(r2.shape(), (Shape{5, 2}));
  expect_near_vec(vals(r2), re_parts(ref_einsum("kmj,jkn->mn", {x, y})), 1e-13);
}

TEST_F(DotGeneral, HalfBfloatComplexAndMixedPrecision) {
  Tensor a32 = rand_uniform({2, 6, 5}, 11, -1, 1), b32 = rand_uniform({5, 2, 4}, 12, -1, 1);
  for (DType t : {DType::F16, DType::BF16}) {
    Tensor a = cast(a32, t), b = cast(b32, t);
    Tensor r = dot_general(a, b, {{0}, {1}, {2}, {0}});
    EXPECT_EQ(r.dtype(), t);
    // The exact sum of the rounded inputs, rounded once more to the storage type.
    const double tol = t == DType::F16 ? 2e-3 : 1.6e-2;
    expect_near_vec(vals(r), re_parts(ref_einsum("bmk,kbn->bmn", {a, b})), tol, dtype_name(t));
    Tensor m = dot_general(a32, b, {{0}, {1}, {2}, {0}});
    EXPECT_EQ(m.dtype(), DType::F32);
    expect_near_vec(vals(m), re_parts(ref_einsum("bmk,kbn->bmn", {a32, b})), 1e-5, "mixed");
  }
  Tensor ca = cplx({3, 4, 2}, 13), cb = cplx({2, 4, 5}, 14);
  Tensor cr = dot_general(ca, cb, {{}, {}, {1, 2}, {1, 0}});
  EXPECT_EQ(cr.dtype(), DType::C64);
  expect_close(values_c(cr), ref_einsum("mkl,lkn->mn", {ca, cb}), 1e-5);
}

TEST_F(DotGeneral, EmptyAxes) {
  Tensor a = rand_uniform({3, 0}, 15), b = rand_uniform({0, 4}, 16);
  Tensor r = dot_general(a, b, {{}, {}, {1}, {0}});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  for (double v : vals(r)) EXPECT_EQ(v, 0.0);
  Tensor e = dot_general(rand_uniform({0, 5}, 17), rand_uniform({5, 2}, 18), {{}, {}, {1}, {0}});
  EXPECT_EQ(e.shape(), (Shape{0, 2}));
  // Scalars (rank 0) contract nothing: the product.
  Tensor s = dot_general(full({}, 3.0), full({2}, 4.0), {});
  EXPECT_EQ(vals(s), (std::vector<double>{12, 12}));
}

TEST_F(DotGeneral, PreparedPlanRunsManyTimes) {
  DotGeneralPlan plan = prepare({{2, 3, 4}, DType::F64}, {{2, 4, 5}, DType::F64}, {{0}, {0}, {2}, {1}});
  EXPECT_EQ(plan.out_shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(plan.m(), 3);
  EXPECT_EQ(plan.n(), 5);
  EXPECT_EQ(plan.k(), 4);
  EXPECT_EQ(plan.batch(), 2);
  for (uint64_t seed = 20; seed < 23; ++seed) {
    Tensor a = rand_uniform({2, 3, 4}, seed, -1, 1, DType::F64);
    Tensor b = rand_uniform({2, 5, 4}, seed + 10, -1, 1, DType::F64).transpose(1, 2);
    expect_near_vec(vals(plan(a, b)), re_parts(ref_einsum("bmk,bkn->bmn", {a, b})), 1e-13);
  }
  EXPECT_WGT_ERROR(plan(rand_uniform({2, 3, 5}, 1, 0, 1, DType::F64), rand_uniform({2, 4, 5}, 1, 0, 1, DType::F64)),
                   ShapeMismatch, "dot_general");
  EXPECT_WGT_ERROR(plan(rand_uniform({2, 3, 4}, 1), rand_uniform({2, 4, 5}, 1)), DTypeMismatch, "dot_general");
}

TEST_F(DotGeneral, TypedErrors) {
  Tensor a = rand_uniform({2, 3}, 1), b = rand_uniform({3, 4}, 2);
  EXPECT_WGT_ERROR(dot_general(a, b, {{}, {}, {1}, {}}), InvalidArgument, "dot_general");
  EXPECT_WGT_ERROR(dot_general(a, b, {{0}, {}, {1}, {0}}), InvalidArgument, "dot_general");
  EXPECT_WGT_ERROR(dot_general(a, b, {{}, {}, {2}, {0}}), OutOfRange, "dot_general");
  EXPECT_WGT_ERROR(dot_general(a, b, {{}, {}, {-3}, {0}}), OutOfRange, "dot_general");
  EXPECT_WGT_ERROR(dot_general(a, b, {{1}, {0}, {1}, {0}}), InvalidArgument, "dot_general");  // axis twice
  EXPECT_WGT_ERROR(dot_general(a, b, {{}, {}, {0}, {0}}), ShapeMismatch, "dot_general");      // 2 vs 3
  EXPECT_WGT_ERROR(dot_general(a, b, {{0}, {1}, {1}, {0}}), ShapeMismatch, "dot_general");    // batch 2 vs 4
  EXPECT_WGT_ERROR(dot_general(a, cast(b, DType::F64), {{}, {}, {1}, {0}}), DTypeMismatch, "dot_general");
  EXPECT_WGT_ERROR(dot_general(cast(a, DType::Bool), cast(b, DType::Bool), {{}, {}, {1}, {0}}), DTypeMismatch,
                   "dot_general");
  EXPECT_WGT_ERROR(dot_general(Tensor(), b, {}), InvalidArgument, "dot_general");
}
