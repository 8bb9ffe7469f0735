// einsum against direct summation on the standard cases (matmul, batch matmul, outer, trace,
// diagonal, transpose, bilinear, ellipsis, sums, 4+ operand chains), the chosen contraction
// order, plans reused, and typed errors for bad specs.
#include <complex>

#include "einsum_ref.hpp"
#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

namespace {

class Einsum : public RefTest {};

Tensor R(const Shape& s, uint64_t seed) { return rand_uniform(s, seed, -1, 1, DType::F64); }

// einsum(spec) against the direct sum of the letters-only spec `ref` on the same operands.
void check(const std::string& spec, const std::vector<Tensor>& ops, const std::string& ref, const Shape& shape,
           double tol = 1e-12) {
  Tensor r = einsum(spec, ops);
  EXPECT_EQ(r.shape(), shape) << spec;
  expect_near_vec(vals(r), re_parts(ref_einsum(ref, ops)), tol, spec.c_str());
}

}  // namespace

TEST_F(Einsum, StandardCases) {
  Tensor A = R({3, 4}, 1), B = R({4, 5}, 2), v = R({4}, 3), w = R({3}, 4);
  check("ij,jk->ik", {A, B}, "ij,jk->ik", {3, 5});                  // matmul
  check("ij,jk", {A, B}, "ij,jk->ik", {3, 5});                      // implicit output
  check("bij,bjk->bik", {R({2, 3, 4}, 5), R({2, 4, 5}, 6)}, "bij,bjk->bik", {2, 3, 5});  // batch matmul
  check("i,j->ij", {w, v}, "i,j->ij", {3, 4});                      // outer
  check("ij,j->i", {A, v}, "ij,j->i", {3});                         // matvec
  check("i,i->", {v, v}, "i,i->", {});                              // dot
  check("ij->ji", {A}, "ij->ji", {4, 3});                           // transpose
  check("ba", {A}, "ba->ab", {4, 3});                               // implicit transpose
  check("ij->", {A}, "ij->", {});                                   // total sum
  check("ij->j", {A}, "ij->j", {4});                                // column sums
  Tensor S = R({4, 4}, 7);
  check("ii->", {S}, "ii->", {});                                   // trace
  check("ii", {S}, "ii->", {});
  check("ii->i", {S}, "ii->i", {4});                                // diagonal
  check("iij->ij", {R({3, 3, 2}, 8)}, "iij->ij", {3, 2});
  check("iji->j", {R({3, 2, 3}, 9)}, "iji->j", {2});                // trace over non-adjacent axes
  check("ik,jkl,il->ij", {R({2, 3}, 10), R({4, 3, 5}, 11), R({2, 5}, 12)}, "ik,jkl,il->ij", {2, 4});  // bilinear
  check("ij,kl->", {A, B}, "ij,kl->", {});                          // summed-out letters of each side
  check("ijk,ik->j", {R({2, 3, 4}, 13), R({2, 4}, 14)}, "ijk,ik->j", {3});
  check("Ab,bA->A", {R({2, 3}, 15), R({3, 2}, 16)}, "Ab,bA->A", {2});  // upper-case letters
}

TEST_F(Einsum, EllipsisAndBroadcast) {
  Tensor x = R({2, 3, 4, 5}, 20), y = R({2, 3, 5, 6}, 21);
  check("...ij,...jk->...ik", {x, y}, "abij,abjk->abik", {2, 3, 4, 6});
  check("...ij,...jk", {x, y}, "abij,abjk->abik", {2, 3, 4, 6});  // implicit: "..." first
  check("i...->...", {R({4, 2, 3}, 22)}, "iab->ab", {2, 3});
  check("...ij->...", {x}, "abij->ab", {2, 3});
  check("...ij->ij", {x}, "abij->ij", {4, 5});                       // "..." dims summed when left out
  // Broadcasting: [3, 1, 4, 5] with [2, 5, 6] -> [3, 2, 4, 6], as the expanded operands give.
  Tensor p = R({3, 1, 4, 5}, 23), q = R({2, 5, 6}, 24);
  Tensor r = einsum("...ij,...jk->...ik", {p, q});
  EXPECT_EQ(r.shape(), (Shape{3, 2, 4, 6}));
  expect_near_vec(vals(r), re_parts(ref_einsum("abij,abjk->abik", {p.expand({3, 2, 4, 5}), q.expand({3, 2, 5, 6})})),
                  1e-12);
  // A broadcast dim of size 1 on one side that is summed: the other side's extent counts.
  Tensor s = einsum("...i,...i->", {R({1, 4}, 25), R({3, 4}, 26)});
  EXPECT_NEAR(s.item(), re_parts(ref_einsum("ai,ai->", {R({1, 4}, 25).expand({3, 4}), R({3, 4}, 26)}))[0], 1e-12);
}

TEST_F(Einsum, ChainsOfFourAndMoreOperands) {
  Tensor a = R({2, 3}, 30), b = R({3, 4}, 31), c = R({4, 5}, 32), d = R({5, 2}, 33), e = R({2, 3}, 34);
  check("ij,jk,kl,lm->im", {a, b, c, d}, "ij,jk,kl,lm->im", {2, 2});
  check("ij,jk,kl,lm,mn->in", {a, b, c, d, e}, "ij,jk,kl,lm,mn->in", {2, 3});  // greedy beyond 4
  check("ij,jk,kl,lm,mi->", {a, b, c, d, R({2, 2}, 35)}, "ij,jk,kl,lm,mi->", {});  // a ring (trace of a product)
  check("ab,bc,ca,ad->d", {R({2, 3}, 36), R({3, 4}, 37), R({4, 2}, 38), R({2, 5}, 39)}, "ab,bc,ca,ad->d", {5});
  // A letter shared by three operands and kept: a batch axis through every step.
  check("bi,bij,bj->b", {R({3, 2}, 40), R({3, 2, 4}, 41), R({3, 4}, 42)}, "bi,bij,bj->b", {3});
}

TEST_F(Einsum, DtypesAndStridedOperands) {
  Tensor A = rand_uniform({3, 4}, 50, -1, 1), B = rand_uniform({5, 4}, 51, -1, 1);
  check("ij,kj->ik", {A, B}, "ij,kj->ik", {3, 5}, 1e-5);
  check("ij,jk->ik", {A.slice(0, 0, 3, 2), B.t()}, "ij,jk->ik", {2, 5}, 1e-5);
  check("ii->i", {rand_uniform({4, 4}, 52).t()}, "ii->i", {4}, 0);
  Tensor I = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor ri = einsum("ij,ij->i", {I, I});
  EXPECT_EQ(ri.dtype(), DType::I32);
  EXPECT_EQ(ri.to_vector<int32_t>(), (std::vector<int32_t>{14, 77}));
  EXPECT_EQ(einsum("ij->", {I}).to_vector<int32_t>(), (std::vector<int32_t>{21}));
  std::vector<c64_t> cv = {{1, 2}, {3, -1}, {0, 1}, {2, 0}};
  Tensor C = Tensor::from_vector(cv, {2, 2});
  Tensor cr = einsum("ij,jk->ik", {C, C});
  auto want = ref_einsum("ij,jk->ik", {C, C});
  auto got = values_c(cr);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(std::abs(got[i] - want[i]), 1e-5);
  check("ij,jk->ik", {cast(A, DType::F16), cast(B.t(), DType::F16)}, "ij,jk->ik", {3, 5}, 3e-3);
}

TEST_F(Einsum, ContractionOrderByCost) {
  // [10, 1000] [1000, 10] [10, 1000]: (0, 1) first costs 1e5 + 1e5; (1, 2) first 1e7.
  EinsumPlan p = prepare_einsum("ij,jk,kl->il", {{{10, 1000}}, {{1000, 10}}, {{10, 1000}}});
  ASSERT_EQ(p.path().size(), 2u);
  EXPECT_EQ(p.path()[0], (std::pair<int, int>{0, 1}));
  EXPECT_EQ(p.cost(), 2e5);
  // [1000, 10] [10, 1000] [1000, 10]: (1, 2) first (1e5), then [1000, 10] x [10, 10] (1e5).
  EinsumPlan q = prepare_einsum("ij,jk,kl->il", {{{1000, 10}}, {{10, 1000}}, {{1000, 10}}});
  EXPECT_EQ(q.path()[0], (std::pair<int, int>{1, 2}));
  EXPECT_EQ(q.cost(), 2e5);
  EXPECT_EQ(q.out_shape(), (Shape{1000, 10}));
  // Four operands: the small vectors first, never the [200, 200] x [200, 200] product (8e6).
  EinsumPlan r = prepare_einsum("i,ij,jk,k->", {{{200}}, {{200, 200}}, {{200, 200}}, {{200}}});
  EXPECT_EQ(r.cost(), 200.0 * 200 * 2 + 200);
}

TEST_F(Einsum, LastContractionLandsInOutputOrder) {
  // The operand whose free letters lead the output goes first in the last contraction, so
  // the result needs no permuted view: it comes out contiguous and matches the reference,
  // including letters summed out of either side before the step and a 3-operand chain.
  struct Case { std::string spec; std::vector<Tensor> ops; Shape shape; };
  const std::vector<Case> cases = {
      {"jk,ij->ik", {R({4, 5}, 70), R({3, 4}, 71)}, {3, 5}},
      {"bkn,bmk->bmn", {R({2, 4, 5}, 72), R({2, 3, 4}, 73)}, {2, 3, 5}},
      {"bknz,bmk->bmn", {R({2, 4, 5, 3}, 74), R({2, 3, 4}, 75)}, {2, 3, 5}},
      {"kn,mkz->mn", {R({4, 5}, 76), R({3, 4, 2}, 77)}, {3, 5}},
      {"lm,kl,ik->im", {R({3, 6}, 78), R({4, 3}, 79), R({5, 4}, 80)}, {5, 6}},
  };
  for (const Case& c : cases) {
    Tensor r = einsum(c.spec, c.ops);
    EXPECT_EQ(r.shape(), c.shape) << c.spec;
    EXPECT_TRUE(r.is_contiguous()) << c.spec;
    expect_near_vec(vals(r), re_parts(ref_einsum(c.spec, c.ops)), 1e-12, c.spec.c_str());
  }
  // When no order gives the output's order, the result is still right (a permuted view).
  const std::vector<Tensor> ops = {R({2, 3, 4}, 81), R({2, 4, 5}, 82)};
  Tensor r = einsum("bij,bjk->kbi", ops);
  EXPECT_EQ(r.shape(), (Shape{5, 2, 3}));
  expect_near_vec(vals(r), re_parts(ref_einsum("bij,bjk->kbi", ops)), 1e-12, "kbi");
}

TEST_F(Einsum, PlanReusedOnNewOperands) {
  EinsumPlan p = prepare_einsum("bij,jk->bik", {{{2, 3, 4}, DType::F64}, {{4, 5}, DType::F64}});
  for (uint64_t s = 60; s < 63; ++s) {
    Tensor x = R({2, 3, 4}, s), y = R({5, 4}, s + 5).t();
    expect_near_vec(vals(p({x, y})), re_parts(ref_einsum("bij,jk->bik", {x, y})), 1e-12);
  }
  EXPECT_WGT_ERROR(p({R({2, 3, 4}, 1)}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(p({R({2, 3, 5}, 1), R({5, 5}, 1)}), ShapeMismatch, "einsum");
}

TEST_F(Einsum, TypedErrors) {
  Tensor A = R({2, 3}, 1), B = R({3, 4}, 2);
  EXPECT_WGT_ERROR(einsum("i1,jk->ik", {A, B}), InvalidArgument, "einsum");   // unknown subscript
  EXPECT_WGT_ERROR(einsum("ij,jk->i$", {A, B}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(einsum("ij,jk->iz", {A, B}), InvalidArgument, "einsum");   // output letter in no input
  EXPECT_WGT_ERROR(einsum("ij,jk->ii", {A, B}), InvalidArgument, "einsum");   // repeated output letter
  EXPECT_WGT_ERROR(einsum("ij,jk-ik", {A, B}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(einsum("i.j,jk->ik", {A, B}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(einsum("...i...,jk", {A, B}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(einsum("ij,jk,kl->il", {A, B}), InvalidArgument, "einsum");  // operand count
  EXPECT_WGT_ERROR(einsum("ij,kl->", {A}), InvalidArgument, "einsum");
  EXPECT_WGT_ERROR(einsum("ij,ik->jk", {A, B}), ShapeMismatch, "einsum");    // i: 2 vs 3
  EXPECT_WGT_ERROR(einsum("ii->i", {A}), ShapeMismatch, "einsum");           // a non-square diagonal
  EXPECT_WGT_ERROR(einsum("ijk,jk->i", {A, B}), RankMismatch, "einsum");
  EXPECT_WGT_ERROR(einsum("...ij,...jk", {R({2, 2, 3}, 3), R({3, 3, 4}, 4)}), ShapeMismatch, "einsum");
  EXPECT_WGT_ERROR(einsum("ij,jk->ik", {A, cast(B, DType::F32)}), DTypeMismatch, "einsum");
  EXPECT_WGT_ERROR(einsum("ij->ij", {Tensor()}), InvalidArgument, "einsum");
  std::vector<Tensor> many(kMaxEinsumOperands + 1, R({2}, 5));
  std::string spec;
  for (size_t i = 0; i < many.size(); ++i) spec += i ? ",i" : "i";
  EXPECT_WGT_ERROR(einsum(spec, many), InvalidArgument, "einsum");            // too many operands
  // The largest accepted count works (a product of 32 vectors contracted over one letter).
  many.pop_back();
  spec = spec.substr(0, spec.size() - 2);
  std::vector<double> prod(2, 1.0);
  for (const Tensor& t : many) {
    auto v = vals(t);
    prod[0] *= v[0];
    prod[1] *= v[1];
  }
  EXPECT_NEAR(einsum(spec + "->", many).item(), prod[0] + prod[1], 1e-12);
}
