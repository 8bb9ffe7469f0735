// What the model commands (run, logits, bench) share: device choice, the built-in default
// model, loading with a progress bar, and number formatting.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "args.hpp"
#include "wgt/model.hpp"

namespace wgt::cli {

// "auto" (WebGPU adapter 0 when it is a usable hardware adapter, else the CPU), "cpu", "webgpu"
// or "webgpu:N". A software adapter (lavapipe, adapter type cpu) runs WebGPU's kernels on the
// same cores as the CPU backend, slower than its BLAS/SIMD kernels by far on real models, so
// auto takes the CPU there (saying so unless quiet); --device webgpu still selects it. An
// explicit WebGPU device that is unavailable is an error naming why.
Device resolve_device(const std::string& spec, bool quiet = true);

// The built-in default model: synthetic shape "tiny" (random weights, F16), generated through
// the GGUF writer on first use into $XDG_CACHE_HOME/wgtensor (else ~/.cache/wgtensor, else /tmp).
std::string default_model_path(bool verbose);

struct LoadedModel {
  std::string path;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<LanguageModel> model;
  double load_seconds = 0;
};
// Loads with a progress bar on stderr when it is a terminal. n_ctx 0 = the model's default.
// cache_dtype: the KV cache's element type (f32 or f16).
LoadedModel load_model(const std::string& path, Device device, int64_t n_ctx, bool quiet, DType cache_dtype);

// A one-line description: "llama 7B-shape, 32 layers, dim 4096, ..., on webgpu:0".
std::string describe(const LoadedModel& m);
std::string human_bytes(uint64_t b);

// The common options of the model commands: -m, --device, --ctx, --cache-type.
struct ModelArgs {
  std::string path;  // empty: the default model
  std::string device = "auto";
  int64_t n_ctx = 0;
  DType cache_type = DType::F32;
  bool quiet = false;
};
ModelArgs parse_model_args(Args& a);

}  // namespace wgt::cli
