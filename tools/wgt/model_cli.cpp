// Device choice, the default model, loading with progress.
#include "model_cli.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "runtime/settings.hpp"
#include "wgt/runtime.hpp"
#include "wgt/synthetic.hpp"
#include "wgt/wgt.hpp"

namespace wgt::cli {

Device resolve_device(const std::string& spec, bool quiet) {
  if (spec == "auto") {
    const DeviceBackend* b = Runtime::get().webgpu_backend(0);
    if (!b) return Device::cpu();
    if (!b->is_software()) return Device::webgpu(0);
    if (!quiet)
      std::fprintf(stderr, "wgt: webgpu:0 is a software adapter; running on the CPU (faster there; --device webgpu "
                           "to use the adapter)\n");
    return Device::cpu();
  }
  Device d = Device::parse(spec);
  if (d.is_webgpu()) {
    std::string why;
    if (!Runtime::get().webgpu_backend(d.index, &why)) throw UsageError("--device " + spec + " is not available: " + why);
  }
  return d;
}

std::string human_bytes(uint64_t b) {
  char buf[64];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / double(1ull << 20));
  else if (b >= (1ull << 10)) std::snprintf(buf, sizeof buf, "%.2f KiB", b / double(1ull << 10));
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

std::string default_model_path(bool verbose) {
  namespace fs = std::filesystem;
  fs::path dir;
  if (const char* x = foreign_env("XDG_CACHE_HOME")) dir = fs::path(x) / "wgtensor";
  else if (const char* h = foreign_env("HOME")) dir = fs::path(h) / ".cache" / "wgtensor";
  else dir = fs::temp_directory_path() / "wgtensor";
  // The version in the name: a newer wgt regenerates instead of reading an older layout.
  const fs::path file = dir / (std::string("default-tiny-f16-") + version() + ".gguf");
  if (fs::exists(file)) return file.string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::IO, "wgt run", "cannot create " + dir.string() + ": " + ec.message());
  if (verbose) std::fprintf(stderr, "wgt: generating the built-in default model (random weights) at %s\n", file.c_str());
  // Written under a unique name, then renamed: concurrent first runs never see half a file.
  const fs::path tmp = dir / ("default.tmp." + std::to_string(::getpid()) + ".gguf");
  write_synthetic_model(tmp.string(), synthetic_shape("tiny"), "f16", 7);
  fs::rename(tmp, file, ec);
  if (ec) throw Error(ErrorKind::IO, "wgt run", "cannot rename to " + file.string() + ": " + ec.message());
  return file.string();
}

namespace {

// A progress bar redrawn in place on a terminal (at most every 1%); nothing otherwise.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : on_(enabled && ::isatty(2)) {}
  void update(uint64_t done, uint64_t total) {
    if (!on_ || total == 0) return;
    const int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
    if (pct == last_) return;
    last_ = pct;
    const int width = 30, fill = pct * width / 100;
    std::fprintf(stderr, "\rloading [%.*s%*s] %3d%% %s / %s ", fill, "==============================", width - fill, "",
                 pct, human_bytes(done).c_str(), human_bytes(total).c_str());
    if (done >= total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  bool on_;
  int last_ = -1;
};

}  // namespace

LoadedModel load_model(const std::string& path, Device device, int64_t n_ctx, bool quiet, DType cache_dtype) {
  LoadedModel m;
  m.path = path;
  const auto t0 = std::chrono::steady_clock::now();
  m.file = std::make_unique<GgufFile>(GgufFile::open(path));
  ProgressBar bar(!quiet);
  ModelOptions o;
  o.device = device;
  o.n_ctx = n_ctx;
  o.cache_dtype = cache_dtype;
  o.progress = [&bar](uint64_t done, uint64_t total) { bar.update(done, total); };
  m.model = std::make_unique<LanguageModel>(LanguageModel::load(*m.file, o));
  synchronize();
  m.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

std::string describe(const LoadedModel& m) {
  const ModelConfig& c = m.model->config();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s%s%s: %s, %lld layers, dim %lld, %lld heads (%lld kv, head_dim %lld), ffn %lld, vocab %lld, "
                "weights %s, context %lld, on %s",
                m.path.c_str(), c.name.empty() ? "" : " — ", c.name.c_str(), c.arch.c_str(), (long long)c.n_layers,
                (long long)c.dim, (long long)c.n_heads, (long long)c.n_kv_heads, (long long)c.head_dim,
                (long long)c.ffn_dim, (long long)c.n_vocab, human_bytes(m.model->weight_bytes()).c_str(),
                (long long)m.model->n_ctx(), m.model->device().str().c_str());
  return buf;
}

ModelArgs parse_model_args(Args& a) {
  ModelArgs m;
  m.path = a.str("model", "m", "");
  m.device = a.str("device", nullptr, "auto");
  m.n_ctx = a.integer("ctx", "c", 0, 0, int64_t{1} << 24);
  m.quiet = a.flag("quiet", "q");
  const std::string ct = a.str("cache-type", nullptr, "f32");
  if (ct == "f16") m.cache_type = DType::F16;
  else if (ct != "f32") throw UsageError("--cache-type must be f32 or f16, not '" + ct + "'");
  return m;
}

}  // namespace wgt::cli
