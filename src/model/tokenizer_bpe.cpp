// GPT-2 byte-level BPE: every byte of a pre-token is spelled as one printable code point (the
// "byte alphabet", so that vocabularies and merges are plain text), then adjacent symbols are
// merged in merge-rank order until no pair has a rank, and the symbols are looked up.
#include "model/symbol_merge.hpp"
#include "model/tokenizer_impl.hpp"

namespace wgt::detail {

namespace {

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Printable bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves; the other
// 68 bytes take U+0100, U+0101, ... in byte order. The alphabet only reaches U+0143.
struct ByteAlphabet {
  std::array<std::string, 256> spell;      // byte -> UTF-8 of its code point
  std::array<int16_t, 0x144> byte_of{};    // code point -> byte, -1 outside the alphabet
  ByteAlphabet() {
    byte_of.fill(-1);
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t cp = printable ? b : next++;
      append_utf8(cp, spell[b]);
      byte_of[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

// A symbol missing from the vocabulary (only possible with an incomplete vocabulary): its
// characters one by one, else unk.
void emit_symbol(const TokenizerImpl& t, std::string_view sym, std::vector<int32_t>& out) {
  if (const int32_t id = t.find(sym); id >= 0) {
    out.push_back(id);
    return;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(sym.data());
  for (size_t i = 0; i < sym.size();) {
    const Utf8Step s = utf8_step(p + i, sym.size() - i);
    const size_t len = s.kind == Utf8Step::Complete ? s.len : 1;
    const int32_t id = t.find(sym.substr(i, len));
    if (id >= 0) {
      out.push_back(id);
    } else if (t.v.unk >= 0) {
      out.push_back(t.v.unk);
    } else {
      throw_unrepresentable(sym.substr(i, len));
    }
    i += len;
  }
}

}  // namespace

std::string bytes_to_bpe_alphabet(std::string_view bytes) {
  const auto& a = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += a.spell[b];
  return out;
}

std::string bpe_alphabet_to_bytes(std::string_view text) {
  const auto& a = alphabet();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Step s = utf8_step(p + i, text.size() - i);
    if (s.kind != Utf8Step::Complete) {  // not text at all: keep the byte
      out += static_cast<char>(p[i]);
      i += 1;
      continue;
    }
    uint32_t cp = s.len == 1 ? p[i] : p[i] & (0xFF >> (s.len + 1));
    for (size_t k = 1; k < s.len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    if (cp < a.byte_of.size() && a.byte_of[cp] >= 0) {
      out += static_cast<char>(a.byte_of[cp]);
    } else {
      out.append(text.data() + i, s.len);
    }
    i += s.len;
  }
  return out;
}

void bpe_encode(const TokenizerImpl& t, std::string_view text, std::vector<int32_t>& out) {
  std::vector<size_t> lens;
  std::string pair;
  for (std::string_view word_bytes : t.pre->split(text)) {
    const std::string word = bytes_to_bpe_alphabet(word_bytes);
    if (t.ignore_merges) {
      if (const int32_t id = t.find(word); id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    // The spelled word is valid UTF-8 by construction: one symbol per code point.
    lens.clear();
    const auto* p = reinterpret_cast<const unsigned char*>(word.data());
    for (size_t i = 0; i < word.size(); i += lens.back()) lens.push_back(utf8_step(p + i, word.size() - i).len);
    std::vector<MergeSymbol> sym = link_symbols(lens);
    merge_best_first(sym, [&](const MergeSymbol& l, const MergeSymbol& r) -> std::optional<double> {
      pair.assign(word, l.off, l.len);
      pair += ' ';
      pair.append(word, r.off, r.len);
      const auto it = t.merge_rank.find(pair);
      if (it == t.merge_rank.end()) return std::nullopt;
      return -static_cast<double>(it->second);  // the lowest rank merges first
    });
    for_each_symbol(sym, [&](const MergeSymbol& m) { emit_symbol(t, std::string_view(word).substr(m.off, m.len), out); });
  }
}

}  // namespace wgt::detail
