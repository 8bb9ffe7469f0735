// GGUF reader on corrupt, truncated and hostile files: each case gives a Format error naming
// what is wrong, before any large allocation (huge counts and lengths are checked against the
// bytes left).
#include <gtest/gtest.h>

#include <cstring>

#include "core/gguf_test_util.hpp"
#include "wgt/gguf.hpp"

namespace wgt::test {
namespace {

void expect_format(const GgufBytes& b, const std::string& part) {
  expect_error([&] { parse_bytes(b.v); }, ErrorKind::Format, part);
}

TEST(GgufHostile, MagicAndVersion) {
  expect_format(GgufBytes{}, "empty file");
  expect_format(GgufBytes{}.raw("GGU", 3), "not a GGUF file");
  expect_format(GgufBytes{}.raw("GGML", 4).u32(3).u64(0).u64(0), "not a GGUF file");
  expect_format(GgufBytes{}.raw("GGUF", 4), "truncated: version");
  expect_format(GgufBytes::header(0, 0, 1), "version 1 is not supported");
  expect_format(GgufBytes::header(0, 0, 4), "unsupported GGUF version 4");
  expect_format(GgufBytes::header(0, 0, 0x03000000), "big-endian");
  expect_format(GgufBytes{}.raw("GGUF", 4).u32(3).u64(0), "truncated: metadata key/value count");
  EXPECT_EQ(parse_bytes(GgufBytes::header(0, 0).v).keys().size(), 0u);  // the smallest valid file
}

TEST(GgufHostile, EveryTruncationOfAValidFileIsAFormatError) {
  const std::vector<uint8_t> full = small_model_writer().to_bytes();
  parse_bytes(full);
  for (size_t n = 0; n < full.size(); ++n)
    expect_error([&] { parse_bytes(std::vector<uint8_t>(full.begin(), full.begin() + n)); }, ErrorKind::Format, "test.gguf");
}

TEST(GgufHostile, HugeCounts) {
  expect_format(GgufBytes::header(uint64_t{1} << 40, 0), "tensor count 1099511627776 cannot fit");
  expect_format(GgufBytes::header(0, ~uint64_t{0}), "metadata count 18446744073709551615 cannot fit");
  expect_format(GgufBytes::header(2, 0).zeros(40), "tensor count 2 cannot fit");
}

TEST(GgufHostile, BadStrings) {
  expect_format(GgufBytes::header(0, 1).u64(uint64_t{1} << 60).zeros(16), "has length 1152921504606846976");
  expect_format(GgufBytes::header(0, 1).u64(0).zeros(16), "key of metadata entry 0 has length 0");
  expect_format(GgufBytes::header(0, 1).str("k").u32(8).u64(uint64_t{1} << 60).zeros(8), "string value of key 'k' has length");
  expect_format(GgufBytes::header(0, 1).str("k").u32(8).u64(5).raw("abc", 3), "string value of key 'k' has length 5");
  expect_format(GgufBytes::header(1, 0).u64(~uint64_t{0}).zeros(24), "name of tensor 0 has length");
}

TEST(GgufHostile, HugeArrays) {
  expect_format(GgufBytes::header(0, 1).str("a").u32(9).u32(0).u64(uint64_t{1} << 62).zeros(8),
                "key 'a' claims 4611686018427387904 elements of u8");
  expect_format(GgufBytes::header(0, 1).str("a").u32(9).u32(8).u64(uint64_t{1} << 62).zeros(8), "elements of string");
  expect_format(GgufBytes::header(0, 1).str("a").u32(9).u32(12).u64(3).zeros(16), "elements of f64");
  expect_format(GgufBytes::header(0, 1).str("a").u32(9).u32(9).u64(~uint64_t{0}).zeros(24), "elements of array");
  // an array of strings whose 2nd string claims 2^60 bytes
  expect_format(GgufBytes::header(0, 1).str("a").u32(9).u32(8).u64(2).str("x").u64(uint64_t{1} << 60).zeros(4),
                "element 1 of key 'a' has length");
}

TEST(GgufHostile, NestedArrayDepthBomb) {
  GgufBytes b = GgufBytes::header(0, 1).str("deep").u32(9);
  for (int i = 0; i < 10000; ++i) b.u32(9).u64(1);
  b.u32(0).u64(0);
  expect_format(b, "nests arrays deeper than");
  // moderate nesting is fine
  GgufBytes ok = GgufBytes::header(0, 1).str("n").u32(9);
  for (int i = 0; i < 5; ++i) ok.u32(9).u64(1);
  ok.u32(4).u64(1).u32(7);
  const GgufFile f = parse_bytes(ok.v);
  GgufValue v = f.at("n");
  for (int i = 0; i < 5; ++i) v = v.element(0);
  EXPECT_EQ(v.as_ints(), (std::vector<int64_t>{7}));
}

TEST(GgufHostile, BadValueTypes) {
  expect_format(GgufBytes::header(0, 1).str("k").u32(13).zeros(8), "key 'k' has unknown value type 13");
  expect_format(GgufBytes::header(0, 1).str("k").u32(9).u32(77).u64(0), "array of unknown value type 77");
  expect_format(GgufBytes::header(0, 1).str("k").u32(7).u8(2), "bool byte is 2");
  expect_format(GgufBytes::header(0, 1).str("k").u32(9).u32(7).u64(2).u8(1).u8(9), "'k'[1]: bool byte is 9");
  expect_format(GgufBytes::header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2), "duplicate metadata key 'k'");
}

TEST(GgufHostile, BadAlignment) {
  auto with_alignment = [](auto put) {
    GgufBytes b = GgufBytes::header(0, 1).str("general.alignment");
    put(b);
    return b;
  };
  expect_format(with_alignment([](GgufBytes& b) { b.u32(4).u32(0); }), "general.alignment is 0");
  expect_format(with_alignment([](GgufBytes& b) { b.u32(4).u32(48); }), "general.alignment is 48");
  expect_format(with_alignment([](GgufBytes& b) { b.u32(5).u32(0xFFFFFFF0u); }), "general.alignment is -16");
  expect_format(with_alignment([](GgufBytes& b) { b.u32(10).u64(~uint64_t{0}); }), "exceeds the int64 range");
  expect_format(with_alignment([](GgufBytes& b) { b.u32(8).str("32"); }), "expected an unsigned integer");
  expect_format(with_alignment([](GgufBytes& b) { b.u32(4).u32(uint32_t{1} << 31); }), "not a power of two in 1..2^30");
  EXPECT_EQ(parse_bytes(with_alignment([](GgufBytes& b) { b.u32(4).u32(16); }).v).alignment(), 16u);
}

// A file with the given tensor infos (f32 tensors unless stated) and `data` zero bytes of data.
GgufBytes tensors_file(const std::function<void(GgufBytes&)>& infos, uint64_t n, size_t data) {
  GgufBytes b = GgufBytes::header(n, 0);
  infos(b);
  b.pad_to(32).zeros(data);
  return b;
}

TEST(GgufHostile, BadTensorInfos) {
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {1, 1, 1, 1, 1, 1, 1}, 0, 0); }, 1, 64),
                "tensor 't' has 7 dims (at most 4)");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {uint64_t{1} << 63}, 0, 0); }, 1, 64),
                "exceeds the int64 range");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0); }, 1, 64),
                "element count overflows");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {0, uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0); }, 1, 64),
                "element count overflows");  // zero bytes, but the shape is still impossible
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {uint64_t{1} << 62}, 0, 0); }, 1, 64),
                "has too many elements");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {4}, 99, 0); }, 1, 64),
                "tensor 't' has ggml type 99");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("q", {33, 2}, 8, 0); }, 1, 256),
                "ne[0] = 33 is not a multiple of the block size 32");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {4}, 0, 16); }, 1, 64),
                "offset 16 is not a multiple of the alignment 32");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {4}, 0, 0).tensor("t", {4}, 0, 32); }, 2, 64),
                "duplicate tensor name 't'");
}

TEST(GgufHostile, TensorBytesOutsideTheFileOrOverlapping) {
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {17}, 0, 0); }, 1, 64), "tensor 't' (f32, ne [17], 68 bytes");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {1}, 0, uint64_t{1} << 62); }, 1, 64), "past the end");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {1}, 0, ~uint64_t{0} - 31); }, 1, 64), "past the end");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("t", {1 << 20, 1 << 20}, 0, 0); }, 1, 64), "past the end");
  // no room for the data section at all
  GgufBytes nodata = GgufBytes::header(1, 0);
  nodata.tensor("t", {0}, 0, 0);
  expect_format(nodata, "the data section would start at 64");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32); }, 2, 128),
                "tensors 'a' and 'b' overlap");
  expect_format(tensors_file([](GgufBytes& b) { b.tensor("a", {8}, 0, 32).tensor("b", {8}, 0, 32); }, 2, 128), "overlap");
  // adjacent and empty tensors are fine
  const GgufFile f = parse_bytes(
      tensors_file([](GgufBytes& b) { b.tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 32).tensor("e", {0}, 0, 32); }, 3, 64).v);
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.tensor("e").numel(), 0);
}

}  // namespace
}  // namespace wgt::test
