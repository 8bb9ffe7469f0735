// Reference kernels of the quantized ops (OpKind QMatMul, QDequantize, QGetRows; contracts in
// wgt/backend.hpp): every weight row is decoded to f32 by its format's row decoder, and the
// product accumulates in double (quant::qmatmul_t_reference). They run whenever the runtime
// places a quantized op on the CPU (cpu-only, below the load threshold, fallback), so the
// quantized ops follow the policy like every other op.
#include <cstring>

#include "cpu/reference/families.hpp"
#include "quant/kernels.hpp"

namespace wgt::cpu_ref {

QType call_qtype(const OpCall& call) {
  if (call.attrs.qtype >= kNumQTypes)
    throw_error(ErrorKind::InvalidArgument, call.name, "invalid qtype tag " + std::to_string(call.attrs.qtype));
  return static_cast<QType>(call.attrs.qtype);
}

Tensor host_rows(const Tensor& t) {
  if (t.is_contiguous()) return t;
  // Compacted by hand, not with contiguous(): that is an op, and this runs inside one.
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  t.copy_to_host(out.data_ptr(), out.nbytes());
  return out;
}

std::vector<int64_t> qget_rows_ids(const OpCall& call) {
  const Tensor ids = host_rows(call.inputs[1]);
  const int64_t rows = call.inputs[0].size(0), n = ids.numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[i] = ids.dtype() == DType::I32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i];
    if (out[i] < 0 || out[i] >= rows)
      throw_error(ErrorKind::OutOfRange, call.name,
                  "id " + std::to_string(out[i]) + " at position " + std::to_string(i) + " is outside [0, " +
                      std::to_string(rows) + ")");
  }
  return out;
}

void run_qmatmul_with(OpCall& call, QProduct product, void (*prologue)(OpCall&)) {
  if (call.attrs.prologue != OpAttrs::Prologue::None) {
    OpCall inner = split_matmul_prologue(call, prologue);
    return run_qmatmul_with(inner, product, prologue);
  }
  const QType t = call_qtype(call);
  const Tensor x = host_rows(call.inputs[0]);  // f32 [M, K]
  const Tensor w = host_rows(call.inputs[1]);  // u8 [N * row_bytes]
  Tensor& y = call.outputs[0];                 // f32 [M, N]
  const int64_t M = y.size(0), N = y.size(1), K = x.size(1);
  const size_t rb = qtype_row_bytes(t, K, call.name.c_str());
  if (w.nbytes() != rb * static_cast<size_t>(N))
    throw_error(ErrorKind::ShapeMismatch, call.name,
                "packed weight of " + std::to_string(w.nbytes()) + " bytes is not " + std::to_string(N) + " rows of " +
                    std::to_string(rb) + " bytes");
  if (M == 0 || N == 0) return;
  float* yp = y.data<float>();
  if (K == 0) std::memset(yp, 0, y.nbytes());  // empty reduction
  else product(t, x.data<float>(), M, K, w.data<uint8_t>(), rb, N, yp);
  if (call.attrs.has_bias) {  // the addend, f32 [M, N]: y += c
    const Tensor c = host_rows(call.inputs[2]);
    const float* cp = c.data<float>();
    for (int64_t i = 0; i < M * N; ++i) yp[i] += cp[i];
  }
}

void run_qmatmul(OpCall& call) {
  run_qmatmul_with(call, quant::qmatmul_t_reference, [](OpCall& c) {
    c.kind == OpKind::RMSNorm ? run_norm(c) : run_silu_mul(c);
  });
}

void run_qdequantize(OpCall& call) {
  const QType t = call_qtype(call);
  const Tensor w = host_rows(call.inputs[0]);  // u8 [rows, row_bytes]
  Tensor& y = call.outputs[0];                 // f32 [rows, cols]
  const int64_t rows = y.size(0), cols = y.size(1);
  const size_t rb = static_cast<size_t>(w.size(1));
  for (int64_t r = 0; r < rows; ++r)
    quant::dequantize_row(t, w.data<uint8_t>() + static_cast<size_t>(r) * rb, y.data<float>() + r * cols, cols);
}

void run_qget_rows(OpCall& call) {
  const QType t = call_qtype(call);
  const std::vector<int64_t> ids = qget_rows_ids(call);
  const Tensor table = host_rows(call.inputs[0]);  // u8 [rows, row_bytes]
  Tensor& y = call.outputs[0];                     // f32 [n, cols]
  const int64_t cols = y.size(1);
  const size_t rb = static_cast<size_t>(table.size(1));
  for (size_t i = 0; i < ids.size(); ++i)
    quant::dequantize_row(t, table.data<uint8_t>() + static_cast<size_t>(ids[i]) * rb,
                          y.data<float>() + static_cast<int64_t>(i) * cols, cols);
}

}  // namespace wgt::cpu_ref
