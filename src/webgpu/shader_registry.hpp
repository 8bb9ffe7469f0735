// Access to the WGSL sources embedded at build time (src/webgpu/shaders/*.wgsl).
#pragma once
#include <string>

namespace wgt::webgpu {
struct ShaderSource {
  const char* name;
  const char* source;
};
extern const ShaderSource kEmbeddedShaders[];
extern const int kEmbeddedShaderCount;
// Source of shader `name` (file stem); throws wgt::Error(RuntimeState) if missing.
const char* shader_source(const std::string& name);
}  // namespace wgt::webgpu
