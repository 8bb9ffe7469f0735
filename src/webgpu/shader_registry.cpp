// Lookup into the embedded WGSL table.
#include "webgpu/shader_registry.hpp"

#include <cstring>

#include "wgt/error.hpp"

namespace wgt::webgpu {
const char* shader_source(const std::string& name) {
  for (int i = 0; i < kEmbeddedShaderCount; ++i)
    if (name == kEmbeddedShaders[i].name) return kEmbeddedShaders[i].source;
  throw_error(ErrorKind::RuntimeState, "shader_source", "no embedded WGSL shader named '" + name + "'");
}
}  // namespace wgt::webgpu
