// Fuzzing the GGUF reader: a seeded mutation loop over writer-made files and the small corpus in
// tests/data/gguf_corpus (written by tools/fuzz/make_gguf_corpus.py, an encoder independent of
// the C++ writer). Every mutated input must either parse (and then all its values and tensors
// must be readable) or fail with a Format error; any other exception fails the test, and the
// ASan build catches out-of-bounds reads. The loop is bounded in time (CI-friendly).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "../tools/fuzz/gguf_check.hpp"
#include "core/gguf_test_util.hpp"

namespace wgt::test {
namespace {

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(WGT_GGUF_CORPUS_DIR))
    if (e.path().extension() == ".gguf") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GgufCorpus, IndependentlyEncodedFilesParse) {
  const auto files = corpus_files();
  ASSERT_GE(files.size(), 4u) << "corpus missing in " << WGT_GGUF_CORPUS_DIR;
  const std::string dir = WGT_GGUF_CORPUS_DIR;
  const GgufFile v = GgufFile::open(dir + "/values_v2.gguf");
  EXPECT_EQ(v.version(), 2u);
  EXPECT_EQ(v.at("u16").as_int(), 60000);
  EXPECT_EQ(v.at("i16").as_int(), -300);
  EXPECT_EQ(v.at("i64").as_int(), -(int64_t{1} << 40));
  EXPECT_EQ(v.at("f64").as_float(), 1e-9);
  EXPECT_EQ(v.at("toks").as_strings(), (std::vector<std::string>{"<unk>", "<s>", "</s>", "ab"}));
  EXPECT_EQ(v.at("scores").as_floats(), (std::vector<float>{0.f, -1.f, 2.f, 3.5f}));
  EXPECT_EQ(v.at("nested").element(0).as_ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v.at("nested").element(1).as_strings(), (std::vector<std::string>{"x"}));
  const GgufFile t = GgufFile::open(dir + "/tensors.gguf");
  EXPECT_EQ(t.alignment(), 16u);
  EXPECT_EQ(t.tensor("norm").to_vector<float>(), (std::vector<float>{1.f, 1.125f, 1.25f, 1.375f, 1.5f, 1.625f, 1.75f, 1.875f}));
  EXPECT_EQ(t.tensor("h").shape(), (Shape{2, 4}));
  EXPECT_EQ(cast(t.tensor("h"), DType::F32).to_vector<float>()[1], 1.f + 1.f / 1024.f);
  EXPECT_EQ(cast(t.tensor("bf"), DType::F32).to_vector<float>(), (std::vector<float>{1.f, -2.f, 0.f}));
  EXPECT_EQ(t.qtensor("q8").shape(), (Shape{2, 32}));
  EXPECT_EQ(GgufFile::open(dir + "/kquants.gguf").qtensor("q6k").qtype(), QType::Q6_K);
  for (const auto& f : files) EXPECT_TRUE(fuzz::check_gguf_bytes(read_file(f))) << f;
}

// Values that make lengths, counts and offsets hostile when written over a u64 or u32 field.
constexpr uint64_t kInteresting[] = {0, 1, 2, 3, 4, 7, 9, 12, 13, 31, 32, 33, 255, 0x7fff, 0xffff, 0x7fffffff,
                                     0xffffffff, uint64_t{1} << 32, uint64_t{1} << 40, uint64_t{1} << 62,
                                     uint64_t{1} << 63, ~uint64_t{0}, ~uint64_t{0} - 31};

std::vector<uint8_t> mutate(std::vector<uint8_t> b, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % (n ? n : 1)); };
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < rounds && !b.empty(); ++r) {
    switch (rng() % 7) {
      case 0: b[pick(b.size())] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;  // bit flip
      case 1: b[pick(b.size())] = static_cast<uint8_t>(rng()); break;              // random byte
      case 2: {  // an interesting u64 over a (likely) length/count/offset
        const uint64_t v = kInteresting[pick(std::size(kInteresting))];
        const size_t at = pick(b.size());
        for (size_t i = 0; i < 8 && at + i < b.size(); ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
      case 3: {  // an interesting u32 (types, n_dims, version)
        const uint32_t v = static_cast<uint32_t>(kInteresting[pick(std::size(kInteresting))]);
        const size_t at = pick(b.size());
        for (size_t i = 0; i < 4 && at + i < b.size(); ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        break;
      }
      case 4: b.resize(pick(b.size())); break;  // truncate
      case 5: {                                 // delete a chunk
        const size_t at = pick(b.size()), n = std::min(b.size() - at, 1 + pick(16));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      default: {  // duplicate a chunk
        const size_t at = pick(b.size()), n = std::min(b.size() - at, 1 + pick(16));
        std::vector<uint8_t> chunk(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size())), chunk.begin(), chunk.end());
      }
    }
  }
  return b;
}

TEST(GgufFuzz, SeededMutationsParseOrGiveFormatErrors) {
  std::vector<std::vector<uint8_t>> seeds;
  for (const auto& f : corpus_files()) seeds.push_back(read_file(f));
  seeds.push_back(small_model_writer().to_bytes());
  {
    GgufWriter w;
    w.set_alignment(8);
    w.set("n", GgufValue::of_array_array({GgufValue::of_string_array({"a", "b"})}));
    w.add_tensor("q", quantize(Tensor::from_vector(std::vector<float>(256, 0.5f), {1, 256}), QType::Q4_K));
    seeds.push_back(w.to_bytes());
  }
  ASSERT_GE(seeds.size(), 6u);
  std::mt19937_64 rng(20261204);
  const auto start = std::chrono::steady_clock::now();
  int parsed = 0, rejected = 0, iters = 0;
  for (; iters < 20000; ++iters) {
    // Bounded time: sanitizer builds are several times slower; the count stays large enough.
    if (iters % 256 == 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(15)) break;
    const auto input = mutate(seeds[static_cast<size_t>(iters) % seeds.size()], rng);
    bool bad_kind = false;
    try {
      (fuzz::check_gguf_bytes(input, &bad_kind) ? parsed : rejected)++;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iters << ": exception other than wgt::Error: " << e.what();
    }
    ASSERT_FALSE(bad_kind) << "iteration " << iters << ": a parse error that is not Format";
  }
  std::printf("gguf fuzz: %d inputs, %d parsed, %d rejected\n", iters, parsed, rejected);
  EXPECT_GE(iters, 1000);
  // Both outcomes must be exercised, or the mutations are too weak or too destructive.
  EXPECT_GT(parsed, iters / 20) << parsed << " parsed, " << rejected << " rejected";
  EXPECT_GT(rejected, iters / 4) << parsed << " parsed, " << rejected << " rejected";
}

}  // namespace
}  // namespace wgt::test
