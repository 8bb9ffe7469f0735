// Access to the WGSL sources embedded at build time (src/webgpu/shaders/*.wgsl) and the
// preprocessing of shader variants: `#include "name"`, conditional blocks
// (`#if EXPR`, `#ifdef NAME`, `#ifndef NAME`, `#elif EXPR`, `#else`, `#endif`) and {{NAME}}
// substitution, all driven by one list of defines (name -> value).
//
// #if expressions: integers (a trailing `u` allowed), true/false, names (their define's value
// read as an integer, true or false), defined(NAME) / defined NAME, ( ), !, ==, !=, <, <=, >,
// >=, && and || (short-circuit). A name in an evaluated #if must be defined, with a numeric or
// boolean value: a misspelt flag is an error, not a silent 0. #ifdef / #ifndef only ask
// whether the name is defined. A directive's block must close in the file that opened it.
// Every problem is a wgt::Error(RuntimeState) naming the shader and line.
#pragma once
#include <functional>
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
using ShaderDefines = std::vector<std::pair<std::string, std::string>>;
// Source of shader `name` (file stem); throws wgt::Error(RuntimeState) if missing.
const char* shader_source(const std::string& name);
// Source of `name` preprocessed: includes expanded (recursively, each file once; an include
// name may be a {{KEY}} placeholder), conditional blocks resolved, every {{KEY}} replaced.
// Throws RuntimeState on a missing include, a bad directive or a placeholder left without a value.
std::string expand_shader(const std::string& name, const ShaderDefines& defines);
// The same over any source table (tests): `lookup` returns a file's text or throws.
std::string preprocess_wgsl(const std::string& name, const ShaderDefines& defines,
                            const std::function<std::string(const std::string&)>& lookup);
}  // namespace wgt::webgpu
