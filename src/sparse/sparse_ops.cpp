// Front-ends of the sparse ops: validate, pick the schedule from the matrix's cached row
// statistics, and hand an OpCall to the runtime (placement, fallback, budget as for every op).
// Call contracts (inputs in this order; a CSR operand is {indptr, indices, values}):
//   SpMM        {indptr, indices, values, B [cols] | [cols, n], bin_rows, row_blocks};
//               out [rows] | [rows, n]. attrs.sp_cols, sp_schedule, sp_lanes, sp_bin_start,
//               sp_blocks, sp_split_rows (the plan of wgt::SparsePlan); bin_rows is the matrix's bin list
//               (i32), read only by the Binned schedule, row_blocks its row blocks (i32,
//               sparse/row_blocks.hpp), read only by the Adaptive one.
//   SDDMM       {indptr, indices, X [rows, k], Y [k, cols]}; out values [nnz] of X's dtype.
//   SpAddDense  {indptr, indices, values, D [rows, cols]}; out [rows, cols] of D's dtype.
//   SpRowReduce {indptr, values}; attrs.reduce Sum | Max; out [rows].
//   SpSoftmax   {indptr, values}; out [nnz].
// Dense operands may be any strided view. The values' dtype and the dense dtype must agree.
// A batch of matrices (values [batch, nnz]) adds a leading batch dimension to values, the
// dense operands (SDDMM: X and Y) and the outputs; the backends run each member
// (sparse/sparse_batch.hpp).
#include "ops/op_common.hpp"
#include "wgt/ops.hpp"
#include "wgt/sparse.hpp"

namespace wgt {
using namespace ops_detail;

namespace {

void require_csr(const CsrTensor& a, const char* op) {
  if (!a.defined()) throw_error(ErrorKind::InvalidArgument, op, "the sparse operand is an undefined CsrTensor");
}

void require_dense(const Tensor& t, const CsrTensor& a, const char* op, const char* what) {
  require_defined(t, op, what);
  if (t.device() != a.device())
    throw_error(ErrorKind::InvalidArgument, op,
                std::string(what) + " lives on " + t.device().str() + ", the sparse matrix on " + a.device().str() +
                    "; move one with .to(device)");
  if (t.dtype() != a.dtype())
    throw_error(ErrorKind::DTypeMismatch, op,
                std::string(what) + " has dtype " + dt(t.dtype()) + ", the sparse values " + dt(a.dtype()) +
                    "; cast() one of them");
}

void set_plan(OpCall& call, const CsrTensor& a, int64_t n) {
  const SparsePlan p = choose_schedule(a, n);
  call.attrs.sp_cols = a.cols();
  call.attrs.sp_schedule = static_cast<uint8_t>(p.schedule);
  call.attrs.sp_lanes = p.lanes;
  for (int b = 0; b <= CsrRowStats::kBins; ++b) call.attrs.sp_bin_start[b] = a.stats().bin_start[b];
  call.attrs.sp_blocks = a.stats().blocks;
  call.attrs.sp_split_rows = a.stats().split_rows;
}

// The leading batch dimension a batched operand must have (none for a single matrix).
std::string batch_prefix(const CsrTensor& a) { return a.batched() ? std::to_string(a.batch()) + ", " : std::string(); }

void require_batch(const Tensor& t, const CsrTensor& a, const char* op, const char* what) {
  if (a.batched() && t.size(0) != a.batch())
    throw_error(ErrorKind::ShapeMismatch, op,
                std::string(what) + " has " + std::to_string(t.size(0)) + " members, the batch of matrices " +
                    std::to_string(a.batch()));
}

Shape with_batch(const CsrTensor& a, Shape s) {
  if (a.batched()) s.insert(s.begin(), a.batch());
  return s;
}

double members(const CsrTensor& a) { return a.batched() ? static_cast<double>(a.batch()) : 1.0; }

Tensor spmm_impl(const CsrTensor& a, const Tensor& b, const char* op) {
  require_csr(a, op);
  require_dense(b, a, op, "the dense operand");
  const int bd = a.batched() ? 1 : 0;
  const bool vec = b.dim() == 1 + bd;
  if (b.dim() != 1 + bd && b.dim() != 2 + bd)
    throw_error(ErrorKind::RankMismatch, op,
                "the dense operand must be [" + batch_prefix(a) + "cols] or [" + batch_prefix(a) + "cols, n], got " +
                    b.str());
  require_batch(b, a, op, "the dense operand");
  if (b.size(bd) != a.cols())
    throw_error(ErrorKind::ShapeMismatch, op,
                "the matrix has " + std::to_string(a.cols()) + " columns, the dense operand " + std::to_string(b.size(bd)) +
                    " rows");
  const int64_t n = vec ? 1 : b.size(bd + 1);
  // A matrix without bins (2^31 rows or more) is never given the Binned schedule, nor one
  // without row blocks the Adaptive one; indptr then stands in for the unused operand.
  Tensor bins = a.bin_rows().defined() ? a.bin_rows() : a.indptr();
  Tensor blocks = a.row_blocks().defined() ? a.row_blocks() : a.indptr();
  OpCall call{OpKind::SpMM, op, {a.indptr(), a.indices(), a.values(), b, bins, blocks}, {}, {}};
  set_plan(call, a, n);
  call.work = members(a) * (2.0 * static_cast<double>(a.nnz()) * static_cast<double>(n) + static_cast<double>(a.rows() * n));
  const Shape out = with_batch(a, vec ? Shape{a.rows()} : Shape{a.rows(), n});
  return Runtime::get().run1(call, {out, a.dtype()}, a.device());
}

Tensor row_reduce(const CsrTensor& a, ReduceOp r, const char* op) {
  require_csr(a, op);
  OpCall call{OpKind::SpRowReduce, op, {a.indptr(), a.values()}, {}, {}};
  call.attrs.reduce = r;
  call.attrs.sp_cols = a.cols();
  call.work = members(a) * static_cast<double>(a.nnz() + a.rows());
  return Runtime::get().run1(call, {with_batch(a, {a.rows()}), a.dtype()}, a.device());
}

}  // namespace

Tensor spmv(const CsrTensor& a, const Tensor& x) {
  require_defined(x, "spmv", "x");
  require_csr(a, "spmv");
  if (x.dim() != 1 + (a.batched() ? 1 : 0))
    throw_error(ErrorKind::RankMismatch, "spmv", "x must be [" + batch_prefix(a) + "cols], got " + x.str() + "; use spmm");
  return spmm_impl(a, x, "spmv");
}

Tensor spmm(const CsrTensor& a, const Tensor& b) {
  require_defined(b, "spmm", "b");
  require_csr(a, "spmm");
  if (b.dim() != 2 + (a.batched() ? 1 : 0))
    throw_error(ErrorKind::RankMismatch, "spmm", "b must be [" + batch_prefix(a) + "cols, n], got " + b.str() + "; use spmv");
  return spmm_impl(a, b, "spmm");
}

CsrTensor sddmm(const CsrTensor& pattern, const Tensor& x, const Tensor& y) {
  const char* op = "sddmm";
  require_csr(pattern, op);
  require_defined(x, op, "x");
  require_defined(y, op, "y");
  Device d = common_device({&x, &y}, op);
  if (d != pattern.device())
    throw_error(ErrorKind::InvalidArgument, op, "x and y live on " + d.str() + ", the pattern on " + pattern.device().str());
  require_floating(x, op);
  require_same_dtype(x, y, op, "y");
  // x [rows, k] and y [k, cols], or a batch of both ([batch, rows, k], [batch, k, cols]).
  if ((x.dim() != 2 && x.dim() != 3) || y.dim() != x.dim())
    throw_error(ErrorKind::RankMismatch, op,
                "x [rows, k] and y [k, cols] must be 2-D (3-D with a leading batch), got " + x.str() + " and " + y.str());
  const int bd = x.dim() - 2;
  if (bd && x.size(0) != y.size(0))
    throw_error(ErrorKind::ShapeMismatch, op,
                "x has " + std::to_string(x.size(0)) + " members, y " + std::to_string(y.size(0)));
  if (x.size(bd) != pattern.rows() || y.size(bd + 1) != pattern.cols() || x.size(bd + 1) != y.size(bd))
    throw_error(ErrorKind::ShapeMismatch, op,
                "x " + shape_str(x.shape()) + " @ y " + shape_str(y.shape()) + " does not give the pattern's shape " +
                    shape_str(pattern.shape()));
  OpCall call{OpKind::SDDMM, op, {pattern.indptr(), pattern.indices(), x, y}, {}, {}};
  call.attrs.sp_cols = pattern.cols();
  const int64_t nb = bd ? x.size(0) : 1;
  call.work = static_cast<double>(nb) * 2.0 * static_cast<double>(pattern.nnz()) * static_cast<double>(x.size(bd + 1));
  const Shape out = bd ? Shape{nb, pattern.nnz()} : Shape{pattern.nnz()};
  if (bd && nb == 0) throw_error(ErrorKind::InvalidArgument, op, "a batch of CSR matrices needs at least one member");
  Tensor v = Runtime::get().run1(call, {out, x.dtype()}, d);
  return pattern.with_values(v);
}

Tensor add(const Tensor& dense, const CsrTensor& a) {
  const char* op = "sparse_add_dense";
  require_csr(a, op);
  require_dense(dense, a, op, "the dense operand");
  if (dense.shape() != with_batch(a, a.shape()))
    throw_error(ErrorKind::ShapeMismatch, op,
                "the dense operand has shape " + shape_str(dense.shape()) + ", the sparse one " +
                    shape_str(with_batch(a, a.shape())));
  OpCall call{OpKind::SpAddDense, op, {a.indptr(), a.indices(), a.values(), dense}, {}, {}};
  call.attrs.sp_cols = a.cols();
  call.work = static_cast<double>(dense.numel()) + members(a) * static_cast<double>(a.nnz());
  return Runtime::get().run1(call, {dense.shape(), dense.dtype()}, a.device());
}

CsrTensor scale(const CsrTensor& a, double s) {
  require_csr(a, "sparse scale");
  // The values are an ordinary tensor: the dense multiply (and its placement) applies.
  return a.with_values(mul(a.values(), s));
}

Tensor sparse_row_sum(const CsrTensor& a) { return row_reduce(a, ReduceOp::Sum, "sparse_row_sum"); }
Tensor sparse_row_max(const CsrTensor& a) { return row_reduce(a, ReduceOp::Max, "sparse_row_max"); }

CsrTensor sparse_softmax(const CsrTensor& a) {
  const char* op = "sparse_softmax";
  require_csr(a, op);
  OpCall call{OpKind::SpSoftmax, op, {a.indptr(), a.values()}, {}, {}};
  call.attrs.sp_cols = a.cols();
  call.work = members(a) * 4.0 * static_cast<double>(a.nnz());
  return a.with_values(Runtime::get().run1(call, {with_batch(a, {a.nnz()}), a.dtype()}, a.device()));
}

}  // namespace wgt
