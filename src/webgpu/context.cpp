// Non-virtual helpers of webgpu::Context: variant keys, argument binding checks, grids.
#include "webgpu/context.hpp"

#include <algorithm>

#include "wgt/error.hpp"

namespace wgt::webgpu {

std::string ShaderVariant::key() const {
  // Runs for every dispatch (pipeline-cache lookup): sort pointers, not string pairs, and
  // append in place instead of building temporaries.
  using Define = std::pair<std::string, std::string>;
  const Define* inline_sorted[16];
  std::vector<const Define*> heap_sorted(defines.size() > 16 ? defines.size() : 0);
  const Define** sorted = defines.size() > 16 ? heap_sorted.data() : inline_sorted;
  size_t len = shader.size();
  for (size_t i = 0; i < defines.size(); ++i) {
    sorted[i] = &defines[i];
    len += 2 + defines[i].first.size() + defines[i].second.size();
  }
  std::sort(sorted, sorted + defines.size(), [](const Define* a, const Define* b) { return *a < *b; });
  std::string k;
  k.reserve(len);
  k += shader;
  for (size_t i = 0; i < defines.size(); ++i) {
    k += '|';
    k += sorted[i]->first;
    k += '=';
    k += sorted[i]->second;
  }
  return k;
}

Arg Context::arg(const Tensor& t, bool read_only) const {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, "webgpu", "undefined tensor passed to a kernel");
  const auto& st = t.storage();
  if (!st->resident())
    throw_error(ErrorKind::RuntimeState, "webgpu",
                "tensor " + t.str() + " is not resident on the device; the runtime must upload it first");
  if (st->buffer()->domain() != buffer_domain())
    throw_error(ErrorKind::RuntimeState, "webgpu",
                "buffer of tensor " + t.str() +
                    " belongs to another device/runtime; move it with .to(device) before using it here");
  return Arg{st->buffer().get(), read_only};
}

std::pair<uint32_t, uint32_t> Context::grid(uint64_t groups) const {
  const uint64_t max = limits().max_compute_workgroups_per_dimension;
  if (groups <= max) return {static_cast<uint32_t>(std::max<uint64_t>(groups, 1)), 1};
  const uint64_t y = (groups + max - 1) / max;
  if (y > max)
    throw_error(ErrorKind::Unsupported, "webgpu", std::to_string(groups) + " workgroups exceed the 2-D grid limit");
  const uint64_t x = (groups + y - 1) / y;
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y)};
}

}  // namespace wgt::webgpu
