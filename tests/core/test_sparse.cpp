// CSR tensors and sparse ops on the CPU: hand-checked values on a small matrix, construction
// errors, conversions, and the fast kernels against the reference on generated matrices
// (empty, empty rows, one dense row, diagonal, banded, uniform, R-MAT) in every dtype and
// both index widths, with strided dense operands and NaN.
#include <cmath>

#include "core/ref_test_util.hpp"
#include "cpu/fast/fast.hpp"
#include "sparse/generate.hpp"
#include "wgt/sparse.hpp"

namespace wgt {
namespace {

using test::F;
using test::I32;
using test::I64;
using test::vals;
using test::in_mode;
using test::expect_near_vec;

class SparseRef : public test::RefTest {};

// [[1, 0, 2], [0, 0, 0], [3, 4, 0]]
CsrTensor small(DType idx = DType::I64) {
  Tensor ip = I64({0, 2, 2, 4}, {4}), ix = I64({0, 2, 0, 1}, {4});
  if (idx == DType::I32) {
    ip = I32({0, 2, 2, 4}, {4});
    ix = I32({0, 2, 0, 1}, {4});
  }
  return CsrTensor::from_parts(ip, ix, F({1, 2, 3, 4}, {4}), {3, 3});
}

TEST_F(SparseRef, HandCheckedOps) {
  for (DType idx : {DType::I32, DType::I64}) {
    const CsrTensor a = small(idx);
    expect_near_vec(vals(spmv(a, F({1, 2, 3}, {3}))), {7, 0, 11}, 0, "spmv");
    expect_near_vec(vals(spmm(a, F({1, 0, 0, 1, 1, 1}, {3, 2}))), {3, 2, 0, 0, 3, 4}, 0, "spmm");
    expect_near_vec(vals(sparse_row_sum(a)), {3, 0, 7}, 0, "row sum");
    expect_near_vec(vals(sparse_row_max(a)), {2, -INFINITY, 4}, 0, "row max");
    const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), e4 = std::exp(4.0);
    expect_near_vec(vals(sparse_softmax(a).values()), {e1 / (e1 + e2), e2 / (e1 + e2), e3 / (e3 + e4), e4 / (e3 + e4)},
                    1e-6, "softmax");
    // x [3, 2] @ y [2, 3] sampled at (0,0), (0,2), (2,0), (2,1).
    const Tensor x = F({1, 2, 3, 4, 5, 6}, {3, 2}), y = F({1, 0, 2, 0, 1, 3}, {2, 3});
    expect_near_vec(vals(sddmm(a, x, y).values()), {1, 8, 5, 6}, 0, "sddmm");
    expect_near_vec(vals(add(F({1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3}), a)), {2, 1, 3, 1, 1, 1, 4, 5, 1}, 0, "add");
    expect_near_vec(vals(scale(a, -2).to_dense()), {-2, 0, -4, 0, 0, 0, -6, -8, 0}, 0, "scale");
    const CsrTensor s = index_select_rows(a, I32({2, 0, 2, 1}, {4}));
    EXPECT_EQ(s.shape(), (Shape{4, 3}));
    expect_near_vec(vals(s.to_dense()), {3, 4, 0, 1, 0, 2, 3, 4, 0, 0, 0, 0}, 0, "index_select_rows");
    const CsrTensor t = a.transpose();
    EXPECT_EQ(t.index_dtype(), idx);
    expect_near_vec(vals(t.to_dense()), {1, 0, 3, 0, 0, 4, 2, 0, 0}, 0, "transpose");
    EXPECT_TRUE(t.sorted());
  }
}

TEST_F(SparseRef, StatsAndBins) {
  const CsrTensor a = small();
  EXPECT_EQ(a.stats().max_len, 2);
  EXPECT_EQ(a.stats().empty_rows, 1);
  EXPECT_NEAR(a.stats().mean_len, 4.0 / 3.0, 1e-12);
  // Every row in exactly one bin.
  std::vector<int32_t> ids = a.bin_rows().to_vector<int32_t>();
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1, 2}));
  // A power-law matrix takes the adaptive schedule (row blocks) for SpMV and the merge path
  // for SpMM; a stencil neither.
  const CsrTensor g = sparse_gen::to_csr(sparse_gen::rmat(12, 8, 3));
  EXPECT_EQ(choose_schedule(g, 1).schedule, SparseSchedule::Adaptive);
  EXPECT_EQ(choose_schedule(g, 64).schedule, SparseSchedule::MergePath);
  EXPECT_GT(g.stats().bin_start[4] - g.stats().bin_start[3] + g.stats().bin_start[3] - g.stats().bin_start[2], 0);
  EXPECT_EQ(choose_schedule(sparse_gen::to_csr(sparse_gen::laplacian_2d(20)), 1).schedule, SparseSchedule::ThreadPerRow);
}

TEST_F(SparseRef, ConstructionErrors) {
  auto make = [](std::vector<int64_t> ip, std::vector<int64_t> ix, Shape s, CsrOptions o = {}) {
    return CsrTensor::from_parts(I64(ip, {(int64_t)ip.size()}), I64(ix, {(int64_t)ix.size()}),
                                 F(std::vector<float>(ix.size(), 1.f), {(int64_t)ix.size()}), s, o);
  };
  EXPECT_WGT_ERROR(make({1, 2}, {0, 0}, {1, 2}), InvalidArgument, "CsrTensor");  // indptr[0] != 0
  EXPECT_WGT_ERROR(make({0, 2, 1, 2}, {0, 1}, {3, 2}), InvalidArgument, "CsrTensor");  // decreasing
  EXPECT_WGT_ERROR(make({0, 1, 1}, {0, 1}, {2, 2}), InvalidArgument, "CsrTensor");  // last != nnz
  EXPECT_WGT_ERROR(make({0, 1}, {0}, {2, 2}), ShapeMismatch, "CsrTensor");  // rows + 1 entries
  EXPECT_WGT_ERROR(make({0, 1}, {5}, {1, 2}), OutOfRange, "CsrTensor");
  EXPECT_WGT_ERROR(make({0, 1}, {-1}, {1, 2}), OutOfRange, "CsrTensor");
  EXPECT_WGT_ERROR(make({0, 2}, {1, 1}, {1, 2}), InvalidArgument, "CsrTensor");  // duplicate
  EXPECT_WGT_ERROR(make({0, 3}, {1, 0, 1}, {1, 2}), InvalidArgument, "CsrTensor");  // unsorted duplicate
  CsrOptions sorted_only;
  sorted_only.require_sorted = true;
  EXPECT_WGT_ERROR(make({0, 2}, {1, 0}, {1, 2}, sorted_only), InvalidArgument, "CsrTensor");
  EXPECT_WGT_ERROR(CsrTensor::from_parts(I32({0, 1}, {2}), I64({0}, {1}), F({1}, {1}), {1, 1}), DTypeMismatch, "CsrTensor");
  EXPECT_WGT_ERROR(CsrTensor::from_parts(I64({0, 1}, {2}), I64({0}, {1}), I32({1}, {1}), {1, 1}), DTypeMismatch, "CsrTensor");
  EXPECT_WGT_ERROR(CsrTensor::from_parts(I64({0, 1}, {2}), I64({0}, {1}), F({1}, {1}), {1, 1, 1}), RankMismatch, "CsrTensor");
  // Accepted forms: unsorted, and duplicates when allowed (then summed by the products).
  const CsrTensor u = make({0, 2}, {1, 0}, {1, 2});
  EXPECT_FALSE(u.sorted());
  CsrOptions allow;
  allow.duplicates = Duplicates::Allow;
  const CsrTensor d = make({0, 3}, {1, 0, 1}, {1, 2}, allow);
  EXPECT_TRUE(d.has_duplicates());
  expect_near_vec(vals(d.to_dense()), {1, 2}, 0, "duplicates summed");
  expect_near_vec(vals(spmv(d, F({10, 100}, {2}))), {210}, 0, "spmv of duplicates");
  const CsrTensor c = d.coalesce();
  EXPECT_EQ(c.nnz(), 2);
  EXPECT_FALSE(c.has_duplicates());
  EXPECT_TRUE(c.sorted());
}

TEST_F(SparseRef, OpErrors) {
  const CsrTensor a = small();
  EXPECT_WGT_ERROR(spmv(a, F({1, 2}, {2})), ShapeMismatch, "spmv");
  EXPECT_WGT_ERROR(spmv(a, test::D({1, 2, 3}, {3})), DTypeMismatch, "spmv");
  EXPECT_WGT_ERROR(spmm(a, F({1, 2, 3}, {3})), RankMismatch, "spmm");
  EXPECT_WGT_ERROR(spmv(CsrTensor(), F({1}, {1})), InvalidArgument, "spmv");
  EXPECT_WGT_ERROR(sddmm(a, F({1, 2}, {1, 2}), F({1, 2}, {2, 1})), ShapeMismatch, "sddmm");
  EXPECT_WGT_ERROR(add(F({1, 2}, {1, 2}), a), ShapeMismatch, "sparse_add_dense");
  EXPECT_WGT_ERROR(index_select_rows(a, I32({3}, {1})), OutOfRange, "index_select_rows");
  EXPECT_WGT_ERROR(index_select_rows(a, F({0}, {1})), DTypeMismatch, "index_select_rows");
  EXPECT_WGT_ERROR(CsrTensor::from_coo(I64({0, 2}, {2}), I64({0, 0}, {2}), F({1, 1}, {2}), {2, 2}), OutOfRange,
                   "from_coo");
}

TEST_F(SparseRef, ConversionsRoundTrip) {
  // Dense with NaN kept as an entry and explicit zeros dropped.
  const Tensor d = F({0, 1, 0, NAN, 0, 0, 2, 0, 3, 0, 0, 0}, {3, 4});
  const CsrTensor a = CsrTensor::from_dense(d, DType::I32);
  EXPECT_EQ(a.nnz(), 4);
  expect_near_vec(vals(a.to_dense()), vals(d), 0, "from_dense/to_dense");
  expect_near_vec(vals(a.transpose().transpose().to_dense()), vals(d), 0, "transpose twice");
  // COO: unsorted with duplicates summed; equals the dense sum of the triplets.
  const CsrTensor c = CsrTensor::from_coo(I64({2, 0, 2, 0, 1}, {5}), I64({1, 3, 1, 0, 2}, {5}), F({1, 2, 3, 4, 5}, {5}),
                                          {3, 4}, DType::I32);
  EXPECT_EQ(c.nnz(), 4);
  EXPECT_TRUE(c.sorted());
  expect_near_vec(vals(c.to_dense()), {4, 0, 0, 2, 0, 0, 5, 0, 0, 4, 0, 0}, 0, "from_coo");
  // Empty matrices.
  const CsrTensor e = CsrTensor::from_dense(zeros({0, 3}));
  EXPECT_EQ(e.rows(), 0);
  EXPECT_EQ(spmv(e, F({1, 2, 3}, {3})).numel(), 0);
  const CsrTensor z = CsrTensor::from_dense(zeros({4, 0}));
  expect_near_vec(vals(spmv(z, zeros({0}))), {0, 0, 0, 0}, 0, "4 x 0");
}

// ---- generated matrices: reference vs dense oracle, fast vs reference ----

struct Case {
  const char* name;
  sparse_gen::HostCsr m;
};

std::vector<Case> cases() {
  using namespace sparse_gen;
  return {{"empty", empty_rows(7, 5)},
          {"empty-rows+dense-row", mixed(37, 29, 3, 0.5, 11, 1)},
          {"diagonal", diagonal(33, 2)},
          {"banded", banded(41, 3, 3)},
          {"uniform", uniform(45, 61, 7, 4)},
          {"rmat", rmat(7, 6, 5)}};
}

double tol_of(DType dt) { return dt == DType::F64 ? 1e-12 : dt == DType::F32 ? 2e-5 : dt == DType::F16 ? 4e-3 : 3e-2; }

TEST_F(SparseRef, GeneratedAgainstDenseAndFast) {
  for (const Case& c : cases())
    for (DType idx : {DType::I32, DType::I64})
      for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
        SCOPED_TRACE(std::string(c.name) + " " + dtype_name(idx) + " " + dtype_name(dt));
        const CsrTensor a = sparse_gen::to_csr(c.m, idx, dt);
        const Tensor dense = a.to_dense();
        const double tol = tol_of(dt);
        const Tensor x = cast(rand_uniform({a.cols()}, 7, -1, 1), dt);
        // Column-major [cols, 5] (a transposed view) and a step-2 slice of a row-major one.
        const Tensor bt = cast(rand_uniform({5, a.cols()}, 8, -1, 1), dt).t();
        const Tensor bs = cast(rand_uniform({a.cols(), 10}, 9, -1, 1), dt).slice(1, 0, 10, 2);
        const double atol = tol * std::sqrt(double(std::max<int64_t>(1, a.stats().max_len)));
        expect_near_vec(vals(spmv(a, x)), vals(matmul(dense, x)), atol, "spmv vs dense");
        expect_near_vec(vals(spmm(a, bt)), vals(matmul(dense, bt)), atol, "spmm col-major vs dense");
        for (CpuMode m : {CpuMode::Fast}) {
          expect_near_vec(in_mode(m, [&] { return vals(spmv(a, x)); }), vals(spmv(a, x)), atol, "spmv fast");
          expect_near_vec(in_mode(m, [&] { return vals(spmm(a, bs)); }), vals(spmm(a, bs)), atol, "spmm fast strided");
          expect_near_vec(in_mode(m, [&] { return vals(spmm(a, bt)); }), vals(spmm(a, bt)), atol, "spmm fast col-major");
          expect_near_vec(in_mode(m, [&] { return vals(sparse_row_sum(a)); }), vals(sparse_row_sum(a)), atol, "row sum");
          expect_near_vec(in_mode(m, [&] { return vals(sparse_row_max(a)); }), vals(sparse_row_max(a)), 0, "row max");
          expect_near_vec(in_mode(m, [&] { return vals(sparse_softmax(a).values()); }), vals(sparse_softmax(a).values()),
                          tol, "softmax");
          const Tensor xs = cast(rand_uniform({a.rows(), 6}, 10, -1, 1), dt), ys = cast(rand_uniform({a.cols(), 6}, 11, -1, 1), dt).t();
          expect_near_vec(in_mode(m, [&] { return vals(sddmm(a, xs, ys).values()); }), vals(sddmm(a, xs, ys).values()),
                          tol * 3, "sddmm");
        }
        // Row sum = dense sum over the row; SDDMM = the product at the stored entries.
        expect_near_vec(vals(sparse_row_sum(a)), vals(sum(dense, {1})), atol, "row sum vs dense");
      }
}

TEST_F(SparseRef, NaNPropagates) {
  const CsrTensor a = small();
  // x[1] = NaN reaches only row 2 (the one entry in column 1).
  std::vector<double> y = vals(spmv(a, F({1, NAN, 1}, {3})));
  EXPECT_EQ(y[0], 3);
  EXPECT_EQ(y[1], 0);
  EXPECT_TRUE(std::isnan(y[2]));
  const CsrTensor n = a.with_values(F({NAN, 1, -INFINITY, -INFINITY}, {4}));
  for (CpuMode m : {CpuMode::Reference, CpuMode::Fast}) {
    const std::vector<double> mx = in_mode(m, [&] { return vals(sparse_row_max(n)); });
    EXPECT_TRUE(std::isnan(mx[0]));
    EXPECT_EQ(mx[2], -INFINITY);
    // Softmax: the NaN row and the all -inf row are NaN (dense softmax rules).
    for (double v : in_mode(m, [&] { return vals(sparse_softmax(n).values()); })) EXPECT_TRUE(std::isnan(v));
  }
}

TEST_F(SparseRef, FastPathRuns) {
  // The fast kernels are what the fast mode runs on f32 (not a silent reference fallback).
  const CsrTensor a = sparse_gen::to_csr(sparse_gen::uniform(300, 200, 9, 12), DType::I32);
  const Tensor x = rand_uniform({200}, 1);
  const uint64_t before = cpu_fast::fast_path_hits();
  in_mode(CpuMode::Fast, [&] { return spmv(a, x); });
  EXPECT_EQ(cpu_fast::fast_path_hits(), before + 1);
}

}  // namespace
}  // namespace wgt
