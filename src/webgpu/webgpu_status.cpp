// The device status word of the WebGPU backend (Context::status_flag, docs/semantics.md).
// A kernel cannot throw: one that meets bad data (an index out of range) writes what it can
// (zeros, staying in bounds) and sets its op's bit in a 4-byte storage buffer. The word is
// copied behind the data of the next read-back, or into the synchronize buffer, so checking it
// costs no host wait of its own; a set bit becomes wgt::Error{OutOfRange} naming the op, like
// the CPU's error for the same call, only raised at that later read or synchronize.
#include <cstring>

#include "webgpu/buffer_pool.hpp"
#include "webgpu/webgpu_backend.hpp"

namespace wgt::webgpu {

void WebGPUBackend::make_status() {
  // A pool of its own (limit 0: the buffer is released, not pooled, with the backend), so the
  // word neither counts in pool_stats() nor can be handed to a tensor. Dawn zero-fills it.
  status_pool_ = std::make_shared<BufferPool>(*dev_, domain_, 0);
  status_ = status_pool_->acquire(4);
}

api::Buffer WebGPUBackend::status_handle() const { return static_cast<const WebGPUBuffer&>(*status_).handle(); }

Context::StatusFlag WebGPUBackend::status_flag(const char* op) {
  size_t k = 0;
  while (k < status_ops_.size() && status_ops_[k] != op) ++k;
  if (k == status_ops_.size()) {
    if (k < 32) status_ops_.emplace_back(op);
    else k = 31;  // more than 32 distinct ops: the last bit is shared (the message names both)
  }
  status_armed_ = true;
  return {Arg{status_.get(), false}, 1u << k};
}

void WebGPUBackend::check_status(uint32_t word, const char* when) {
  status_armed_ = false;
  if (word == 0) return;
  // Cleared before the throw, in queue order ahead of any later work, so the error is
  // reported once.
  const uint32_t zero = 0;
  dev_->p().QueueWriteBuffer(dev_->queue(), status_handle(), 0, &zero, 4);
  std::string ops, first;
  for (size_t k = 0; k < status_ops_.size(); ++k)
    if (word & (1u << k)) {
      ops += (ops.empty() ? "" : ", ") + status_ops_[k];
      if (first.empty()) first = status_ops_[k];
    }
  if (first.empty()) first = ops = "a device kernel";  // not reachable: bits come from status_flag
  throw_error(ErrorKind::OutOfRange, first,
              "an index outside [0, size) reached the device kernel of " + ops +
                  " (negative indices are out of range too; the affected elements were written as zeros, NaN rows "
                  "for quantized get_rows). Reported at this " + std::string(when) +
                  ", the first host wait after the op");
}

}  // namespace wgt::webgpu
