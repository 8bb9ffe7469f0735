// Lookup into the embedded WGSL table and shader-variant preprocessing.
#include "webgpu/shader_registry.hpp"

#include <set>
#include <sstream>

#include "wgt/error.hpp"

namespace wgt::webgpu {

const char* shader_source(const std::string& name) {
  for (int i = 0; i < kEmbeddedShaderCount; ++i)
    if (name == kEmbeddedShaders[i].name) return kEmbeddedShaders[i].source;
  throw_error(ErrorKind::RuntimeState, "shader_source", "no embedded WGSL shader named '" + name + "'");
}

namespace {
using Defines = std::vector<std::pair<std::string, std::string>>;

// An include name may itself be a define ("#include \"{{DOT}}\""), so one entry shader can
// pull a per-variant part (e.g. the block format's decoder) without a wrapper file per variant.
std::string resolve_include(const std::string& name, const Defines& defines) {
  std::string r = name;
  for (const auto& [k, v] : defines)
    if (r == "{{" + k + "}}") r = v;
  return r;
}

void include_into(const std::string& name, std::set<std::string>& seen, std::string& out, const Defines& defines) {
  if (!seen.insert(name).second) return;  // include once: shared helpers may be pulled twice
  std::istringstream in(shader_source(name));
  std::string line;
  while (std::getline(in, line)) {
    size_t p = line.find_first_not_of(" \t");
    if (p != std::string::npos && line.compare(p, 8, "#include") == 0) {
      size_t q0 = line.find('"', p), q1 = q0 == std::string::npos ? q0 : line.find('"', q0 + 1);
      if (q1 == std::string::npos)
        throw_error(ErrorKind::RuntimeState, "expand_shader", "malformed include in shader '" + name + "': " + line);
      include_into(resolve_include(line.substr(q0 + 1, q1 - q0 - 1), defines), seen, out, defines);
      continue;
    }
    out += line;
    out += '\n';
  }
}
}  // namespace

std::string expand_shader(const std::string& name, const std::vector<std::pair<std::string, std::string>>& defines) {
  std::set<std::string> seen;
  std::string src;
  include_into(name, seen, src, defines);
  for (const auto& [k, v] : defines) {
    const std::string pat = "{{" + k + "}}";
    for (size_t pos = src.find(pat); pos != std::string::npos; pos = src.find(pat, pos + v.size()))
      src.replace(pos, pat.size(), v);
  }
  if (size_t pos = src.find("{{"); pos != std::string::npos) {
    size_t end = src.find("}}", pos);
    throw_error(ErrorKind::RuntimeState, "expand_shader",
                "shader '" + name + "' has placeholder " + src.substr(pos, end == std::string::npos ? 20 : end + 2 - pos) +
                    " without a define; add it to the ShaderVariant");
  }
  return src;
}

}  // namespace wgt::webgpu
