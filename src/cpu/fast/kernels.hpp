// Internal interface of the fast CPU kernels: one entry per op family, each returning false
// when the call is outside its fast path (the reference kernel then runs), plus the strided
// iteration plan the elementwise families share.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt::cpu_fast {

bool try_unary(OpCall& call);
bool try_binary(OpCall& call);
bool try_where(OpCall& call);
bool try_cast(OpCall& call);
bool try_reduce(OpCall& call);
bool try_softmax(OpCall& call, bool log);
bool try_rms_norm(OpCall& call);
bool try_layer_norm(OpCall& call);
bool try_matmul(OpCall& call);
bool try_qmatmul(OpCall& call);      // src/cpu/fast/quant.cpp
bool try_qdequantize(OpCall& call);
bool try_qget_rows(OpCall& call);
bool try_spmm(OpCall& call);         // src/cpu/fast/sparse.cpp
bool try_sddmm(OpCall& call);
bool try_sp_row_reduce(OpCall& call);
bool try_sp_softmax(OpCall& call);
bool try_fft(OpCall& call);          // src/cpu/fast/fft.cpp (FFTW3)
bool try_attention(OpCall& call);    // src/cpu/fast/attention.cpp
bool try_concat(OpCall& call);       // src/cpu/fast/concat.cpp

// Walks a contiguous output of shape `out_shape` together with operands broadcast to it.
// Dims are coalesced where every operand allows it, so a fully contiguous call becomes one
// row of numel elements. The plan is "fast" only when every operand's innermost stride is
// 0 (broadcast scalar per row) or 1 (contiguous row).
struct ElementPlan {
  static constexpr int kMaxOperands = 3;
  int noperands = 0;
  std::vector<int64_t> outer_shape;  // coalesced dims except the innermost
  std::vector<int64_t> outer_strides[kMaxOperands];
  int64_t inner = 1;                 // innermost (coalesced) extent
  int64_t inner_stride[kMaxOperands] = {0, 0, 0};
  int64_t base_offset[kMaxOperands] = {0, 0, 0};
  int64_t numel = 0;
  // Element offsets of row `row` (row-major index over outer_shape) for each operand.
  void row_offsets(int64_t row, int64_t* offs) const;
};

// Builds the plan; returns false when an operand cannot be broadcast to out_shape, the rank
// is too high, or an innermost stride is not 0/1.
bool make_element_plan(const Shape& out_shape, const std::vector<const Tensor*>& operands, ElementPlan& plan);

// Runs body(row_first_col_offsets..., col_begin, col_end, out_flat_begin) over the plan in
// parallel: body(offs, c0, c1, flat) where offs[k] is operand k's element offset of column c0.
template <typename Body>
void for_each_segment(const ElementPlan& plan, int64_t grain, Body&& body);

}  // namespace wgt::cpu_fast

#include "cpu/fast/parallel.hpp"

namespace wgt::cpu_fast {
template <typename Body>
void for_each_segment(const ElementPlan& plan, int64_t grain, Body&& body) {
  const int64_t inner = plan.inner;
  if (plan.numel == 0 || inner == 0) return;
  parallel_for(0, plan.numel, grain, [&](int64_t b, int64_t e) {
    int64_t row = b / inner, col = b % inner;
    int64_t offs[ElementPlan::kMaxOperands];
    while (b < e) {
      plan.row_offsets(row, offs);
      const int64_t c1 = std::min(inner, col + (e - b));
      for (int k = 0; k < plan.noperands; ++k) offs[k] += col * plan.inner_stride[k];
      body(offs, col, c1, b);
      b += c1 - col;
      ++row;
      col = 0;
    }
  });
}
}  // namespace wgt::cpu_fast
