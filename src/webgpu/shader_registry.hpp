// Access to the WGSL sources embedded at build time (src/webgpu/shaders/*.wgsl) and the
// preprocessing of shader variants ({{NAME}} substitution, #include "name").
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace wgt::webgpu {
struct ShaderSource {
  const char* name;
  const char* source;
};
extern const ShaderSource kEmbeddedShaders[];
extern const int kEmbeddedShaderCount;
// Source of shader `name` (file stem); throws wgt::Error(RuntimeState) if missing.
const char* shader_source(const std::string& name);
// Source of `name` with includes expanded (recursively, each file once) and every {{KEY}}
// replaced; throws RuntimeState on a missing include or a placeholder left without a value.
std::string expand_shader(const std::string& name, const std::vector<std::pair<std::string, std::string>>& defines);
}  // namespace wgt::webgpu
