// Names of op enums, used in errors, stats and traces.
#include "wgt/backend.hpp"

namespace wgt {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Unary: return "unary";
    case OpKind::Binary: return "binary";
    case OpKind::Where: return "where";
    case OpKind::Cast: return "cast";
    case OpKind::Fill: return "fill";
    case OpKind::Arange: return "arange";
    case OpKind::RandUniform: return "rand_uniform";
    case OpKind::RandNormal: return "rand_normal";
    case OpKind::Reduce: return "reduce";
    case OpKind::MatMul: return "matmul";
    case OpKind::Softmax: return "softmax";
    case OpKind::LogSoftmax: return "log_softmax";
    case OpKind::RMSNorm: return "rms_norm";
    case OpKind::LayerNorm: return "layer_norm";
    case OpKind::Concat: return "concat";
    case OpKind::Copy: return "copy";
    case OpKind::IndexSelect: return "index_select";
    case OpKind::Gather: return "gather";
    case OpKind::Rope: return "rope";
    case OpKind::Attention: return "attention";
    case OpKind::SiluMul: return "silu_mul";
    case OpKind::KVAppend: return "kv_append";
    case OpKind::QMatMul: return "qmatmul";
    case OpKind::QDequantize: return "qdequantize";
    case OpKind::QGetRows: return "qget_rows";
    case OpKind::SpMM: return "spmm";
    case OpKind::SDDMM: return "sddmm";
    case OpKind::SpAddDense: return "sparse_add_dense";
    case OpKind::SpRowReduce: return "sparse_row_reduce";
    case OpKind::SpSoftmax: return "sparse_softmax";
    case OpKind::Fft: return "fft";
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  static const char* names[] = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos",
                                "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "conj", "real", "imag"};
  return names[static_cast<int>(op)];
}
const char* binary_op_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum",
                                "eq", "ne", "lt", "le", "gt", "ge"};
  return names[static_cast<int>(op)];
}
const char* reduce_op_name(ReduceOp op) {
  static const char* names[] = {"sum", "mean", "max", "min", "prod", "argmax"};
  return names[static_cast<int>(op)];
}

}  // namespace wgt
