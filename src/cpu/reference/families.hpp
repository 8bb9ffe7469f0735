// Entry points of the reference kernel families (one .cpp per family in this folder).
#pragma once
#include "wgt/backend.hpp"

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
}  // namespace wgt::cpu_ref
