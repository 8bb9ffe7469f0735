// wgt run (generate text) and wgt logits (every position's logits as .npy).
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>

#include "commands.hpp"
#include "model_cli.hpp"
#include "npy.hpp"
#include "wgt/generate.hpp"

namespace wgt::cli {

namespace {

const char* kRunHelp =
    "usage: wgt run [-m FILE] [-p TEXT | --tokens 1,2,3] [options]\n"
    "Generates text with a GGUF language model (llama, mistral, qwen2), streaming it to stdout.\n"
    "Without -m, runs the built-in default model (a tiny llama-shaped model with random weights,\n"
    "generated on first use: the text is not meaningful, the computation is real).\n"
    "  -m, --model FILE        GGUF model file\n"
    "  -p, --prompt TEXT       prompt text (tokenized with the model's tokenizer; BOS added as it says)\n"
    "      --tokens IDS        prompt as comma-separated token ids instead of text (no BOS added)\n"
    "      --no-bos            do not add BOS to a text prompt\n"
    "  -n, --n-predict N       tokens to generate (default 128; -1 = until EOS or the context is full)\n"
    "      --temp T            temperature (default 0.8; 0 = greedy)\n"
    "      --top-k K           keep the K most likely tokens (default 40; 0 = off)\n"
    "      --top-p P           nucleus sampling (default 0.95; 1 = off)\n"
    "      --min-p P           drop tokens below P x the top probability (default 0.05; 0 = off)\n"
    "      --repeat-penalty R  penalty on the last --repeat-last-n tokens (default 1.0 = off)\n"
    "      --repeat-last-n N   window of the repetition penalty (default 64)\n"
    "  -s, --seed S            sampling seed (default: random, printed in the statistics)\n"
    "  -c, --ctx N             context length (default min(the model's, 4096))\n"
    "      --cache-type T      KV cache element type: f32 (default) or f16 (half the cache traffic)\n"
    "      --device D          auto (default: webgpu:0 when it is a hardware adapter, else cpu), cpu, webgpu, webgpu:N\n"
    "      --ignore-eos        never sample end-of-generation tokens (generate exactly -n tokens)\n"
    "      --print-tokens      print the prompt + generated token ids on the last line of stdout\n"
    "  -q, --quiet             no progress bar, no statistics on stderr\n";

const char* kLogitsHelp =
    "usage: wgt logits [-m FILE] (--tokens 1,2,3 | -p TEXT) -o OUT.npy [--device D] [--ctx N] [--cache-type T]\n"
    "Runs the tokens through the model at positions 0..T-1 and writes the f32 logits of every\n"
    "position as a NumPy array of shape [T, vocab].\n";

bool wants_help(const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

// The prompt options, read before the model loads so that a usage error costs no load.
struct PromptArgs {
  std::optional<std::vector<int32_t>> ids;
  std::optional<std::string> text;
  bool no_bos = false;
};

PromptArgs parse_prompt(Args& a) {
  PromptArgs p;
  p.ids = a.int_list("tokens");
  p.text = a.value("prompt", "p");
  p.no_bos = a.flag("no-bos");
  if (p.ids && p.text) throw UsageError("give either -p TEXT or --tokens IDS, not both");
  return p;
}

std::vector<int32_t> prompt_tokens(const PromptArgs& p, const Tokenizer& tok, const std::string& dflt_text) {
  if (p.ids) return *p.ids;
  std::vector<int32_t> out = tok.encode(p.text.value_or(dflt_text), !p.no_bos);
  if (out.empty()) throw UsageError("the prompt encodes to no tokens; give some text or --tokens");
  return out;
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::printf("%s", kRunHelp), 0;
  Args a(argv);
  ModelArgs ma = parse_model_args(a);
  GenerateOptions go;
  go.n_predict = a.integer("n-predict", "n", 128, -1, int64_t{1} << 30);
  SamplerParams& sp = go.sampling;
  sp.temperature = a.real("temp", nullptr, 0.8, 0, 1e6);
  sp.top_k = a.integer("top-k", nullptr, 40, 0, int64_t{1} << 31);
  sp.top_p = a.real("top-p", nullptr, 0.95, 1e-9, 1);
  sp.min_p = a.real("min-p", nullptr, 0.05, 0, 1);
  sp.repeat_penalty = a.real("repeat-penalty", nullptr, 1.0, 1e-6, 1e6);
  sp.repeat_last_n = a.integer("repeat-last-n", nullptr, 64, 0, int64_t{1} << 30);
  if (auto seed = a.value("seed", "s")) sp.seed = static_cast<uint64_t>(parse_int(*seed, "--seed", 0, INT64_MAX));
  else sp.seed = std::random_device{}();
  const bool print_tokens = a.flag("print-tokens");
  const bool ignore_eos = a.flag("ignore-eos");
  const PromptArgs pa = parse_prompt(a);
  a.finish();
  const Device dev = resolve_device(ma.device, ma.quiet);
  const std::string path = ma.path.empty() ? default_model_path(!ma.quiet) : ma.path;
  LoadedModel lm = load_model(path, dev, ma.n_ctx, ma.quiet, ma.cache_type);
  const Tokenizer tok = tokenizer_from_gguf(*lm.file);
  const std::vector<int32_t> prompt = prompt_tokens(pa, tok, ma.path.empty() ? "Once upon a time" : "");
  if (!ma.quiet) std::fprintf(stderr, "wgt: %s (loaded in %.2f s)\n", describe(lm).c_str(), lm.load_seconds);

  if (ignore_eos)
    for (int32_t id = 0; id < tok.n_vocab(); ++id)
      if (tok.is_eog(id)) sp.suppress.push_back(id);
  std::vector<int32_t> all = prompt;
  Tokenizer::StreamDecoder dec(tok, /*from_start=*/true);  // drops SPM's space prefix like decode()
  // The prompt is echoed as the tokenizer decodes it, then the continuation streams.
  std::string shown;
  for (int32_t id : prompt) shown += dec.push(id);
  std::fputs(shown.c_str(), stdout);
  std::fflush(stdout);
  auto on_token = [&](int32_t id) {
    all.push_back(id);
    if (!tok.is_eog(id)) {
      std::fputs(dec.push(id).c_str(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  const GenerateStats st = generate(*lm.model, prompt, go, on_token, [&](int32_t id) { return tok.is_eog(id); });
  std::fputs(dec.flush().c_str(), stdout);
  std::printf("\n");
  if (print_tokens) {
    std::string line;
    for (size_t i = 0; i < all.size(); ++i) line += (i ? "," : "") + std::to_string(all[i]);
    std::printf("%s\n", line.c_str());
  }
  if (!ma.quiet) {
    const double gen_tps = st.n_generated > 1 ? (st.n_generated - 1) / st.generate_seconds : 0;
    std::fprintf(stderr,
                 "\nwgt: prompt %lld tokens in %.3f s (%.1f t/s; time to first token %.3f s), generated %lld tokens "
                 "(%.1f t/s)%s, seed %llu, device %s\n",
                 (long long)st.n_prompt, st.prompt_seconds, st.n_prompt / st.prompt_seconds, st.prompt_seconds,
                 (long long)st.n_generated, gen_tps, st.stopped_at_eog ? ", stopped at end of generation" : "",
                 (unsigned long long)sp.seed, dev.str().c_str());
  }
  return 0;
}

int cmd_logits(const std::vector<std::string>& argv) {
  if (wants_help(argv)) return std::printf("%s", kLogitsHelp), 0;
  Args a(argv);
  ModelArgs ma = parse_model_args(a);
  auto out = a.value("output", "o");
  if (!out) throw UsageError("-o OUT.npy is required");
  const PromptArgs pa = parse_prompt(a);
  if (!pa.ids && !pa.text) throw UsageError("give the input as --tokens IDS or -p TEXT");
  a.finish();
  const Device dev = resolve_device(ma.device, ma.quiet);
  const std::string path = ma.path.empty() ? default_model_path(!ma.quiet) : ma.path;
  LoadedModel lm = load_model(path, dev, ma.n_ctx, ma.quiet, ma.cache_type);
  const Tokenizer tok = tokenizer_from_gguf(*lm.file);
  const std::vector<int32_t> ids = prompt_tokens(pa, tok, "");
  const Tensor logits = lm.model->forward(ids, /*all_logits=*/true);
  write_npy_f32(*out, logits.data<float>(), logits.shape());
  if (!ma.quiet)
    std::fprintf(stderr, "wgt: wrote %s [%lld, %lld] (%s)\n", out->c_str(), (long long)logits.shape()[0],
                 (long long)logits.shape()[1], dev.str().c_str());
  return 0;
}

}  // namespace wgt::cli
