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
  auto id = [&](const char* key) { return static_cast<int32_t>(f.get_int(key, -1)); };
  v.bos = id("tokenizer.ggml.bos_token_id");
  v.eos = id("tokenizer.ggml.eos_token_id");
  v.unk = id("tokenizer.ggml.unknown_token_id");
  v.pad = id("tokenizer.ggml.padding_token_id");
  v.eot = id("tokenizer.ggml.eot_token_id");
  v.eom = id("tokenizer.ggml.eom_token_id");
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
