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
void run_softmax(OpCall& call);   // Softmax, LogSoftmax
void run_norm(OpCall& call);      // RMSNorm, LayerNorm
void run_concat(OpCall& call);
void run_index_select(OpCall& call);
void run_gather(OpCall& call);
}  // namespace wgt::cpu_ref
