// Fast-path dispatcher: routes a call to its op family's fast kernel; every family returns
// false for calls outside its fast path and the fast backend then runs the reference kernel.
#include "cpu/fast/fast.hpp"

#include <atomic>

#include "cpu/fast/kernels.hpp"

namespace wgt::cpu_fast {

namespace {
std::atomic<uint64_t> g_hits{0};

bool dispatch(OpCall& call) {
  for (const Tensor& t : call.outputs)
    if (!t.defined() || !t.device().is_cpu()) return false;
  for (const Tensor& t : call.inputs)
    if (!t.defined() || !t.device().is_cpu()) return false;
  switch (call.kind) {
    case OpKind::Unary: return try_unary(call);
    case OpKind::Binary: return try_binary(call);
    case OpKind::Where: return try_where(call);
    case OpKind::Cast: return try_cast(call);
    case OpKind::Reduce: return try_reduce(call);
    case OpKind::MatMul: return try_matmul(call);
    case OpKind::Softmax: return try_softmax(call, false);
    case OpKind::LogSoftmax: return try_softmax(call, true);
    case OpKind::RMSNorm: return try_rms_norm(call);
    case OpKind::LayerNorm: return try_layer_norm(call);
    case OpKind::QMatMul: return try_qmatmul(call);
    case OpKind::QDequantize: return try_qdequantize(call);
    case OpKind::QGetRows: return try_qget_rows(call);
    case OpKind::SpMM: return try_spmm(call);
    case OpKind::SDDMM: return try_sddmm(call);
    case OpKind::SpRowReduce: return try_sp_row_reduce(call);
    case OpKind::SpSoftmax: return try_sp_softmax(call);
    case OpKind::Fft: return try_fft(call);
    case OpKind::Attention: return try_attention(call);
    case OpKind::Concat: return try_concat(call);
    default: return false;
  }
}
}  // namespace

bool try_execute(OpCall& call) {
  if (!dispatch(call)) return false;
  g_hits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t fast_path_hits() { return g_hits.load(std::memory_order_relaxed); }

}  // namespace wgt::cpu_fast
