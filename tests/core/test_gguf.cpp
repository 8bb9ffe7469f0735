// GGUF reader/writer: round trips of every metadata value type and every tensor type, alignment,
// versions, zero-copy tensors over the mapping, file I/O, and the shared llama fixture.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "core/gguf_test_util.hpp"
#include "wgt/gguf.hpp"
#include "wgt/ops.hpp"
#include "wgt/quant.hpp"

namespace wgt::test {
namespace {

std::string tmp_path(const std::string& stem) {
  return ::testing::TempDir() + "wgt_gguf_" + stem + "_" + std::to_string(::getpid()) + ".gguf";
}

std::vector<float> randn(size_t n, uint32_t seed, float sd = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

TEST(Gguf, RoundTripEveryValueType) {
  GgufWriter w;
  w.set_u8("a.u8", 255);
  w.set_i8("a.i8", -128);
  w.set_u16("a.u16", 65535);
  w.set_i16("a.i16", -32768);
  w.set_u32("a.u32", 4000000000u);
  w.set_i32("a.i32", -2000000000);
  w.set_f32("a.f32", 1.5e-5f);
  w.set_bool("a.bool", true);
  w.set_string("a.string", std::string("h\xc3\xa9llo\0x", 8));  // UTF-8 and an embedded NUL survive
  w.set_u64("a.u64", std::numeric_limits<uint64_t>::max());
  w.set_i64("a.i64", std::numeric_limits<int64_t>::min());
  w.set_f64("a.f64", -1e300);
  w.set_strings("a.strings", {"", "x", std::string(300, 'y')});
  w.set_f32s("a.f32s", {1.f, -2.f, 0.125f});
  w.set_i32s("a.i32s", {-1, 0, 7});
  w.set_i64s("a.i64s", {std::numeric_limits<int64_t>::max(), -5});
  w.set_u8s("a.u8s", {});
  w.set("a.bools", GgufValue::of_scalar_array(GgufType::Bool, {1, 0, 1}));
  w.set("a.nested", GgufValue::of_array_array({GgufValue::of_string_array({"p", "q"}),
                                               GgufValue::of_scalar_array(GgufType::U16, {1, 0, 2, 0}),
                                               GgufValue::of_array_array({})}));
  w.set_u32("a.u32", 7);  // replaced, keeps its first position
  const GgufFile f = parse_bytes(w.to_bytes());

  const std::vector<std::string> keys = {"a.u8", "a.i8", "a.u16", "a.i16", "a.u32", "a.i32", "a.f32",
                                         "a.bool", "a.string", "a.u64", "a.i64", "a.f64", "a.strings", "a.f32s",
                                         "a.i32s", "a.i64s", "a.u8s", "a.bools", "a.nested"};
  EXPECT_EQ(f.keys(), keys);
  EXPECT_EQ(f.at("a.u8").type(), GgufType::U8);
  EXPECT_EQ(f.at("a.u8").as_int(), 255);
  EXPECT_EQ(f.at("a.i8").as_int(), -128);
  EXPECT_EQ(f.at("a.u16").as_int(), 65535);
  EXPECT_EQ(f.at("a.i16").as_int(), -32768);
  EXPECT_EQ(f.at("a.u32").type(), GgufType::U32);
  EXPECT_EQ(f.at("a.u32").as_int(), 7);
  EXPECT_EQ(f.at("a.i32").as_int(), -2000000000);
  EXPECT_EQ(f.at("a.f32").type(), GgufType::F32);
  EXPECT_EQ(f.at("a.f32").as_float(), static_cast<double>(1.5e-5f));
  EXPECT_TRUE(f.at("a.bool").as_bool());
  EXPECT_EQ(f.at("a.string").as_string(), std::string("h\xc3\xa9llo\0x", 8));
  EXPECT_EQ(f.at("a.u64").as_u64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.at("a.i64").as_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.at("a.f64").as_float(), -1e300);
  EXPECT_EQ(f.at("a.strings").as_strings(), (std::vector<std::string>{"", "x", std::string(300, 'y')}));
  EXPECT_EQ(f.at("a.f32s").elem_type(), GgufType::F32);
  EXPECT_EQ(f.at("a.f32s").as_floats(), (std::vector<float>{1.f, -2.f, 0.125f}));
  EXPECT_EQ(f.at("a.i32s").as_ints(), (std::vector<int64_t>{-1, 0, 7}));
  EXPECT_EQ(f.at("a.i32s").as_floats(), (std::vector<float>{-1.f, 0.f, 7.f}));
  EXPECT_EQ(f.at("a.i64s").as_ints(), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), -5}));
  EXPECT_EQ(f.at("a.u8s").size(), 0u);
  EXPECT_EQ(f.at("a.u8s").elem_type(), GgufType::U8);
  EXPECT_EQ(f.at("a.bools").size(), 3u);
  EXPECT_TRUE(f.at("a.bools").element(0).as_bool());
  EXPECT_FALSE(f.at("a.bools").element(1).as_bool());
  const GgufValue& n = f.at("a.nested");
  ASSERT_EQ(n.elem_type(), GgufType::Array);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n.element(0).as_strings(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(n.element(1).as_ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(n.element(2).size(), 0u);
  EXPECT_EQ(f.tensors().size(), 0u);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
}

TEST(Gguf, TypedAccessorsNameTheKey) {
  GgufWriter w;
  w.set_u64("big", uint64_t{1} << 63);
  w.set_i32("neg", -3);
  w.set_string("s", "text");
  w.set_f32s("fs", {1.f});
  w.set_strings("ss", {"a"});
  w.set_u8("small", 3);
  const GgufFile f = parse_bytes(w.to_bytes());
  expect_error([&] { f.at("big").as_int(); }, ErrorKind::Format, "'big'");
  EXPECT_EQ(f.at("big").as_u64(), uint64_t{1} << 63);
  EXPECT_EQ(f.at("big").as_float(), std::ldexp(1.0, 63));
  expect_error([&] { f.at("neg").as_u64(); }, ErrorKind::Format, "negative");
  expect_error([&] { f.at("s").as_int(); }, ErrorKind::Format, "key 's' holds string \"text\", expected an integer");
  expect_error([&] { f.at("s").as_float(); }, ErrorKind::Format, "'s'");
  expect_error([&] { f.at("s").as_bool(); }, ErrorKind::Format, "'s'");
  expect_error([&] { f.at("small").as_string(); }, ErrorKind::Format, "'small'");
  expect_error([&] { f.at("fs").as_strings(); }, ErrorKind::Format, "'fs'");
  expect_error([&] { f.at("fs").as_ints(); }, ErrorKind::Format, "'fs'");
  expect_error([&] { f.at("ss").as_floats(); }, ErrorKind::Format, "'ss'");
  expect_error([&] { f.at("s").size(); }, ErrorKind::Format, "'s'");
  expect_error([&] { f.at("fs").element(1); }, ErrorKind::OutOfRange, "'fs'");
  expect_error([&] { f.at("nope"); }, ErrorKind::Format, "missing key 'nope'");
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_EQ(f.get_int("nope", 11), 11);
  EXPECT_EQ(f.get_int("small", 11), 3);
  EXPECT_EQ(f.get_float("nope", 0.5), 0.5);
  EXPECT_EQ(f.get_float("neg", 0.5), -3.0);
  EXPECT_EQ(f.get_string("nope", "d"), "d");
  EXPECT_EQ(f.get_string("s", "d"), "text");
  EXPECT_TRUE(f.get_bool("nope", true));
  expect_error([&] { f.get_string("small", "d"); }, ErrorKind::Format, "'small'");
}

TEST(Gguf, RoundTripDenseTensorsOfEveryRankZeroCopy) {
  GgufWriter w;
  const auto v = randn(2 * 3 * 5 * 7, 1);
  const Tensor f32 = Tensor::from_vector(v, {2, 3, 5, 7});
  w.add_tensor("f32.4d", f32);
  w.add_tensor("f16.2d", cast(f32.reshape({42, 5}), DType::F16));
  w.add_tensor("bf16.3d", cast(f32.reshape({6, 5, 7}), DType::BF16));
  w.add_tensor("f64.1d", cast(f32.flatten(), DType::F64));
  w.add_tensor("i32.2d", Tensor::from_vector(std::vector<int32_t>{1, -2, 3, -4, 5, 6}, {3, 2}));
  w.add_tensor("i64.1d", Tensor::from_vector(std::vector<int64_t>{int64_t{1} << 40, -1}, {2}));
  w.add_tensor("scalar", Tensor::from_vector(std::vector<float>{42.f}, {}));
  w.add_tensor("empty", Tensor::empty({0, 3}, DType::F32));
  w.add_tensor("strided", f32.reshape({42, 5}).t());  // written contiguous
  EXPECT_THROW(w.add_tensor("f32.4d", f32), Error);   // duplicate name
  expect_error([&] { w.add_tensor("r5", f32.reshape({1, 2, 3, 5, 7})); }, ErrorKind::RankMismatch, "r5");
  expect_error([&] { w.add_tensor("u8", Tensor::empty({2}, DType::U8)); }, ErrorKind::InvalidArgument, "u8");

  const GgufFile f = parse_bytes(w.to_bytes());
  ASSERT_EQ(f.tensors().size(), 9u);
  const GgufTensorInfo* i4 = f.find_tensor("f32.4d");
  ASSERT_NE(i4, nullptr);
  EXPECT_EQ(i4->ne, (std::vector<int64_t>{7, 5, 3, 2}));  // reversed
  EXPECT_EQ(i4->ggml_type, ggml_type::F32);
  EXPECT_EQ(i4->nbytes, v.size() * 4);
  for (const auto& t : f.tensors()) EXPECT_EQ((t.offset - f.data_offset()) % 32, 0u) << t.name;
  EXPECT_EQ(f.data_offset() % 32, 0u);

  const Tensor r4 = f.tensor("f32.4d");
  EXPECT_EQ(r4.shape(), (Shape{2, 3, 5, 7}));
  EXPECT_EQ(r4.to_vector<float>(), v);
  // zero-copy: the tensor's bytes are the file's bytes
  EXPECT_EQ(static_cast<const uint8_t*>(r4.data_ptr()), f.data(*i4));
  EXPECT_TRUE(r4.storage()->host_borrowed());
  EXPECT_EQ(cast(f.tensor("f16.2d"), DType::F32).to_vector<float>(),
            cast(cast(f32, DType::F16), DType::F32).to_vector<float>());
  EXPECT_EQ(f.tensor("f16.2d").shape(), (Shape{42, 5}));
  EXPECT_EQ(cast(f.tensor("bf16.3d"), DType::F32).to_vector<float>(),
            cast(cast(f32, DType::BF16), DType::F32).to_vector<float>());
  EXPECT_EQ(f.tensor("f64.1d").dtype(), DType::F64);
  EXPECT_EQ(cast(f.tensor("f64.1d"), DType::F32).to_vector<float>(), v);
  EXPECT_EQ(f.tensor("i32.2d").to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3, -4, 5, 6}));
  EXPECT_EQ(f.tensor("i64.1d").to_vector<int64_t>(), (std::vector<int64_t>{int64_t{1} << 40, -1}));
  EXPECT_EQ(f.tensor("scalar").shape(), Shape{});
  EXPECT_EQ(f.tensor("scalar").item(), 42.0);
  EXPECT_EQ(f.tensor("empty").shape(), (Shape{0, 3}));
  EXPECT_EQ(f.tensor("strided").to_vector<float>(), f32.reshape({42, 5}).t().contiguous().to_vector<float>());
  expect_error([&] { f.tensor("nope"); }, ErrorKind::Format, "missing tensor 'nope'");
  expect_error([&] { f.qtensor("f16.2d"); }, ErrorKind::Format, "f16");
}

TEST(Gguf, TensorOutlivesTheFileObjectAndOpsReadIt) {
  Tensor t;
  {
    GgufWriter w;
    w.add_tensor("x", Tensor::from_vector(std::vector<float>{1.f, 2.f, 3.f, 4.f}, {2, 2}));
    t = parse_bytes(w.to_bytes()).tensor("x");
  }  // the GgufFile is gone; the tensor keeps the bytes alive
  EXPECT_EQ(add(t, t).to_vector<float>(), (std::vector<float>{2.f, 4.f, 6.f, 8.f}));
  EXPECT_EQ(matmul(t, t).to_vector<float>(), (std::vector<float>{7.f, 10.f, 15.f, 22.f}));
}

TEST(Gguf, RoundTripEveryQuantizedType) {
  const auto v = randn(3 * 512, 7, 0.05f);
  const Tensor w32 = Tensor::from_vector(v, {3, 512});
  GgufWriter w;
  for (int i = 0; i < kNumQTypes; ++i) {
    const QType q = static_cast<QType>(i);
    w.add_tensor(std::string("q.") + qtype_name(q), quantize(w32, q));
  }
  const GgufFile f = parse_bytes(w.to_bytes());
  for (int i = 0; i < kNumQTypes; ++i) {
    const QType q = static_cast<QType>(i);
    const std::string name = std::string("q.") + qtype_name(q);
    SCOPED_TRACE(name);
    const GgufTensorInfo& info = f.tensor_info(name);
    EXPECT_EQ(info.ggml_type, qtype_info(q).ggml_type_id);
    EXPECT_EQ(info.ne, (std::vector<int64_t>{512, 3}));
    const QTensor ref = quantize(w32, q);
    EXPECT_EQ(info.nbytes, ref.nbytes());
    const QTensor r = f.qtensor(name);
    EXPECT_EQ(r.qtype(), q);
    EXPECT_EQ(r.rows(), 3);
    EXPECT_EQ(r.cols(), 512);
    EXPECT_EQ(r.data(), f.data(info));  // zero-copy
    EXPECT_EQ(std::memcmp(r.data(), ref.data(), ref.nbytes()), 0);
    EXPECT_EQ(dequantize(r).to_vector<float>(), dequantize(ref).to_vector<float>());
    expect_error([&] { f.tensor(name); }, ErrorKind::Format, qtype_name(q));
  }
}

TEST(Gguf, QTensorShapes) {
  const auto v = randn(64, 3);
  const QTensor q = quantize(Tensor::from_vector(v, {1, 64}), QType::Q8_0);
  GgufWriter w;
  w.add_raw("one_d", {64}, ggml_type::Q8_0, q.data(), q.nbytes());
  w.add_raw("trailing_one", {64, 1, 1}, ggml_type::Q8_0, q.data(), q.nbytes());
  w.add_raw("three_d", {32, 1, 2}, ggml_type::Q8_0, q.data(), q.nbytes());
  const GgufFile f = parse_bytes(w.to_bytes());
  EXPECT_EQ(f.qtensor("one_d").shape(), (Shape{1, 64}));
  EXPECT_EQ(f.qtensor("trailing_one").shape(), (Shape{1, 64}));
  EXPECT_EQ(dequantize(f.qtensor("one_d")).to_vector<float>(), dequantize(q).to_vector<float>());
  expect_error([&] { f.qtensor("three_d"); }, ErrorKind::Format, "three_d");
}

TEST(Gguf, KnownButUnsupportedTypesParseAndNameTheType) {
  GgufWriter w;
  std::vector<uint8_t> q2k(84 * 2, 0);  // two Q2_K super-blocks
  w.add_raw("q2k", {256, 2}, 10, q2k.data(), q2k.size());
  w.add_raw("i16", {3}, 25, q2k.data(), 6);
  const GgufFile f = parse_bytes(w.to_bytes());
  EXPECT_EQ(f.tensor_info("q2k").nbytes, 168u);
  expect_error([&] { f.tensor("q2k"); }, ErrorKind::Format, "q2_k");
  expect_error([&] { f.qtensor("q2k"); }, ErrorKind::Format, "q2_k");
  expect_error([&] { f.tensor("i16"); }, ErrorKind::Format, "i16");
  EXPECT_EQ(ggml_type_name(12), "q4_k");
  EXPECT_EQ(ggml_type_name(1000), "type 1000");
}

TEST(Gguf, AlignmentIsHonouredAndUnalignedBytesAreCopied) {
  for (uint64_t al : {1u, 8u, 64u, 4096u}) {
    SCOPED_TRACE(al);
    GgufWriter w;
    w.set_alignment(al);
    w.add_tensor("h", Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {3}));
    w.add_tensor("odd", cast(Tensor::from_vector(std::vector<float>{1.f, 2.f, 3.f}, {3}), DType::F16));  // 6 bytes
    w.add_tensor("after", Tensor::from_vector(std::vector<float>{5.f, 6.f}, {2}));
    const auto bytes = w.to_bytes();
    const GgufFile f = parse_bytes(bytes);
    EXPECT_EQ(f.alignment(), al);
    EXPECT_EQ(f.data_offset() % al, 0u);
    EXPECT_EQ(f.find("general.alignment") != nullptr, al != 32);
    for (const auto& t : f.tensors()) EXPECT_EQ((t.offset - f.data_offset()) % al, 0u);
    const GgufTensorInfo& after = f.tensor_info("after");
    if (al == 1) {
      EXPECT_EQ(after.offset - f.data_offset(), 12u + 6u);  // packed back to back
    }
    const Tensor t = f.tensor("after");
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5.f, 6.f}));
    // Zero-copy exactly when the address suits a float; otherwise an aligned copy.
    const bool aligned = reinterpret_cast<uintptr_t>(f.data(after)) % 4 == 0;
    EXPECT_EQ(t.storage()->host_borrowed(), aligned);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 4, 0u);
  }
  GgufWriter w;
  EXPECT_THROW(w.set_alignment(0), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
}

TEST(Gguf, VersionsTwoAndThree) {
  for (uint32_t ver : {2u, 3u}) {
    GgufWriter w = small_model_writer();
    w.set_version(ver);
    const auto bytes = w.to_bytes();
    uint32_t stored;
    std::memcpy(&stored, bytes.data() + 4, 4);
    EXPECT_EQ(stored, ver);
    const GgufFile f = parse_bytes(bytes);
    EXPECT_EQ(f.version(), ver);
    EXPECT_EQ(f.at("general.architecture").as_string(), "llama");
    EXPECT_EQ(f.tensors().size(), 4u);
  }
  GgufWriter w;
  EXPECT_THROW(w.set_version(1), Error);
}

TEST(Gguf, WriteOpenAndCopyOnWrite) {
  const std::string path = tmp_path("cow");
  small_model_writer().write(path);
  EXPECT_NE(::access((path + ".tmp").c_str(), F_OK), 0);  // the temporary is gone
  {
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.name(), path);
    EXPECT_EQ(f.at("llama.block_count").as_int(), 2);
    const Tensor n = f.tensor("norm.weight");
    EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
    EXPECT_TRUE(n.storage()->host_borrowed());
    n.data<float>()[0] = 99.f;  // a write through the mapping is private to this process
    EXPECT_EQ(f.tensor("norm.weight").to_vector<float>()[0], 99.f);
  }
  const GgufFile g = GgufFile::open(path);
  EXPECT_EQ(g.tensor("norm.weight").to_vector<float>()[0], 1.f);  // the file did not change
  std::remove(path.c_str());
  expect_error([&] { small_model_writer().write("/nonexistent-dir/x.gguf"); }, ErrorKind::IO, "/nonexistent-dir/x.gguf");
}

TEST(Gguf, OpenErrorsAreIoOrFormat) {
  expect_error([] { GgufFile::open("/nonexistent-dir/model.gguf"); }, ErrorKind::IO, "/nonexistent-dir/model.gguf");
  expect_error([] { GgufFile::open(::testing::TempDir()); }, ErrorKind::IO, "not a regular file");
  const std::string empty = tmp_path("empty");
  { std::ofstream(empty, std::ios::binary); }
  expect_error([&] { GgufFile::open(empty); }, ErrorKind::Format, empty + ": empty file");
  std::remove(empty.c_str());
}

TEST(Gguf, StorageExternalKeepsAliveAndReleasesOnDropHost) {
  auto owner = std::make_shared<std::vector<uint8_t>>(16, 7);
  auto st = Storage::external(owner->data(), owner->size(), owner);
  EXPECT_EQ(owner.use_count(), 2);
  EXPECT_EQ(st->host_data(), owner->data());
  EXPECT_TRUE(st->has_host());
  EXPECT_TRUE(st->host_borrowed());
  EXPECT_TRUE(st->device().is_cpu());
  st->ensure_host();  // already has (borrowed) bytes: no allocation
  EXPECT_EQ(st->host_data(), owner->data());
  st->drop_host();  // what an upload does: the reference goes, the bytes are not freed
  EXPECT_EQ(owner.use_count(), 1);
  EXPECT_FALSE(st->has_host());
  st->ensure_host();  // what a download does: bytes of its own
  EXPECT_FALSE(st->host_borrowed());
  EXPECT_NE(st->host_data(), owner->data());
  EXPECT_EQ((*owner)[0], 7);
  auto s2 = Storage::external(owner->data(), 16, owner);
  expect_error([&] { s2->borrow_host(owner->data(), owner); }, ErrorKind::RuntimeState, "already has host bytes");
  expect_error([] { Storage::external(nullptr, 4, nullptr); }, ErrorKind::InvalidArgument, "null");
}

// ---------------------------------------------------------------- the shared llama fixture

std::string fixture(const std::string& name) { return std::string(WGT_FIXTURES_DIR) + "/" + name; }

float half_by_hand(uint16_t h) {  // independent of wgt::f16_to_f32
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return static_cast<float>(s ? -v : v);
}

TEST(GgufFixture, GoldF16MhaLoads) {
  const std::string path = fixture("gold-f16-mha.gguf");
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing fixture " << path << " (the shared fixtures must sit beside the checkout, "
                                                          "or configure with -DWGT_FIXTURES_DIR=...)";
  const std::vector<uint8_t> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.file_size(), raw.size());
  uint64_t n_tensors, n_kv;  // the header read by hand
  std::memcpy(&n_tensors, raw.data() + 8, 8);
  std::memcpy(&n_kv, raw.data() + 16, 8);
  EXPECT_EQ(f.tensors().size(), n_tensors);
  EXPECT_EQ(f.keys().size(), n_kv);
  EXPECT_EQ(f.keys().front(), "general.architecture");
  EXPECT_EQ(f.at("general.architecture").as_string(), "llama");
  EXPECT_EQ(f.at("llama.block_count").as_int(), 3);
  EXPECT_EQ(f.at("llama.embedding_length").as_int(), 192);
  EXPECT_EQ(f.at("llama.feed_forward_length").as_int(), 512);
  EXPECT_EQ(f.at("llama.attention.head_count").as_int(), 6);
  EXPECT_NEAR(f.at("llama.attention.layer_norm_rms_epsilon").as_float(), 1e-5, 1e-12);
  EXPECT_EQ(f.at("llama.rope.freq_base").as_float(), 10000.0);
  const auto tokens = f.at("tokenizer.ggml.tokens").as_strings();
  ASSERT_EQ(tokens.size(), 800u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3 + 0x0A], "<0x0A>");

  // 3 layers x 9 tensors + token_embd + output_norm (tied embeddings: no output.weight)
  EXPECT_EQ(f.tensors().size(), 29u);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
  const GgufTensorInfo& emb = f.tensor_info("token_embd.weight");
  EXPECT_EQ(emb.ggml_type, ggml_type::F16);
  EXPECT_EQ(emb.ne, (std::vector<int64_t>{192, 800}));
  EXPECT_EQ(emb.nbytes, 192u * 800u * 2u);
  const GgufTensorInfo& norm = f.tensor_info("output_norm.weight");
  EXPECT_EQ(norm.ggml_type, ggml_type::F32);
  EXPECT_EQ(norm.ne, (std::vector<int64_t>{192}));
  for (int l = 0; l < 3; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output"})
      EXPECT_EQ(f.tensor_info(b + n + ".weight").ne, (std::vector<int64_t>{192, 192})) << b << n;
    EXPECT_EQ(f.tensor_info(b + "ffn_gate.weight").ne, (std::vector<int64_t>{192, 512}));
    EXPECT_EQ(f.tensor_info(b + "ffn_up.weight").ne, (std::vector<int64_t>{192, 512}));
    EXPECT_EQ(f.tensor_info(b + "ffn_down.weight").ne, (std::vector<int64_t>{512, 192}));
    EXPECT_EQ(f.tensor_info(b + "attn_norm.weight").ggml_type, ggml_type::F32);
    EXPECT_EQ(f.tensor_info(b + "ffn_norm.weight").ggml_type, ggml_type::F32);
    EXPECT_EQ(f.tensor_info(b + "ffn_down.weight").ggml_type, ggml_type::F16);
  }

  // Values: the tensor against the file's bytes decoded by hand.
  const Tensor e = f.tensor("token_embd.weight");
  EXPECT_EQ(e.shape(), (Shape{800, 192}));
  EXPECT_EQ(e.dtype(), DType::F16);
  const std::vector<float> ev = cast(e, DType::F32).to_vector<float>();
  for (size_t idx : {size_t{0}, size_t{1}, size_t{191}, size_t{192}, size_t{77777}, size_t{800 * 192 - 1}}) {
    uint16_t h;
    std::memcpy(&h, raw.data() + emb.offset + 2 * idx, 2);
    EXPECT_EQ(ev[idx], half_by_hand(h)) << idx;
  }
  double sum = 0, sq = 0;
  for (float x : ev) sum += x, sq += double(x) * x;
  EXPECT_NEAR(std::sqrt(sq / ev.size() - (sum / ev.size()) * (sum / ev.size())), 0.08, 0.005);  // N(0, 0.08^2)
  const std::vector<float> nv = f.tensor("output_norm.weight").to_vector<float>();
  for (size_t i : {size_t{0}, size_t{100}, size_t{191}}) {
    float x;
    std::memcpy(&x, raw.data() + norm.offset + 4 * i, 4);
    EXPECT_EQ(nv[i], x);
  }
  double nsum = 0;
  for (float x : nv) nsum += x;
  EXPECT_NEAR(nsum / nv.size(), 1.0, 0.05);  // 1 + N(0, 0.1^2)
}

}  // namespace
}  // namespace wgt::test
