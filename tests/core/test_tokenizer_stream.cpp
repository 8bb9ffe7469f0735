// Streaming decode (complete UTF-8 only, U+FFFD for what cannot complete), utf8_sanitize's
// maximal-subpart replacement, and the tokenizer's validation errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "wgt/error.hpp"
#include "wgt/tokenizer.hpp"

namespace {

using wgt::ErrorKind;
using wgt::Tokenizer;
using wgt::Vocab;
using Ids = std::vector<int32_t>;

const std::string kFFFD = "\xEF\xBF\xBD";

// SPM vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3..258 byte tokens, 259 "▁", 260 "a", 261 "▁a".
Vocab spm_vocab() {
  Vocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.tokens.push_back(buf);
    v.token_types.push_back(6);
  }
  for (const char* t : {"\xE2\x96\x81", "a", "\xE2\x96\x81" "a"}) {
    v.tokens.push_back(t);
    v.token_types.push_back(1);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  return v;
}
int32_t byte_id(unsigned char b) { return 3 + b; }

// Feeds ids one by one; returns what each push gave, then the flush.
std::vector<std::string> stream(const Tokenizer& tok, const Ids& ids, bool from_start = false) {
  Tokenizer::StreamDecoder d(tok, from_start);
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(d.push(id));
  out.push_back(d.flush());
  return out;
}

TEST(TokenizerStream, HoldsSplitCharactersUntilComplete) {
  Tokenizer tok(spm_vocab());
  // "é" = C3 A9 and "😀" = F0 9F 98 80 arriving as byte tokens.
  const auto out = stream(tok, {byte_id(0xC3), byte_id(0xA9), 260, byte_id(0xF0), byte_id(0x9F),
                                byte_id(0x98), byte_id(0x80), 2});
  EXPECT_EQ(out, (std::vector<std::string>{"", "é", "a", "", "", "", "\xF0\x9F\x98\x80", "", ""}));
}

TEST(TokenizerStream, InvalidSequencesBecomeReplacementCharacters) {
  Tokenizer tok(spm_vocab());
  // C3 then 'a': C3 can no longer complete -> U+FFFD, then 'a', in the same push.
  EXPECT_EQ(stream(tok, {byte_id(0xC3), 260}), (std::vector<std::string>{"", kFFFD + "a", ""}));
  // A lone continuation byte cannot start anything: replaced at once.
  EXPECT_EQ(stream(tok, {byte_id(0x80)}), (std::vector<std::string>{kFFFD, ""}));
  // A truncated 4-byte sequence at the end: one U+FFFD, from flush().
  EXPECT_EQ(stream(tok, {byte_id(0xF0), byte_id(0x9F), byte_id(0x98)}),
            (std::vector<std::string>{"", "", "", kFFFD}));
  // E0 80: 80 is no valid second byte after E0 (overlong): two maximal subparts.
  EXPECT_EQ(stream(tok, {byte_id(0xE0), byte_id(0x80)}), (std::vector<std::string>{"", kFFFD + kFFFD, ""}));
}

TEST(TokenizerStream, FromStartMatchesDecode) {
  Tokenizer tok(spm_vocab());
  const Ids ids = tok.encode("a é a");  // <s> ▁a ▁ C3 A9 ▁a
  ASSERT_EQ(ids, (Ids{1, 261, 259, byte_id(0xC3), byte_id(0xA9), 261}));
  EXPECT_EQ(tok.decode(ids), "a é a");
  std::string joined;
  for (const auto& s : stream(tok, ids, /*from_start=*/true)) joined += s;
  EXPECT_EQ(joined, "a é a");
  // Continuing text (default) keeps every space: generated tokens follow a prompt.
  joined.clear();
  for (const auto& s : stream(tok, {261, 261})) joined += s;
  EXPECT_EQ(joined, " a a");
  // With an invalid byte in the middle, the stream equals the sanitized decode.
  const Ids bad = {1, 261, byte_id(0xC3), 261, byte_id(0xFF), byte_id(0xE2), byte_id(0x82)};
  joined.clear();
  for (const auto& s : stream(tok, bad, true)) joined += s;
  EXPECT_EQ(joined, wgt::utf8_sanitize(tok.decode(bad)));
  EXPECT_EQ(joined, "a" + kFFFD + " a" + kFFFD + kFFFD);
  // After flush() the decoder starts over (from_start strips again).
  Tokenizer::StreamDecoder d(tok, true);
  EXPECT_EQ(d.push(261), "a");
  EXPECT_EQ(d.push(byte_id(0xC3)), "");
  EXPECT_EQ(d.flush(), kFFFD);
  EXPECT_EQ(d.push(261), "a");
}

TEST(TokenizerStream, Utf8SanitizeMaximalSubparts) {
  EXPECT_EQ(wgt::utf8_sanitize(""), "");
  EXPECT_EQ(wgt::utf8_sanitize("héllo \xF0\x9F\x98\x80"), "héllo \xF0\x9F\x98\x80");
  EXPECT_EQ(wgt::utf8_sanitize("\xF0\x9F\x98" "A"), kFFFD + "A");              // truncated 4-byte
  EXPECT_EQ(wgt::utf8_sanitize("\xC0\xAF"), kFFFD + kFFFD);                   // overlong
  EXPECT_EQ(wgt::utf8_sanitize("\xED\xA0\x80"), kFFFD + kFFFD + kFFFD);       // surrogate
  EXPECT_EQ(wgt::utf8_sanitize("\xF4\x90\x80\x80"), kFFFD + kFFFD + kFFFD + kFFFD);  // > U+10FFFF
  EXPECT_EQ(wgt::utf8_sanitize("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");      // U+10FFFF itself
  EXPECT_EQ(wgt::utf8_sanitize("\xE1\x80" "a\xFF"), kFFFD + "a" + kFFFD);
}

TEST(TokenizerErrors, OutOfRangeIds) {
  Tokenizer tok(spm_vocab());
  const int32_t n = tok.n_vocab();
  auto expect_range = [](auto&& fn) {
    try {
      fn();
      FAIL() << "expected an error";
    } catch (const wgt::Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::OutOfRange);
    }
  };
  expect_range([&] { tok.decode(Ids{1, n}); });
  expect_range([&] { tok.decode(Ids{-1}); });
  expect_range([&] { tok.token_to_piece(n); });
  expect_range([&] { tok.token_text(-5); });
  expect_range([&] { tok.token_type(n); });
  expect_range([&] {
    Tokenizer::StreamDecoder d(tok);
    d.push(n);
  });
}

void expect_format(const Vocab& v, const std::string& needle) {
  try {
    Tokenizer tok(v);
    FAIL() << "expected a Format error mentioning " << needle;
  } catch (const wgt::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

TEST(TokenizerErrors, VocabularyValidation) {
  ASSERT_NO_THROW(Tokenizer{spm_vocab()});
  Vocab v = spm_vocab();
  v.scores.pop_back();
  expect_format(v, "scores");
  v = spm_vocab();
  v.scores[5] = std::numeric_limits<float>::quiet_NaN();
  expect_format(v, "NaN");
  v = spm_vocab();
  v.token_types.push_back(1);
  expect_format(v, "token types");
  v = spm_vocab();
  v.token_types[260] = 7;
  expect_format(v, "type 7");
  v = spm_vocab();
  v.token_types[260] = 6;  // "a" is no <0xNN>
  expect_format(v, "<0xNN>");
  v = spm_vocab();
  v.eos = 9999;
  expect_format(v, "eos");
  v = spm_vocab();
  v.unk = -2;
  expect_format(v, "unk");
  v = spm_vocab();
  v.tokens.clear();
  v.scores.clear();
  v.token_types.clear();
  v.bos = v.eos = v.unk = -1;
  expect_format(v, "no tokens");
  v = spm_vocab();
  v.add_eos = true;
  v.eos = -1;
  expect_format(v, "eos");

  Vocab b;
  b.model = "gpt2";
  b.tokens = {"a", "b", "ab"};
  for (const char* bad : {"ab", "a ", " a", ""}) {
    b.merges = {"a b", bad};
    expect_format(b, "merge 1");
  }
  b.merges = {"a b", "a b c"};  // the right part may hold spaces; it simply never applies
  EXPECT_EQ(Tokenizer(b).encode("ab"), (Ids{2}));
}

TEST(TokenizerErrors, UnknownModelIsUnsupported) {
  Vocab v = spm_vocab();
  v.model = "bert";
  try {
    Tokenizer tok(v);
    FAIL() << "expected an error";
  } catch (const wgt::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("bert"), std::string::npos);
    EXPECT_NE(e.message().find("gpt2"), std::string::npos);
  }
}

}  // namespace
