// GPT-2 byte-level BPE on a hand-made merge list (expected pieces derived by hand next to each
// check), and the pre-tokenizer regexes' splits (gpt2, llama-3, qwen2).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "model/tokenizer_impl.hpp"
#include "wgt/error.hpp"
#include "wgt/tokenizer.hpp"

namespace {

using wgt::ErrorKind;
using wgt::Tokenizer;
using wgt::Vocab;
using Ids = std::vector<int32_t>;
using Pieces = std::vector<std::string>;

// GPT-2's byte alphabet written out from its definition: the printable ranges stand for
// themselves, the 68 other bytes take U+0100.. in byte order.
std::string spell_byte(int b) {
  static std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int next = 0x100;
    for (int i = 0; i < 256; ++i) {
      const bool printable = (i >= '!' && i <= '~') || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE);
      const int cp = printable ? i : next++;
      std::string s;
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      }
      t[i] = s;
    }
    return t;
  }();
  return table[b];
}

// ids 0..255: the alphabet in byte order (so a lone byte b is token b), then merged tokens.
struct BpeVocab {
  Vocab v;
  BpeVocab() {
    v.model = "gpt2";
    for (int b = 0; b < 256; ++b) v.tokens.push_back(spell_byte(b));
  }
  int32_t add(const std::string& text, int32_t type = 1) {
    if (v.token_types.empty()) v.token_types.assign(v.tokens.size(), 1);
    v.tokens.push_back(text);
    v.token_types.push_back(type);
    return static_cast<int32_t>(v.tokens.size() - 1);
  }
  int32_t id(const std::string& text) const {
    for (size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.tokens[i] == text) return static_cast<int32_t>(i);
    }
    ADD_FAILURE() << "no token " << text;
    return -1;
  }
};

BpeVocab hello_vocab() {
  BpeVocab s;
  s.v.merges = {"l l", "h e", "l o", "he ll", "Ġ w", "o r", "Ġw or", "hell o", "l d", "Ġwor ld", "e l", "a a"};
  for (const char* t : {"ll", "he", "lo", "hell", "Ġw", "or", "Ġwor", "hello", "ld", "Ġworld", "el", "aa"}) s.add(t);
  return s;
}

Pieces split(const std::string& pre, const std::string& text) {
  wgt::detail::PreTokenizer p(pre);
  Pieces out;
  for (std::string_view s : p.split(text)) out.emplace_back(s);
  return out;
}

TEST(TokenizerBpe, AlphabetSpellings) {
  // Spot checks of the table the tests use against the well-known GPT-2 spellings.
  EXPECT_EQ(spell_byte(' '), "Ġ");
  EXPECT_EQ(spell_byte('\n'), "Ċ");
  EXPECT_EQ(spell_byte(0xC3), "Ã");
  EXPECT_EQ(spell_byte(0xAD), "\xC5\x83");  // the last of the 68 remapped bytes: U+0143
  BpeVocab s;
  Tokenizer tok(s.v);
  EXPECT_EQ(wgt::detail::bytes_to_bpe_alphabet(" \n\xC3"), "ĠĊÃ");
  for (int b = 0; b < 256; ++b) {
    ASSERT_EQ(tok.token_to_piece(b), std::string(1, static_cast<char>(b))) << b;
  }
  // A code point outside the alphabet decodes as itself.
  EXPECT_EQ(wgt::detail::bpe_alphabet_to_bytes("a\xE2\x82\xAC"), "a\xE2\x82\xAC");
}

TEST(TokenizerBpe, MergesByRank) {
  BpeVocab s = hello_vocab();
  Tokenizer tok(s.v);
  EXPECT_FALSE(tok.add_bos());  // gpt2 default
  // "hello" | " world" (gpt2 regex). hello: ll(0) < he(1) < lo(2): ll, he, he+ll(3), hell+o(7).
  // Ġworld: Ġw(4), or(5), Ġw+or(6), ld(8), Ġwor+ld(9).
  const Ids ids = tok.encode("hello world");
  EXPECT_EQ(ids, (Ids{s.id("hello"), s.id("Ġworld")}));
  EXPECT_EQ(tok.decode(ids), "hello world");
  EXPECT_EQ(tok.token_to_piece(s.id("Ġworld")), " world");
  // "ell": el (rank 10) is leftmost but ll (rank 0) merges first; "e ll" is no merge.
  EXPECT_EQ(tok.encode("ell"), (Ids{'e', s.id("ll")}));
  // "lol": lo(2); "lo l" is no merge.
  EXPECT_EQ(tok.encode("lol"), (Ids{s.id("lo"), 'l'}));
  // Equal ranks: leftmost first. "aaa" -> aa a; "aaaa" -> aa aa ("aa a" is no merge).
  EXPECT_EQ(tok.encode("aaa"), (Ids{s.id("aa"), 'a'}));
  EXPECT_EQ(tok.encode("aaaa"), (Ids{s.id("aa"), s.id("aa")}));
  // Unicode: é = C3 A9 spelled "Ã©", no merge touches it: h, C3, A9, ll, o.
  EXPECT_EQ(tok.encode("héllo"), (Ids{'h', 0xC3, 0xA9, s.id("ll"), 'o'}));
  EXPECT_EQ(tok.decode(tok.encode("héllo wörld")), "héllo wörld");
  // Invalid UTF-8 is still bytes: the pre-tokenizer isolates it, the alphabet spells it.
  const std::string bad = "a\xFF\x80 b";
  EXPECT_EQ(tok.encode(bad), (Ids{'a', 0xFF, 0x80, ' ', 'b'}));
  EXPECT_EQ(tok.decode(tok.encode(bad)), bad);
  EXPECT_EQ(tok.encode(""), Ids{});
}

TEST(TokenizerBpe, Llama3IgnoresMergesForWholeWordsAndAddsBos) {
  BpeVocab s = hello_vocab();
  const int32_t xyz = s.add("xyz");  // in the vocabulary, but no merge builds it
  const int32_t bos = s.add("<|begin_of_text|>", 3);
  s.v.bos = bos;
  s.v.pre = "gpt2";
  EXPECT_EQ(Tokenizer(s.v).encode("xyz"), (Ids{'x', 'y', 'z'}));
  s.v.pre = "llama-bpe";
  Tokenizer tok(s.v);
  EXPECT_TRUE(tok.add_bos());
  EXPECT_EQ(tok.encode("xyz"), (Ids{bos, xyz}));
  // A word that is not a token still merges: "hello" and " world" as before.
  EXPECT_EQ(tok.encode("hello world", false), (Ids{s.id("hello"), s.id("Ġworld")}));
  EXPECT_EQ(tok.decode(tok.encode("hello world")), "hello world");  // no space stripping in BPE
  s.v.add_bos = false;
  EXPECT_EQ(Tokenizer(s.v).encode("xyz"), (Ids{xyz}));
}

TEST(TokenizerBpe, SpecialTokensInText) {
  BpeVocab s = hello_vocab();
  const int32_t eot = s.add("<|eot_id|>", 3);
  const int32_t tool = s.add("<tool>", 4);
  s.v.eot = eot;
  Tokenizer tok(s.v);
  EXPECT_EQ(tok.encode("hello<|eot_id|> world"), (Ids{s.id("hello"), eot, s.id("Ġworld")}));
  // Not parsed: the text is ordinary text, spelled with its characters.
  const Ids raw = tok.encode("hello<|eot_id|>", true, false);
  EXPECT_EQ(raw, (Ids{s.id("hello"), '<', '|', 'e', 'o', 't', '_', 'i', 'd', '|', '>'}));
  // User-defined tokens are always matched and decode to their text; control ones to nothing.
  EXPECT_EQ(tok.encode("<tool>hello", true, false), (Ids{tool, s.id("hello")}));
  EXPECT_EQ(tok.decode(Ids{tool, s.id("hello"), eot}), "<tool>hello");
  EXPECT_TRUE(tok.is_eog(eot));
  EXPECT_FALSE(tok.is_eog(tool));
}

TEST(TokenizerBpe, EndOfGenerationMarkersFoundByText) {
  // A Qwen2-like vocabulary: eos is <|endoftext|>, the chat turn ends with <|im_end|>, and the
  // GGUF names no eot: both end generation, and eot() is found by its spelling.
  BpeVocab s = hello_vocab();
  const int32_t endoftext = s.add("<|endoftext|>", 3);
  const int32_t im_start = s.add("<|im_start|>", 3);
  const int32_t im_end = s.add("<|im_end|>", 3);
  s.v.eos = endoftext;
  Tokenizer tok(s.v);
  EXPECT_EQ(tok.eot(), im_end);
  EXPECT_EQ(tok.eom(), -1);
  EXPECT_TRUE(tok.is_eog(endoftext));
  EXPECT_TRUE(tok.is_eog(im_end));
  EXPECT_FALSE(tok.is_eog(im_start));
  EXPECT_FALSE(tok.is_eog(s.id("hello")));
  // An eot given by the file is kept; the spelled markers still end generation.
  s.v.eot = im_start;
  Tokenizer given(s.v);
  EXPECT_EQ(given.eot(), im_start);
  EXPECT_TRUE(given.is_eog(im_start));
  EXPECT_TRUE(given.is_eog(im_end));
}

TEST(TokenizerBpe, IncompleteVocabularyUsesCharactersThenUnk) {
  // Only a few characters: a merge result missing from the vocabulary falls back to its
  // characters; a character missing too becomes unk, and without unk it is an error.
  Vocab v;
  v.model = "gpt2";
  v.tokens = {"<unk>", "a", "b"};
  v.token_types = {2, 1, 1};
  v.merges = {"a b"};  // "ab" itself is not a token
  v.unk = 0;
  Tokenizer tok(v);
  EXPECT_EQ(tok.encode("abc"), (Ids{1, 2, 0}));
  v.unk = -1;
  try {
    Tokenizer(v).encode("abc");
    FAIL() << "expected an error";
  } catch (const wgt::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(e.message().find("63"), std::string::npos) << e.message();
  }
}

TEST(TokenizerBpe, RandomBytesRoundTrip) {
  // Byte-level BPE represents any byte string: decode(encode(x)) == x, with the merges and
  // the llama-3 regex exercised on mixed ASCII, UTF-8 and invalid bytes.
  BpeVocab s = hello_vocab();
  s.v.pre = "llama3";
  Tokenizer tok(s.v);
  std::mt19937 rng(19);
  const std::vector<std::string> atoms = {"hello", " world", "ll", "a", " ", "\n", "\r\n", "'s", "123",
                                          "é", "привет", "你好", "\xF0\x9F\x98\x80", "!?"};
  for (int iter = 0; iter < 200; ++iter) {
    std::string text;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 == 0) {
        text += static_cast<char>(rng() % 256);
      } else {
        text += atoms[rng() % atoms.size()];
      }
    }
    const Ids ids = tok.encode(text, false, false);
    ASSERT_EQ(tok.decode(ids), text) << "iteration " << iter;
    Tokenizer::StreamDecoder d(tok, true);
    std::string streamed;
    for (int32_t id : ids) streamed += d.push(id);
    streamed += d.flush();
    ASSERT_EQ(streamed, wgt::utf8_sanitize(text)) << "iteration " << iter;
  }
}

TEST(TokenizerPreTokenize, Contractions) {
  EXPECT_EQ(split("llama3", "don't"), (Pieces{"don", "'t"}));
  EXPECT_EQ(split("llama3", "DON'T we'll"), (Pieces{"DON", "'T", " we", "'ll"}));  // (?i:...)
  EXPECT_EQ(split("gpt2", "DON'T we'll"), (Pieces{"DON", "'", "T", " we", "'ll"}));  // case-sensitive
  EXPECT_EQ(split("qwen2", "I'M"), (Pieces{"I", "'M"}));
}

TEST(TokenizerPreTokenize, Digits) {
  EXPECT_EQ(split("llama3", "12345"), (Pieces{"123", "45"}));
  EXPECT_EQ(split("llama-bpe", "a 1234567"), (Pieces{"a", " ", "123", "456", "7"}));
  EXPECT_EQ(split("qwen2", "12345"), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split("gpt2", "a 12345"), (Pieces{"a", " 12345"}));
  EXPECT_EQ(split("default", "x42y"), (Pieces{"x", "42", "y"}));
  // \p{N} is Unicode: Arabic-Indic digits are digits.
  EXPECT_EQ(split("qwen2", "\xD9\xA1\xD9\xA2"), (Pieces{"\xD9\xA1", "\xD9\xA2"}));
}

TEST(TokenizerPreTokenize, NewlinesAndSpaces) {
  EXPECT_EQ(split("llama3", "a\n\nb"), (Pieces{"a", "\n\n", "b"}));
  EXPECT_EQ(split("llama3", "a \n b"), (Pieces{"a", " \n", " b"}));
  EXPECT_EQ(split("llama3", "Hi!!\n\nok"), (Pieces{"Hi", "!!\n\n", "ok"}));
  // A whitespace run before a word leaves its last space to the word; trailing runs stay whole.
  EXPECT_EQ(split("llama3", "hi   there  "), (Pieces{"hi", "  ", " there", "  "}));
  EXPECT_EQ(split("gpt2", "hi   there  "), (Pieces{"hi", "  ", " there", "  "}));
  // gpt2 has no newline rule: \s+(?!\S) gives up the last newline, which \s+ then takes.
  EXPECT_EQ(split("gpt2", "a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  // llama-3 lets one non-letter lead a word; gpt2 only a space.
  EXPECT_EQ(split("llama3", "(hello"), (Pieces{"(hello"}));
  EXPECT_EQ(split("gpt2", "(hello"), (Pieces{"(", "hello"}));
  EXPECT_EQ(split("llama3", ""), Pieces{});
}

TEST(TokenizerPreTokenize, UnicodeLetters) {
  for (const char* pre : {"llama3", "qwen2", "gpt2"}) {
    EXPECT_EQ(split(pre, "héllo wörld"), (Pieces{"héllo", " wörld"})) << pre;
    EXPECT_EQ(split(pre, "привет мир"), (Pieces{"привет", " мир"})) << pre;
    EXPECT_EQ(split(pre, "你好世界"), (Pieces{"你好世界"})) << pre;
  }
  // Bytes that are not UTF-8 never match: they form pieces of their own.
  EXPECT_EQ(split("llama3", "a\xFF\xFE" "b"), (Pieces{"a", "\xFF\xFE", "b"}));
}

TEST(TokenizerPreTokenize, UnknownNameIsUnsupported) {
  BpeVocab s;
  s.v.pre = "falcon";
  try {
    Tokenizer tok(s.v);
    FAIL() << "expected an error";
  } catch (const wgt::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("falcon"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("llama-bpe"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("qwen2"), std::string::npos) << e.message();
  }
}

}  // namespace
