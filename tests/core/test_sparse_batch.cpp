// Batches of CSR matrices sharing one pattern (values [batch, nnz]) on the CPU: every op and
// conversion of a batch equals the op on each member (CsrTensor::member) in the reference and
// the fast mode, with strided dense operands, both index widths and several dtypes; the typed
// errors of batch shapes.
#include <cmath>

#include "core/ref_test_util.hpp"
#include "sparse/generate.hpp"
#include "wgt/sparse.hpp"

namespace wgt {
namespace {

using test::F;
using test::I64;
using test::vals;
using test::in_mode;
using test::expect_near_vec;

class SparseBatch : public test::RefTest {};

// A batch of `n` members on the pattern of `h`, each with its own random values.
CsrTensor batch_of(const sparse_gen::HostCsr& h, int64_t n, DType idx, DType dt) {
  const CsrTensor one = sparse_gen::to_csr(h, idx, dt);
  return one.with_values(cast(rand_uniform({n, one.nnz()}, 31, -2, 2), dt));
}

// vals(batched[b]) for each member b, concatenated: what the batched op must return.
template <typename Fn>
std::vector<double> per_member(int64_t n, Fn&& f) {
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b) {
    const std::vector<double> v = vals(f(b));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

TEST_F(SparseBatch, OpsAreTheMembersOps) {
  using namespace sparse_gen;
  const std::pair<const char*, HostCsr> mats[] = {
      {"empty-rows+dense-row", mixed(23, 19, 3, 0.5, 7, 1)}, {"diagonal", diagonal(17, 2)}, {"rmat", rmat(6, 5, 5)}};
  for (const auto& [name, h] : mats)
    for (const auto& [idx, dt] : {std::pair{DType::I32, DType::F32}, {DType::I64, DType::F64}, {DType::I32, DType::F16}})
      for (CpuMode mode : {CpuMode::Reference, CpuMode::Fast}) {
        SCOPED_TRACE(std::string(name) + " " + dtype_name(idx) + " " + dtype_name(dt) +
                     (mode == CpuMode::Fast ? " fast" : " reference"));
        const int64_t n = 3;
        const CsrTensor a = batch_of(h, n, idx, dt);
        ASSERT_EQ(a.batch(), n);
        const int64_t r = a.rows(), c = a.cols();
        const Tensor x = cast(rand_uniform({n, c}, 1, -1, 1), dt);
        // [n, cols, 4] as a view: a slice of every other column of [n, cols, 8].
        const Tensor b = cast(rand_uniform({n, c, 8}, 2, -1, 1), dt).slice(2, 0, 8, 2);
        const Tensor xs = cast(rand_uniform({n, r, 5}, 3, -1, 1), dt);
        const Tensor ys = cast(rand_uniform({n, c, 5}, 4, -1, 1), dt).transpose(1, 2);
        const Tensor d = cast(rand_uniform({n, r, c}, 5, -1, 1), dt);
        in_mode(mode, [&] {
          expect_near_vec(vals(spmv(a, x)), per_member(n, [&](int64_t i) { return spmv(a.member(i), x.select(0, i)); }), 0,
                          "spmv");
          expect_near_vec(vals(spmm(a, b)), per_member(n, [&](int64_t i) { return spmm(a.member(i), b.select(0, i)); }), 0,
                          "spmm");
          expect_near_vec(vals(sddmm(a, xs, ys).values()), per_member(n, [&](int64_t i) {
                            return sddmm(a.member(i), xs.select(0, i), ys.select(0, i)).values();
                          }), 0, "sddmm");
          expect_near_vec(vals(add(d, a)), per_member(n, [&](int64_t i) { return add(d.select(0, i), a.member(i)); }), 0,
                          "add");
          expect_near_vec(vals(sparse_row_sum(a)), per_member(n, [&](int64_t i) { return sparse_row_sum(a.member(i)); }), 0,
                          "row sum");
          expect_near_vec(vals(sparse_row_max(a)), per_member(n, [&](int64_t i) { return sparse_row_max(a.member(i)); }), 0,
                          "row max");
          expect_near_vec(vals(sparse_softmax(a).values()),
                          per_member(n, [&](int64_t i) { return sparse_softmax(a.member(i)).values(); }), 0, "softmax");
          expect_near_vec(vals(scale(a, -1.5).values()),
                          per_member(n, [&](int64_t i) { return scale(a.member(i), -1.5).values(); }), 0, "scale");
          return 0;
        });
        // Shapes carry the batch.
        EXPECT_EQ(spmv(a, x).shape(), (Shape{n, r}));
        EXPECT_EQ(spmm(a, b).shape(), (Shape{n, r, 4}));
        EXPECT_EQ(sparse_row_sum(a).shape(), (Shape{n, r}));
        EXPECT_EQ(sddmm(a, xs, ys).batch(), n);
      }
}

TEST_F(SparseBatch, Conversions) {
  const CsrTensor a = batch_of(sparse_gen::mixed(13, 11, 3, 0.3, 4, 2), 2, DType::I64, DType::F32);
  EXPECT_EQ(a.to_dense().shape(), (Shape{2, 13, 11}));
  expect_near_vec(vals(a.to_dense()), per_member(2, [&](int64_t i) { return a.member(i).to_dense(); }), 0, "to_dense");
  const CsrTensor t = a.transpose();
  ASSERT_EQ(t.batch(), 2);
  expect_near_vec(vals(t.to_dense()), per_member(2, [&](int64_t i) { return a.member(i).to_dense().t(); }), 0,
                  "transpose");
  const Tensor rows = I64({4, 0, 4, 12}, {4});
  const CsrTensor s = index_select_rows(a, rows);
  ASSERT_EQ(s.batch(), 2);
  expect_near_vec(vals(s.to_dense()),
                  per_member(2, [&](int64_t i) { return index_select_rows(a.member(i), rows).to_dense(); }), 0,
                  "index_select_rows");
  // Duplicates summed per member.
  CsrOptions allow;
  allow.duplicates = Duplicates::Allow;
  const CsrTensor dup = CsrTensor::from_parts(I64({0, 3, 3}, {3}), I64({1, 0, 1}, {3}),
                                              F({1, 2, 3, 10, 20, 30}, {2, 3}), {2, 2}, allow);
  const CsrTensor co = dup.coalesce();
  EXPECT_EQ(co.nnz(), 2);
  expect_near_vec(vals(co.values()), {2, 4, 20, 40}, 0, "coalesce");
  EXPECT_NE(a.str().find("batch 2"), std::string::npos) << a.str();
}

TEST_F(SparseBatch, Errors) {
  const Tensor ip = I64({0, 1, 2}, {3}), ix = I64({0, 1}, {2});
  EXPECT_WGT_ERROR(CsrTensor::from_parts(ip, ix, Tensor::empty({0, 2}, DType::F32), {2, 2}), InvalidArgument, "CsrTensor");
  EXPECT_WGT_ERROR(CsrTensor::from_parts(ip, ix, Tensor::empty({2, 3}, DType::F32), {2, 2}), ShapeMismatch, "CsrTensor");
  EXPECT_WGT_ERROR(CsrTensor::from_parts(ip, ix, Tensor::empty({1, 1, 2}, DType::F32), {2, 2}), RankMismatch, "CsrTensor");
  const CsrTensor a = CsrTensor::from_parts(ip, ix, F({1, 2, 3, 4, 5, 6}, {3, 2}), {2, 2});
  EXPECT_WGT_ERROR(a.member(3), OutOfRange, "member");
  EXPECT_WGT_ERROR(a.member(0).member(0), InvalidArgument, "member");
  EXPECT_WGT_ERROR(spmv(a, F({1, 2}, {2})), RankMismatch, "spmv");
  EXPECT_WGT_ERROR(spmv(a, F({1, 2, 3, 4}, {2, 2})), ShapeMismatch, "spmv");
  EXPECT_WGT_ERROR(spmm(a, F({1, 2, 3, 4}, {2, 2})), RankMismatch, "spmm");
  EXPECT_WGT_ERROR(add(F({1, 2, 3, 4}, {2, 2}), a), ShapeMismatch, "sparse_add_dense");
  EXPECT_WGT_ERROR(sddmm(a, Tensor::empty({3, 2, 1}, DType::F32), Tensor::empty({1, 2}, DType::F32)), RankMismatch, "sddmm");
  EXPECT_WGT_ERROR(sddmm(a, Tensor::empty({3, 2, 1}, DType::F32), Tensor::empty({2, 1, 2}, DType::F32)), ShapeMismatch,
                   "sddmm");
  EXPECT_WGT_ERROR(a.with_values(F({1, 2, 3}, {1, 3})), ShapeMismatch, "with_values");
}

}  // namespace
}  // namespace wgt
