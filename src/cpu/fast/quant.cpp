// Fast kernels of the quantized ops: the blocked, threaded product (quant::qmatmul_t_fast)
// and row decoding spread over the thread pool. Validation and the prologue split are the
// reference kernels' (src/cpu/reference/quant.cpp), so both modes accept the same calls.
#include "cpu/fast/kernels.hpp"
#include "cpu/fast/parallel.hpp"
#include "cpu/reference/families.hpp"
#include "quant/kernels.hpp"

namespace wgt::cpu_fast {

bool try_qmatmul(OpCall& call) {
  cpu_ref::run_qmatmul_with(call, quant::qmatmul_t_fast, [](OpCall& c) {
    if (c.kind == OpKind::SiluMul) cpu_ref::run_silu_mul(c);
    else if (!try_rms_norm(c)) cpu_ref::run_norm(c);
  });
  return true;
}

bool try_qdequantize(OpCall& call) {
  const QType t = cpu_ref::call_qtype(call);
  const Tensor w = cpu_ref::host_rows(call.inputs[0]);
  Tensor& y = call.outputs[0];
  const int64_t cols = y.size(1);
  const size_t rb = static_cast<size_t>(w.size(1));
  const uint8_t* src = w.data<uint8_t>();
  float* dst = y.data<float>();
  parallel_for(0, y.size(0), 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) quant::dequantize_row(t, src + static_cast<size_t>(r) * rb, dst + r * cols, cols);
  });
  return true;
}

bool try_qget_rows(OpCall& call) {
  const QType t = cpu_ref::call_qtype(call);
  const std::vector<int64_t> ids = cpu_ref::qget_rows_ids(call);
  const Tensor table = cpu_ref::host_rows(call.inputs[0]);
  Tensor& y = call.outputs[0];
  const int64_t cols = y.size(1);
  const size_t rb = static_cast<size_t>(table.size(1));
  const uint8_t* src = table.data<uint8_t>();
  float* dst = y.data<float>();
  parallel_for(0, static_cast<int64_t>(ids.size()), 16, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) quant::dequantize_row(t, src + static_cast<size_t>(ids[i]) * rb, dst + i * cols, cols);
  });
  return true;
}

}  // namespace wgt::cpu_fast
