// The regex pre-tokenizers of byte-level BPE models, through PCRE2 in UTF + UCP mode (so that
// \s, \p{L}, \p{N} and (?i) follow Unicode, as the models' Python tokenizers do), JIT-compiled
// when the library supports it. Invalid UTF-8 in the input is tolerated (PCRE2_MATCH_INVALID_UTF):
// such bytes never match and become pieces of their own, which byte-level BPE still encodes.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "model/tokenizer_impl.hpp"

#ifndef PCRE2_MATCH_INVALID_UTF
#error "PCRE2 >= 10.34 is required (PCRE2_MATCH_INVALID_UTF)"
#endif

namespace wgt::detail {

namespace {

// Llama 3: contractions case-insensitively, a letter run with one optional leading non-letter,
// digit groups of 1-3, punctuation runs with trailing newlines, newline runs, and whitespace
// where a run before a word leaves its last space to that word.
const char kLlama3[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2: the same with single digits.
const char kQwen2[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// GPT-2 (also tokenizer.ggml.pre = "default"): case-sensitive contractions, space-prefixed runs.
const char kGpt2[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const char* pattern_for(const std::string& name) {
  if (name == "default" || name == "gpt2") return kGpt2;
  if (PreTokenizer::is_llama3(name)) return kLlama3;
  if (name == "qwen2") return kQwen2;
  return nullptr;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

const char* PreTokenizer::known_names() { return "default, gpt2, llama-bpe, llama3, qwen2"; }

bool PreTokenizer::is_llama3(const std::string& name) { return name == "llama-bpe" || name == "llama3"; }

PreTokenizer::PreTokenizer(const std::string& name) : c_(std::make_unique<Compiled>()) {
  const char* pattern = pattern_for(name);
  if (!pattern) {
    throw Error(ErrorKind::Unsupported, "Tokenizer",
                "pre-tokenizer '" + name + "' (tokenizer.ggml.pre) is not supported; known: " +
                    known_names());
  }
  int err = 0;
  PCRE2_SIZE err_off = 0;
  c_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                           PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_off, nullptr);
  if (!c_->code) {
    throw Error(ErrorKind::RuntimeState, "Tokenizer",
                "PCRE2 rejected the '" + name + "' pre-tokenizer pattern at offset " +
                    std::to_string(err_off) + ": " + pcre2_message(err));
  }
  // JIT is an optimisation only: the interpreter gives the same matches when it is unavailable.
  (void)pcre2_jit_compile(c_->code, PCRE2_JIT_COMPLETE);
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  // Match data per call keeps split() safe to call from several threads at once.
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      pcre2_match_data_create_from_pattern(c_->code, nullptr), pcre2_match_data_free);
  if (!md) throw Error(ErrorKind::OutOfMemory, "Tokenizer::encode", "PCRE2 match data allocation failed");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const size_t n = text.size();
  size_t pos = 0, covered = 0;
  while (pos < n) {
    const int rc = pcre2_match(c_->code, subject, n, pos, 0, md.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      throw Error(ErrorKind::InvalidArgument, "Tokenizer::encode",
                  "pre-tokenizer regex failed: " + pcre2_message(rc));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    const size_t begin = ov[0], end = ov[1];
    if (begin > covered) pieces.push_back(text.substr(covered, begin - covered));
    if (end > begin) {
      pieces.push_back(text.substr(begin, end - begin));
      covered = pos = end;
    } else {
      // None of the patterns can match empty; step over one character should one ever do so.
      const Utf8Step s = utf8_step(subject + begin, n - begin);
      covered = begin;
      pos = begin + (s.kind == Utf8Step::Complete ? s.len : 1);
    }
  }
  if (covered < n) pieces.push_back(text.substr(covered));
  return pieces;
}

}  // namespace wgt::detail
