// wgt bench: prompt processing and generation speed of a model, llama-bench style.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "bench_json.hpp"
#include "commands.hpp"
#include "model_cli.hpp"
#include "wgt/profile.hpp"
#include "wgt/runtime.hpp"
#include "wgt/synthetic.hpp"

namespace wgt::cli {

namespace {

const char* kBenchHelp =
    "usage: wgt bench (-m FILE | --synthetic SHAPE --type TYPE) [-p N] [-n N] [-r N] [-d N] [--device D]\n"
    "Measures prompt processing (ppN: N prompt tokens in one forward) and generation (tgN: N tokens,\n"
    "one forward each, after -d tokens of context) in tokens per second, mean +- std over -r runs\n"
    "after one warm-up run. Token ids are random (no tokenizer involved).\n"
    "  -m, --model FILE      GGUF model file\n"
    "      --synthetic SHAPE a model of a named real shape with random weights, written through the\n"
    "                        GGUF writer to a temporary file (tiny, tiny-llama3, tiny-qwen2, llama3.2-1b, llama2-7b,\n"
    "                        llama3-8b, qwen2-0.5b)\n"
    "      --type TYPE       weights of the synthetic model: f32 f16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k (default q4_0)\n"
    "  -p, --n-prompt N      prompt length of the pp test (default 512; 0 = skip)\n"
    "  -n, --n-gen N         generated tokens of the tg test (default 128; 0 = skip)\n"
    "  -d, --depth N         tokens already in the context before the tg test (default 0)\n"
    "  -r, --repetitions N   timed runs of each test (default 3)\n"
    "      --device D        auto (default: webgpu:0 when it is a hardware adapter, else cpu), cpu, webgpu, webgpu:N\n"
    "  -c, --ctx N           context length (default: enough for the tests)\n"
    "      --cache-type T    KV cache element type: f32 (default) or f16 (half the cache traffic)\n"
    "      --synthetic-cache DIR  keep the synthetic model in DIR (wgt-synthetic-SHAPE-TYPE.gguf) and reuse it\n"
    "                        when it is already there, instead of writing a temporary file each run\n"
    "      --json FILE       also append one JSON record per test to FILE (bench/bench_json.hpp: bench \"model\",\n"
    "                        case \"SHAPE TYPE\" or the file name, metric ppN / tgN @ dD, t/s mean and std)\n";

struct Summary {
  double mean = 0, std = 0;
};
Summary summarize(const std::vector<double>& xs) {
  Summary s;
  for (double x : xs) s.mean += x;
  s.mean /= static_cast<double>(xs.size());
  for (double x : xs) s.std += (x - s.mean) * (x - s.mean);
  s.std = xs.size() > 1 ? std::sqrt(s.std / static_cast<double>(xs.size() - 1)) : 0;
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  for (const auto& s : argv)
    if (s == "--help" || s == "-h") return std::printf("%s", kBenchHelp), 0;
  Args a(argv);
  ModelArgs ma = parse_model_args(a);
  const std::string shape = a.str("synthetic", nullptr, "");
  const std::string type = a.str("type", nullptr, "q4_0");
  const int64_t n_prompt = a.integer("n-prompt", "p", 512, 0, 1 << 20);
  const int64_t n_gen = a.integer("n-gen", "n", 128, 0, 1 << 20);
  const int64_t depth = a.integer("depth", "d", 0, 0, 1 << 20);
  const int64_t reps = a.integer("repetitions", "r", 3, 1, 1000);
  const std::string cache_dir = a.str("synthetic-cache", nullptr, "");
  const std::string json_file = a.str("json", nullptr, "");
  a.finish();
  if (!cache_dir.empty() && shape.empty()) throw UsageError("--synthetic-cache needs --synthetic SHAPE");
  if (!json_file.empty()) bench::json_to(json_file);
  if (shape.empty() == ma.path.empty()) throw UsageError("give exactly one of -m FILE and --synthetic SHAPE");
  const Device dev = resolve_device(ma.device, ma.quiet);

  std::string path = ma.path;
  bool remove_after = false;
  double write_s = 0;
  if (!shape.empty()) {
    const SyntheticShape& s = synthetic_shape(shape);
    const std::string tmp_name = "wgt-bench-" + shape + "-" + type + "-" + std::to_string(::getpid()) + ".gguf";
    // With --synthetic-cache the file is written under a temporary name and renamed when
    // complete, so an interrupted run never leaves a truncated model to be reused.
    const std::filesystem::path kept =
        cache_dir.empty() ? std::filesystem::path() : std::filesystem::path(cache_dir) / ("wgt-synthetic-" + shape + "-" + type + ".gguf");
    path = (cache_dir.empty() ? std::filesystem::temp_directory_path() / tmp_name : std::filesystem::path(cache_dir) / tmp_name).string();
    if (!kept.empty() && std::filesystem::exists(kept)) {
      path = kept.string();
      std::fprintf(stderr, "wgt bench: synthetic %s %s: reusing %s\n", shape.c_str(), type.c_str(), path.c_str());
    } else {
      if (!kept.empty()) std::filesystem::create_directories(cache_dir);
      const auto t0 = std::chrono::steady_clock::now();
      const uint64_t bytes = write_synthetic_model(path, s, type, 1, [&](const std::string& msg) {
        if (!ma.quiet) std::fprintf(stderr, "wgt bench: %s\n", msg.c_str());
      });
      write_s = seconds_since(t0);
      std::fprintf(stderr, "wgt bench: synthetic %s %s: %s written in %.1f s\n", shape.c_str(), type.c_str(),
                   human_bytes(bytes).c_str(), write_s);
      if (!kept.empty()) {
        std::filesystem::rename(path, kept);
        path = kept.string();
      } else {
        remove_after = true;
      }
    }
  }
  const int64_t need_ctx = std::max(n_prompt, depth + n_gen);
  LoadedModel lm;
  try {
    lm = load_model(path, dev, ma.n_ctx ? ma.n_ctx : std::max<int64_t>(need_ctx, 1), ma.quiet, ma.cache_type);
  } catch (...) {
    if (remove_after) std::filesystem::remove(path);
    throw;
  }
  if (remove_after) std::filesystem::remove(path);  // the mapping stays valid until released
  LanguageModel& m = *lm.model;
  const ModelConfig& c = m.config();
  uint64_t params = 0;
  for (const GgufTensorInfo& t : lm.file->tensors()) {
    uint64_t n = 1;
    for (int64_t d : t.ne) n *= static_cast<uint64_t>(d);
    params += n;
  }
  std::fprintf(stderr, "wgt bench: %s\nwgt bench: load %.2f s\n", describe(lm).c_str(), lm.load_seconds);

  std::mt19937_64 rng(42);
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t& x : t) x = static_cast<int32_t>(rng() % static_cast<uint64_t>(c.n_vocab));
    return t;
  };
  // Each run starts from an empty context; a run's time ends with the logits on the host.
  auto run_pp = [&]() {
    m.reset();
    const auto toks = random_tokens(n_prompt);
    const auto t0 = std::chrono::steady_clock::now();
    m.forward(toks);
    return seconds_since(t0);
  };
  auto run_tg = [&]() {
    m.reset();
    if (depth > 0) m.forward(random_tokens(depth));
    const auto toks = random_tokens(n_gen);
    const auto t0 = std::chrono::steady_clock::now();
    for (int32_t t : toks) m.forward({t});
    return seconds_since(t0);
  };

  char model_col[96];
  std::snprintf(model_col, sizeof model_col, "%s %s", c.arch.c_str(), shape.empty() ? std::filesystem::path(path).filename().c_str() : (shape + " " + type).c_str());
  std::printf("| %-28s | %10s | %8s | %-9s | %-12s | %20s |\n", "model", "size", "params", "backend", "test", "t/s");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(30, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(11, '-').c_str(), std::string(14, '-').c_str(),
              std::string(22, '-').c_str());
  auto row = [&](const std::string& test, const std::vector<double>& tps) {
    const Summary s = summarize(tps);
    char params_s[32], tps_s[48];
    if (params >= 1000000000) std::snprintf(params_s, sizeof params_s, "%.2f B", params / 1e9);
    else std::snprintf(params_s, sizeof params_s, "%.2f M", params / 1e6);
    std::snprintf(tps_s, sizeof tps_s, "%.2f ± %.2f", s.mean, s.std);
    std::printf("| %-28s | %10s | %8s | %-9s | %-12s | %20s |\n", model_col, human_bytes(m.weight_bytes()).c_str(), params_s,
                dev.str().c_str(), test.c_str(), tps_s);
    std::fflush(stdout);
    bench::emit(bench::Record("model", shape.empty() ? std::filesystem::path(path).filename().string() : shape + " " + type,
                              test, "t/s", s.mean)
                    .sd(s.std).on(dev.is_webgpu() ? bench::engine_label() : "cpu").with("device", dev.str())
                    .with("repetitions", static_cast<double>(tps.size())).with("weight_bytes", static_cast<double>(m.weight_bytes()))
                    .with("load_s", lm.load_seconds).with("write_s", write_s));
  };
  double ttft = 0;
  if (n_prompt > 0) {
    run_pp();  // warm-up: pipelines compiled, buffers pooled
    std::vector<double> tps;
    double total = 0;
    for (int64_t r = 0; r < reps; ++r) {
      const double s = run_pp();
      total += s;
      tps.push_back(n_prompt / s);
    }
    ttft = total / reps;
    row("pp" + std::to_string(n_prompt), tps);
  }
  if (n_gen > 0) {
    run_tg();
    // The profiles (WGT_HOST_PROFILE, WGT_WEBGPU_PROFILE) printed at exit then cover the timed
    // generation runs only: no pipeline compilation, no prompt processing.
    if (host_profiling()) host_profile_read(true);
    if (dev.is_webgpu() && webgpu_profiling(dev.index)) webgpu_profile_read(true, dev.index);
    std::vector<double> tps;
    for (int64_t r = 0; r < reps; ++r) tps.push_back(n_gen / run_tg());
    row("tg" + std::to_string(n_gen) + (depth ? " @ d" + std::to_string(depth) : ""), tps);
  }
  if (n_prompt > 0) std::printf("time to first token (pp%lld, mean): %.3f s\n", (long long)n_prompt, ttft);
  std::printf("load time: %.2f s\n", lm.load_seconds);
  if (dev.is_webgpu()) {
    const MemoryStats ms = Runtime::get().memory_stats(dev.index);
    std::printf("device memory: %s allocated (%s pinned, %s pooled), budget %s\n", human_bytes(ms.allocated).c_str(),
                human_bytes(ms.pinned).c_str(), human_bytes(ms.pooled).c_str(), human_bytes(ms.budget).c_str());
  }
  return 0;
}

}  // namespace wgt::cli
