// Reference kernel dispatcher: the capability rules of the CPU (which dtypes each op kind
// computes) and the routing of an OpCall to its family's kernel.
#include "cpu/reference/reference.hpp"

#include "cpu/reference/families.hpp"

namespace wgt::cpu_ref {

namespace {

// Complex support is limited to ops with one obvious meaning (arithmetic, equality, sums,
// matmul, conversions); everything else says so instead of guessing.
Support complex_support(const OpCall& call) {
  auto no = [&](const char* what) {
    return Support::no(std::string(what) + " is not implemented for c64 on the CPU");
  };
  switch (call.kind) {
    case OpKind::Unary: {
      const UnaryOp u = call.attrs.unary;
      const bool ok = u == UnaryOp::Neg || u == UnaryOp::Conj || u == UnaryOp::Abs || u == UnaryOp::Real ||
                      u == UnaryOp::Imag || u == UnaryOp::Exp;
      return ok ? Support::yes() : no(unary_op_name(u));
    }
    case OpKind::Binary: {
      const BinaryOp b = call.attrs.binary;
      const bool ok = b == BinaryOp::Add || b == BinaryOp::Sub || b == BinaryOp::Mul || b == BinaryOp::Div ||
                      b == BinaryOp::Eq || b == BinaryOp::Ne;
      return ok ? Support::yes() : no(binary_op_name(b));
    }
    case OpKind::Reduce: {
      const ReduceOp r = call.attrs.reduce;
      return (r == ReduceOp::Sum || r == ReduceOp::Prod || r == ReduceOp::Mean) ? Support::yes() : no(reduce_op_name(r));
    }
    case OpKind::RandUniform:
    case OpKind::RandNormal:
    case OpKind::Arange:
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::RMSNorm:
    case OpKind::LayerNorm:
      return no(op_kind_name(call.kind));
    default:
      return Support::yes();  // data movement, cast, fill, where, matmul
  }
}

}  // namespace

Support supports(const OpCall& call) {
  // Placement is the runtime's business: it moves inputs to the host before execute().
  // Called before outputs are allocated: the input dtypes decide (casts convert anything).
  if (call.kind == OpKind::Cast) return Support::yes();
  for (const Tensor& t : call.inputs)
    if (t.defined() && is_complex(t.dtype())) return complex_support(call);
  return Support::yes();
}

void execute(OpCall& call) {
  switch (call.kind) {
    case OpKind::Unary: return run_unary(call);
    case OpKind::Binary: return run_binary(call);
    case OpKind::Where: return run_where(call);
    case OpKind::Cast: return run_cast(call);
    case OpKind::Copy: return run_copy(call);
    case OpKind::Fill:
    case OpKind::Arange:
    case OpKind::RandUniform:
    case OpKind::RandNormal: return run_creation(call);
    case OpKind::Reduce: return run_reduce(call);
    case OpKind::MatMul: return run_matmul(call);
    case OpKind::Softmax:
    case OpKind::LogSoftmax: return run_softmax(call);
    case OpKind::RMSNorm:
    case OpKind::LayerNorm: return run_norm(call);
    case OpKind::Concat: return run_concat(call);
    case OpKind::IndexSelect: return run_index_select(call);
    case OpKind::Gather: return run_gather(call);
    case OpKind::Rope: return run_rope(call);
    case OpKind::Attention: return run_attention(call);
    case OpKind::SiluMul: return run_silu_mul(call);
    case OpKind::KVAppend: return run_kv_append(call);
    case OpKind::QMatMul: return run_qmatmul(call);
    case OpKind::QDequantize: return run_qdequantize(call);
    case OpKind::QGetRows: return run_qget_rows(call);
    case OpKind::SpMM: return run_spmm(call);
    case OpKind::SDDMM: return run_sddmm(call);
    case OpKind::SpAddDense: return run_sp_add_dense(call);
    case OpKind::SpRowReduce: return run_sp_row_reduce(call);
    case OpKind::SpSoftmax: return run_sp_softmax(call);
    case OpKind::Fft: return run_fft(call);
  }
  throw_error(ErrorKind::Unsupported, call.name, std::string("op kind ") + op_kind_name(call.kind) + " has no reference kernel");
}

}  // namespace wgt::cpu_ref
