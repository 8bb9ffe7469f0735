// wgt::Tokenizer: validation of the vocabulary, the per-model defaults, special tokens written
// in the text, BOS/EOS, and decoding token ids back to bytes.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/tokenizer_impl.hpp"

namespace wgt::detail {

void throw_unrepresentable(std::string_view what) {
  std::string hex;
  for (unsigned char b : what) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%s%02X", hex.empty() ? "" : " ", b);
    hex += buf;
  }
  throw Error(ErrorKind::InvalidArgument, "Tokenizer::encode",
              "the text piece with bytes [" + hex +
                  "] has no token, no byte tokens and the vocabulary has no unknown token");
}

}  // namespace wgt::detail

namespace wgt {

using detail::TokenizerImpl;

namespace {

const char kOp[] = "Tokenizer";

[[noreturn]] void format_error(const std::string& msg) { throw Error(ErrorKind::Format, kOp, msg); }

// "<0xNN>" with two upper- or lower-case hex digits -> NN, else -1.
int parse_byte_token(const std::string& s) {
  if (s.size() != 6 || s.compare(0, 3, "<0x") != 0 || s[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = s[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return -1;
    }
    v = v * 16 + d;
  }
  return v;
}

std::string unescape_spm(const std::string& s) {
  static const std::string kSpace = "\xE2\x96\x81";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ';
      i += kSpace.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

void check_id(int32_t id, size_t n, const char* name) {
  if (id < -1 || id >= static_cast<int64_t>(n)) {
    format_error(std::string(name) + " token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                 std::to_string(n) + ") (use -1 for none)");
  }
}

// The decoded bytes of one token, computed once at construction.
std::string piece_of(const TokenizerImpl& t, int32_t id) {
  const std::string& text = t.v.tokens[id];
  switch (t.type[id]) {
    case TokenType::Control:
    case TokenType::Unknown:
    case TokenType::Unused:
      return "";
    case TokenType::UserDefined:
      return text;  // added tokens are stored as they read
    case TokenType::Byte:
      return std::string(1, static_cast<char>(parse_byte_token(text)));
    default:
      return t.spm ? unescape_spm(text) : detail::bpe_alphabet_to_bytes(text);
  }
}

}  // namespace

Tokenizer::Tokenizer(Vocab v) {
  auto impl = std::make_shared<TokenizerImpl>();
  TokenizerImpl& t = *impl;
  if (v.model == "llama") {
    t.spm = true;
  } else if (v.model != "gpt2") {
    throw Error(ErrorKind::Unsupported, kOp,
                "tokenizer model '" + v.model + "' (tokenizer.ggml.model) is not supported; known: llama (SentencePiece), gpt2 (byte-level BPE)");
  }
  const size_t n = v.tokens.size();
  if (n == 0) format_error("the vocabulary has no tokens");
  if (n > static_cast<size_t>(INT32_MAX)) format_error("the vocabulary has more than 2^31-1 tokens");
  if (!v.scores.empty() && v.scores.size() != n) {
    format_error(std::to_string(v.scores.size()) + " scores for " + std::to_string(n) + " tokens");
  }
  for (size_t i = 0; i < v.scores.size(); ++i) {
    // NaN has no order: the merge queue needs one.
    if (std::isnan(v.scores[i])) format_error("score of token " + std::to_string(i) + " is NaN");
  }
  if (!v.token_types.empty() && v.token_types.size() != n) {
    format_error(std::to_string(v.token_types.size()) + " token types for " + std::to_string(n) + " tokens");
  }
  check_id(v.bos, n, "bos");
  check_id(v.eos, n, "eos");
  check_id(v.unk, n, "unk");
  check_id(v.pad, n, "pad");
  check_id(v.eot, n, "eot");
  check_id(v.eom, n, "eom");

  t.type.assign(n, TokenType::Normal);
  for (size_t i = 0; i < v.token_types.size(); ++i) {
    const int32_t ty = v.token_types[i];
    if (ty < 0 || ty > 6) {
      format_error("token " + std::to_string(i) + " has type " + std::to_string(ty) + " (known: 0..6)");
    }
    t.type[i] = ty == 0 ? TokenType::Normal : static_cast<TokenType>(ty);
    if (t.type[i] == TokenType::Byte && parse_byte_token(v.tokens[i]) < 0) {
      format_error("byte token " + std::to_string(i) + " is spelled '" + v.tokens[i] + "', not <0xNN>");
    }
  }

  t.byte_token.fill(-1);
  t.token_to_id.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = static_cast<int32_t>(i);
    t.token_to_id.emplace(v.tokens[i], id);  // a duplicate spelling keeps its first id
    const int b = parse_byte_token(v.tokens[i]);
    if (b >= 0 && t.byte_token[b] < 0) t.byte_token[b] = id;
    const TokenType ty = t.type[i];
    if ((ty == TokenType::Control || ty == TokenType::UserDefined || ty == TokenType::Unknown) &&
        !v.tokens[i].empty()) {
      t.specials.push_back(id);
    }
  }
  // Longest first, so that a special token containing another one wins.
  std::stable_sort(t.specials.begin(), t.specials.end(), [&](int32_t a, int32_t b) {
    return v.tokens[a].size() > v.tokens[b].size();
  });

  if (!t.spm) {
    t.merge_rank.reserve(v.merges.size());
    for (size_t i = 0; i < v.merges.size(); ++i) {
      const std::string& m = v.merges[i];
      // The separator is the first space after the first byte; the byte-level alphabet has no
      // space, so a merge of two symbols has exactly one.
      const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
      if (sp == std::string::npos || sp + 1 >= m.size()) {
        format_error("merge " + std::to_string(i) + " '" + m + "' is not 'left right'");
      }
      t.merge_rank.emplace(m, static_cast<int>(i));  // a repeated merge keeps its first rank
    }
    t.pre = std::make_unique<detail::PreTokenizer>(v.pre);
    t.ignore_merges = detail::PreTokenizer::is_llama3(v.pre);
  }

  // Defaults as llama.cpp: SPM adds BOS and a space prefix; byte-level BPE adds nothing,
  // except the llama-3 pre-tokenizer, whose models expect BOS.
  const bool bos_default = t.spm || detail::PreTokenizer::is_llama3(v.pre);
  t.add_bos = v.add_bos.value_or(bos_default && v.bos >= 0);
  t.add_eos = v.add_eos.value_or(false);
  t.add_space_prefix = v.add_space_prefix.value_or(t.spm);
  if (t.add_bos && v.bos < 0) format_error("add_bos_token is true but the vocabulary has no bos token id");
  if (t.add_eos && v.eos < 0) format_error("add_eos_token is true but the vocabulary has no eos token id");

  // End of generation, as llama.cpp: eos, eot, eom, and every token spelled like a known
  // end-of-turn marker; many GGUFs (Qwen2's <|im_end|>, ...) carry no eot_token_id at all.
  // An unset eot / eom takes the first marker of its list the vocabulary has.
  static const char* const kEotTexts[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                          "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>"};
  auto find_id = [&](const char* s) {
    auto it = t.token_to_id.find(s);
    return it == t.token_to_id.end() ? -1 : it->second;
  };
  for (const char* s : kEotTexts) {
    const int32_t id = find_id(s);
    if (id < 0) continue;
    if (v.eot < 0) v.eot = id;
    t.eog.push_back(id);
  }
  if (v.eom < 0) v.eom = find_id("<|eom_id|>");
  if (const int32_t id = find_id("<|eom_id|>"); id >= 0) t.eog.push_back(id);
  for (int32_t id : {v.eos, v.eot, v.eom}) {
    if (id >= 0) t.eog.push_back(id);
  }
  std::sort(t.eog.begin(), t.eog.end());
  t.eog.erase(std::unique(t.eog.begin(), t.eog.end()), t.eog.end());

  t.v = std::move(v);
  t.piece.resize(n);
  for (size_t i = 0; i < n; ++i) t.piece[i] = piece_of(t, static_cast<int32_t>(i));
  impl_ = std::move(impl);
}

std::vector<int32_t> Tokenizer::encode(const std::string& text, bool add_special, bool parse_special) const {
  const TokenizerImpl& t = *impl_;
  // Fragments: ordinary text (token = -1) or one special token, in order.
  struct Fragment {
    int32_t token;
    size_t off, len;
  };
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  for (int32_t id : t.specials) {
    // Control/unknown text is a token only when asked; user-defined text always is.
    if (!parse_special && t.type[id] != TokenType::UserDefined) continue;
    const std::string& sp = t.v.tokens[id];
    std::vector<Fragment> next;
    next.reserve(frags.size());
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view frag = std::string_view(text).substr(f.off, f.len);
      size_t pos = 0;
      while (pos < frag.size()) {
        const size_t hit = frag.find(sp, pos);
        if (hit == std::string_view::npos) break;
        if (hit > pos) next.push_back({-1, f.off + pos, hit - pos});
        next.push_back({id, f.off + hit, sp.size()});
        pos = hit + sp.size();
      }
      if (pos < frag.size()) next.push_back({-1, f.off + pos, frag.size() - pos});
    }
    frags.swap(next);
  }

  std::vector<int32_t> out;
  out.reserve(text.size() / 2 + 2);
  if (add_special && t.add_bos) out.push_back(t.v.bos);
  // SPM: ordinary text at the start or right after a special token gets the space prefix.
  bool after_special = true;
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    const std::string_view piece(text.data() + f.off, f.len);
    if (t.spm) {
      if (t.add_space_prefix && after_special) {
        std::string prefixed = " ";
        prefixed += piece;
        detail::spm_encode(t, prefixed, out);
      } else {
        detail::spm_encode(t, piece, out);
      }
    } else {
      detail::bpe_encode(t, piece, out);
    }
    after_special = false;
  }
  if (add_special && t.add_eos) out.push_back(t.v.eos);
  return out;
}

const std::string& Tokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) {
    throw Error(ErrorKind::OutOfRange, "Tokenizer::token_to_piece",
                "token id " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(n_vocab()) + ")");
  }
  return impl_->piece[id];
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  const TokenizerImpl& t = *impl_;
  bool strip = t.spm && t.add_space_prefix;
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) {
      throw Error(ErrorKind::OutOfRange, "Tokenizer::decode",
                  "token id " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(n_vocab()) + ")");
    }
    std::string_view piece = t.piece[id];
    if (strip && id != t.v.bos) {
      strip = false;
      if (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    }
    out += piece;
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->piece.size()); }
int32_t Tokenizer::bos() const { return impl_->v.bos; }
int32_t Tokenizer::eos() const { return impl_->v.eos; }
int32_t Tokenizer::eot() const { return impl_->v.eot; }
int32_t Tokenizer::eom() const { return impl_->v.eom; }
int32_t Tokenizer::unk() const { return impl_->v.unk; }
int32_t Tokenizer::pad() const { return impl_->v.pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }
bool Tokenizer::add_space_prefix() const { return impl_->add_space_prefix; }
const std::string& Tokenizer::model() const { return impl_->v.model; }
const std::string& Tokenizer::pre() const { return impl_->v.pre; }

bool Tokenizer::is_eog(int32_t id) const {
  return std::binary_search(impl_->eog.begin(), impl_->eog.end(), id);
}

const std::string& Tokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= n_vocab()) {
    throw Error(ErrorKind::OutOfRange, "Tokenizer::token_text",
                "token id " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(n_vocab()) + ")");
  }
  return impl_->v.tokens[id];
}

TokenType Tokenizer::token_type(int32_t id) const {
  (void)token_text(id);  // range check
  return impl_->type[id];
}

}  // namespace wgt
