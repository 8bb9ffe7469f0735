// Internal state of wgt::Tokenizer shared by the tokenizer_*.cpp files (one concern each:
// common = validation/specials/decode, spm, bpe, pretokenize = PCRE2 regexes, utf8 = UTF-8
// scanning and the stream decoder).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wgt/error.hpp"
#include "wgt/tokenizer.hpp"

namespace wgt::detail {

// Regex pre-tokenizer of the byte-level BPE models (tokenizer.ggml.pre).
class PreTokenizer {
 public:
  // Throws Error{Unsupported} listing the known names when `name` is not one of them.
  explicit PreTokenizer(const std::string& name);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // The text cut into consecutive pieces covering all of it (bytes no alternative matches,
  // e.g. invalid UTF-8, form pieces of their own).
  std::vector<std::string_view> split(std::string_view text) const;

  static const char* known_names();  // "default, gpt2, llama-bpe, llama3, qwen2"
  static bool is_llama3(const std::string& name);

 private:
  struct Compiled;
  std::unique_ptr<Compiled> c_;
};

struct TokenizerImpl {
  Vocab v;
  bool spm = false;  // model "llama"; else "gpt2"
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  // llama-3 BPE: a pre-token that is itself in the vocabulary is emitted without merging.
  bool ignore_merges = false;
  std::vector<TokenType> type;  // per id, Undefined folded into Normal
  std::unordered_map<std::string, int32_t> token_to_id;
  std::array<int32_t, 256> byte_token{};  // "<0xNN>" tokens, -1 when absent
  std::vector<std::string> piece;         // token_to_piece per id, computed once
  std::vector<int32_t> specials;          // matched in text, longest first
  std::vector<int32_t> eog;               // end-of-generation ids, sorted
  std::unordered_map<std::string, int32_t> merge_rank;  // key "left right"
  std::unique_ptr<PreTokenizer> pre;

  int32_t find(std::string_view s) const {
    auto it = token_to_id.find(std::string(s));
    return it == token_to_id.end() ? -1 : it->second;
  }
};

// SPM: `text` as given (the caller added the space prefix); spaces become U+2581 here.
void spm_encode(const TokenizerImpl& t, std::string_view text, std::vector<int32_t>& out);
// Byte-level BPE of one fragment of ordinary text (pre-tokenized here).
void bpe_encode(const TokenizerImpl& t, std::string_view text, std::vector<int32_t>& out);
// GPT-2 byte alphabet: bytes -> their printable code points (UTF-8) and back. Code points
// outside the alphabet pass through as their own UTF-8 bytes.
std::string bytes_to_bpe_alphabet(std::string_view bytes);
std::string bpe_alphabet_to_bytes(std::string_view text);

// UTF-8 scanning (Unicode's well-formed table, maximal-subpart replacement).
struct Utf8Step {
  enum Kind { Complete, Incomplete, Invalid } kind;
  size_t len;  // Complete: sequence length; Incomplete: bytes present; Invalid: bytes to replace
};
Utf8Step utf8_step(const unsigned char* p, size_t n);
// Appends the valid UTF-8 of `in` to `out` (ill-formed parts -> U+FFFD) and returns how many
// bytes were consumed: with final = false a trailing incomplete sequence is left unconsumed.
size_t utf8_append_valid(std::string_view in, bool final, std::string& out);

// The error for a piece of text the vocabulary cannot represent at all.
[[noreturn]] void throw_unrepresentable(std::string_view what);

}  // namespace wgt::detail
