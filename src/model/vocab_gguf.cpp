// The tokenizer.ggml.* keys of a GGUF file -> Vocab -> Tokenizer.
#include "wgt/model.hpp"

namespace wgt {

Tokenizer tokenizer_from_gguf(const GgufFile& f) {
  const char* name = "tokenizer_from_gguf";
  Vocab v;
  v.model = f.get_string("tokenizer.ggml.model", "");
  if (v.model.empty()) throw_error(ErrorKind::Format, name, "tokenizer.ggml.model is missing: the file has no tokenizer");
  v.pre = f.get_string("tokenizer.ggml.pre", "default");
  v.tokens = f.at("tokenizer.ggml.tokens").as_strings();
  if (const GgufValue* s = f.find("tokenizer.ggml.scores")) v.scores = s->as_floats();
  if (const GgufValue* t = f.find("tokenizer.ggml.token_type")) {
    for (int64_t x : t->as_ints()) v.token_types.push_back(static_cast<int32_t>(x));
  }
  if (const GgufValue* m = f.find("tokenizer.ggml.merges")) v.merges = m->as_strings();
  const int64_t n = static_cast<int64_t>(v.tokens.size());
  auto id = [&](const char* key, int64_t dflt) { return static_cast<int32_t>(f.get_int(key, dflt)); };
  // When a file omits BOS/EOS/UNK, the ids llama.cpp assumes for the model type (SentencePiece
  // vocabularies put <unk> <s> </s> first; GPT-2's default is 11 for both), where they exist.
  const bool spm = v.model == "llama";
  auto dflt = [&](int64_t x) { return x < n ? x : -1; };
  v.bos = id("tokenizer.ggml.bos_token_id", dflt(spm ? 1 : 11));
  v.eos = id("tokenizer.ggml.eos_token_id", dflt(spm ? 2 : 11));
  v.unk = id("tokenizer.ggml.unknown_token_id", spm ? dflt(0) : -1);
  // Optional ids out of the vocabulary are dropped rather than failing the load (files in the
  // wild carry stale padding ids); the ids generation depends on stay strict (Format).
  auto optional_id = [&](const char* key) {
    const int32_t x = id(key, -1);
    return x >= 0 && x < n ? x : -1;
  };
  v.pad = optional_id("tokenizer.ggml.padding_token_id");
  v.eot = optional_id("tokenizer.ggml.eot_token_id");
  v.eom = optional_id("tokenizer.ggml.eom_token_id");
  auto opt_bool = [&](const char* key) -> std::optional<bool> {
    if (const GgufValue* b = f.find(key)) return b->as_bool();
    return std::nullopt;
  };
  v.add_bos = opt_bool("tokenizer.ggml.add_bos_token");
  v.add_eos = opt_bool("tokenizer.ggml.add_eos_token");
  v.add_space_prefix = opt_bool("tokenizer.ggml.add_space_prefix");
  return Tokenizer(std::move(v));
}

}  // namespace wgt
