// Reference sparse kernels (the oracle): row by row in double, every operand read through
// its strides; outputs are contiguous from their offset (a batch member's view); a batch of
// matrices member by member. Contracts of the calls: src/sparse/sparse_ops.cpp.
#include <algorithm>
#include <cmath>

#include "cpu/reference/families.hpp"
#include "cpu/reference/ref_common.hpp"
#include "sparse/sparse_batch.hpp"

namespace wgt::cpu_ref {

namespace {

// Element i of a 1-D operand (any stride).
int64_t int_at(const Tensor& t, int64_t i) { return load_int(base_of(t), t.dtype(), t.offset() + i * t.strides()[0]); }
double real_at(const Tensor& t, int64_t i) { return load_real(base_of(t), t.dtype(), t.offset() + i * t.strides()[0]); }
double real_at(const Tensor& t, int64_t i, int64_t j) {
  return load_real(base_of(t), t.dtype(), t.offset() + i * t.strides()[0] + j * t.strides()[1]);
}
int64_t rows_of(const OpCall& call) { return call.inputs[0].numel() - 1; }

}  // namespace

void run_spmm(OpCall& call) {
  if (sparse_detail::for_each_member(call, run_spmm)) return;
  const Tensor &ip = call.inputs[0], &ix = call.inputs[1], &v = call.inputs[2], &b = call.inputs[3];
  Tensor& out = call.outputs[0];
  const bool vec = b.dim() == 1;
  const int64_t n = vec ? 1 : b.size(1), rows = rows_of(call);
  uint8_t* ob = mut_base_of(out);
  std::vector<double> acc(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = int_at(ip, r); k < int_at(ip, r + 1); ++k) {
      const int64_t c = int_at(ix, k);
      const double a = real_at(v, k);
      for (int64_t j = 0; j < n; ++j) acc[j] += a * (vec ? real_at(b, c) : real_at(b, c, j));
    }
    for (int64_t j = 0; j < n; ++j) store_real(ob, out.dtype(), out.offset() + r * n + j, acc[j]);
  }
}

void run_sddmm(OpCall& call) {
  if (sparse_detail::for_each_member(call, run_sddmm)) return;
  const Tensor &ip = call.inputs[0], &ix = call.inputs[1], &x = call.inputs[2], &y = call.inputs[3];
  Tensor& out = call.outputs[0];
  const int64_t kdim = x.size(1), rows = rows_of(call);
  uint8_t* ob = mut_base_of(out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = int_at(ip, r); k < int_at(ip, r + 1); ++k) {
      const int64_t c = int_at(ix, k);
      double s = 0;
      for (int64_t t = 0; t < kdim; ++t) s += real_at(x, r, t) * real_at(y, t, c);
      store_real(ob, out.dtype(), out.offset() + k, s);
    }
}

void run_sp_add_dense(OpCall& call) {
  if (sparse_detail::for_each_member(call, run_sp_add_dense)) return;
  const Tensor &ip = call.inputs[0], &ix = call.inputs[1], &v = call.inputs[2], &d = call.inputs[3];
  Tensor& out = call.outputs[0];
  const int64_t rows = rows_of(call), cols = d.size(1);
  uint8_t* ob = mut_base_of(out);
  std::vector<double> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) row[c] = real_at(d, r, c);
    for (int64_t k = int_at(ip, r); k < int_at(ip, r + 1); ++k) row[int_at(ix, k)] += real_at(v, k);
    for (int64_t c = 0; c < cols; ++c) store_real(ob, out.dtype(), out.offset() + r * cols + c, row[c]);
  }
}

void run_sp_row_reduce(OpCall& call) {
  if (sparse_detail::for_each_member(call, run_sp_row_reduce)) return;
  const Tensor &ip = call.inputs[0], &v = call.inputs[1];
  Tensor& out = call.outputs[0];
  const bool is_max = call.attrs.reduce == ReduceOp::Max;
  uint8_t* ob = mut_base_of(out);
  for (int64_t r = 0; r < rows_of(call); ++r) {
    double acc = is_max ? -INFINITY : 0.0;
    for (int64_t k = int_at(ip, r); k < int_at(ip, r + 1); ++k) {
      const double e = real_at(v, k);
      acc = is_max ? (std::isnan(e) || std::isnan(acc) ? NAN : std::max(acc, e)) : acc + e;
    }
    store_real(ob, out.dtype(), out.offset() + r, acc);
  }
}

void run_sp_softmax(OpCall& call) {
  if (sparse_detail::for_each_member(call, run_sp_softmax)) return;
  const Tensor &ip = call.inputs[0], &v = call.inputs[1];
  Tensor& out = call.outputs[0];
  uint8_t* ob = mut_base_of(out);
  for (int64_t r = 0; r < rows_of(call); ++r) {
    const int64_t k0 = int_at(ip, r), k1 = int_at(ip, r + 1);
    // The dense softmax's rules per row (docs/semantics.md): the max is subtracted first; a
    // NaN or +inf entry, or all entries -inf, make the row NaN.
    double mx = -INFINITY;
    for (int64_t k = k0; k < k1; ++k) {
      const double e = real_at(v, k);
      mx = std::isnan(e) || std::isnan(mx) ? NAN : std::max(mx, e);
    }
    if (std::isinf(mx) && mx < 0) mx = 0;
    double s = 0;
    for (int64_t k = k0; k < k1; ++k) s += std::exp(real_at(v, k) - mx);
    for (int64_t k = k0; k < k1; ++k) store_real(ob, out.dtype(), out.offset() + k, std::exp(real_at(v, k) - mx) / s);
  }
}

}  // namespace wgt::cpu_ref
