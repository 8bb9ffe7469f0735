// Tokenizers built from GGUF tokenizer metadata (tokenizer.ggml.*): SentencePiece-style
// ("llama": scores, <0xNN> byte fallback, U+2581 for spaces) and GPT-2 byte-level BPE
// ("gpt2": ranked merges after a regex pre-tokenizer). Conventions follow llama.cpp's public
// behaviour so that a GGUF model sees the token ids it was trained with; docs/model.md
// ("Tokenizers") describes them.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wgt {

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  Undefined = 0,  // treated as Normal
  Normal = 1,
  Unknown = 2,
  Control = 3,      // <s>, </s>, <|eot_id|>...: decode to nothing
  UserDefined = 4,  // added tokens: always matched verbatim in text, decode to their text
  Unused = 5,
  Byte = 6,  // <0xNN>
};

// Everything a tokenizer needs, as stored under tokenizer.ggml.* in a GGUF file.
struct Vocab {
  std::string model;            // "llama" (SPM) or "gpt2" (byte-level BPE); other -> Error{Unsupported}
  std::string pre = "default";  // tokenizer.ggml.pre (gpt2 only): default, gpt2, llama-bpe, llama3, qwen2
  std::vector<std::string> tokens;
  std::vector<float> scores;         // may be empty (all 0)
  std::vector<int32_t> token_types;  // may be empty (all Normal); values of TokenType
  std::vector<std::string> merges;   // gpt2: "left right", index = rank (lower merges first)
  int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1, eom = -1;  // -1 = none
  std::optional<bool> add_bos, add_eos, add_space_prefix;  // unset = the model's default
};

namespace detail {
struct TokenizerImpl;
}

class Tokenizer {
 public:
  // Validates (sizes agree, ids in range, token types known, byte tokens spelled <0xNN>,
  // merges parse) -> Error{Format}; unknown model or pre -> Error{Unsupported}.
  explicit Tokenizer(Vocab v);

  // add_special: prepend BOS / append EOS as add_bos()/add_eos() say.
  // parse_special: control (and unknown-type) tokens written verbatim in the text, e.g.
  // "<|eot_id|>" in a chat template, become that single token; user-defined tokens are always
  // matched (llama.cpp's rule). With parse_special = false control-token text is tokenized as
  // ordinary text.
  std::vector<int32_t> encode(const std::string& text, bool add_special = true,
                              bool parse_special = true) const;

  // The bytes the token decodes to (may be an incomplete UTF-8 sequence); control, unknown
  // and unused tokens -> "". Out-of-range id -> Error{OutOfRange}.
  const std::string& token_to_piece(int32_t id) const;

  // The whole sequence's bytes, exactly (no UTF-8 repair: see StreamDecoder / utf8_sanitize).
  // SPM with add_space_prefix: the leading space of the first token after leading BOS tokens
  // is removed, undoing the prefix encode() added.
  std::string decode(const std::vector<int32_t>& ids) const;

  int32_t n_vocab() const;
  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t pad() const;
  bool add_bos() const;  // effective values (defaults resolved)
  bool add_eos() const;
  bool add_space_prefix() const;
  // End of generation: eos, eot, eom and any token spelled <|eot_id|>, <|im_end|>, <|end|>,
  // <end_of_turn>, <|endoftext|>, <|end_of_text|>, <EOT>, _<EOT> or <|eom_id|> (llama.cpp's
  // list). eot()/eom() unset in the Vocab take the first of these the vocabulary has.
  bool is_eog(int32_t id) const;
  const std::string& model() const;
  const std::string& pre() const;
  const std::string& token_text(int32_t id) const;  // raw vocab string (debugging)
  TokenType token_type(int32_t id) const;

  // Incremental decode for generation: push() returns only complete, valid UTF-8; bytes of a
  // character split across tokens are held until it completes; a sequence that can no longer
  // complete becomes U+FFFD (one per maximal ill-formed subpart). flush() ends the stream
  // (a pending incomplete sequence -> U+FFFD) and starts a new one.
  // from_start = true applies decode()'s leading-space rule, so that the concatenation of all
  // outputs equals utf8_sanitize(decode(ids)); false (default) suits continuing text.
  class StreamDecoder {
   public:
    explicit StreamDecoder(const Tokenizer& tok, bool from_start = false);
    std::string push(int32_t id);
    std::string flush();

   private:
    std::shared_ptr<const detail::TokenizerImpl> impl_;
    std::string pending_;
    bool from_start_;
    bool strip_next_;
  };

 private:
  std::shared_ptr<const detail::TokenizerImpl> impl_;
};

// Valid UTF-8 copy of `bytes`: each maximal ill-formed subpart (Unicode's "best practice")
// becomes U+FFFD, as does a truncated sequence at the end.
std::string utf8_sanitize(std::string_view bytes);

}  // namespace wgt
