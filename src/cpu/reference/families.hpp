// Entry points of the reference kernel families (one .cpp per family in this folder).
#pragma once
#include <vector>

#include "wgt/backend.hpp"
#include "wgt/quant.hpp"

namespace wgt::cpu_ref {
void run_unary(OpCall& call);
void run_binary(OpCall& call);
void run_where(OpCall& call);
void run_cast(OpCall& call);
void run_copy(OpCall& call);
void run_creation(OpCall& call);  // Fill, Arange, RandUniform, RandNormal
void run_reduce(OpCall& call);
void run_matmul(OpCall& call);
// The call of a MatMul with a prologue (attrs.prologue: RmsNorm or SiluMul, whose second
// operand is the last input) as a plain MatMul on the transformed first operand, which `run`
// (a CPU kernel of OpKind RMSNorm / SiluMul) writes into a new host tensor of its shape and
// dtype: the same values the separate op gives, so fused and unfused calls agree exactly.
OpCall split_matmul_prologue(const OpCall& call, void (*run)(OpCall&));
void run_softmax(OpCall& call);   // Softmax, LogSoftmax
void run_norm(OpCall& call);      // RMSNorm, LayerNorm
void run_concat(OpCall& call);
void run_index_select(OpCall& call);
void run_gather(OpCall& call);
// transformer (branch transformer), src/cpu/reference/nn.cpp
void run_rope(OpCall& call);
void run_attention(OpCall& call);
void run_silu_mul(OpCall& call);
void run_kv_append(OpCall& call);  // writes into inputs[0] in place
// quantized, src/cpu/reference/quant.cpp (the fast kernels share its front half)
void run_qmatmul(OpCall& call);
void run_qdequantize(OpCall& call);
void run_qget_rows(OpCall& call);
// sparse CSR, src/cpu/reference/sparse.cpp (contracts: src/sparse/sparse_ops.cpp)
void run_spmm(OpCall& call);
void run_sddmm(OpCall& call);
void run_sp_add_dense(OpCall& call);
void run_sp_row_reduce(OpCall& call);
void run_sp_softmax(OpCall& call);
// tensor algebra, src/cpu/reference/fft.cpp
void run_fft(OpCall& call);
QType call_qtype(const OpCall& call);  // attrs.qtype, checked
Tensor host_rows(const Tensor& t);     // t itself when contiguous, else a compacted host copy
std::vector<int64_t> qget_rows_ids(const OpCall& call);  // QGetRows' ids, range-checked (OutOfRange)
// QMatMul with `product` (quant::qmatmul_t_reference or _fast) and `prologue` (the CPU kernel
// of the RMSNorm / SiluMul prologue, split off as for MatMul); adds the addend.
using QProduct = void (*)(QType, const float*, int64_t, int64_t, const uint8_t*, size_t, int64_t, float*);
void run_qmatmul_with(OpCall& call, QProduct product, void (*prologue)(OpCall&));
}  // namespace wgt::cpu_ref
