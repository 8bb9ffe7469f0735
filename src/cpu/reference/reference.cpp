// Reference kernel dispatcher.
#include "cpu/reference/reference.hpp"

#include <cstring>

#include "core/strided.hpp"

namespace wgt::cpu_ref {

Support supports(const OpCall& call) {
  switch (call.kind) {
    case OpKind::Copy: return Support::yes();
    default: return Support::no(std::string("op kind ") + op_kind_name(call.kind) + " not implemented on CPU yet");
  }
}

void execute(OpCall& call) {
  switch (call.kind) {
    case OpKind::Copy: {
      const Tensor& x = call.inputs[0];
      detail::strided_copy_bytes(x.storage()->host_data(), x.shape(), x.strides(), x.offset(), dtype_size(x.dtype()),
                                 static_cast<uint8_t*>(call.outputs[0].data_ptr()));
      return;
    }
    default:
      throw_error(ErrorKind::Unsupported, call.name, "not implemented on cpu-reference");
  }
}

}  // namespace wgt::cpu_ref
