// Host mapping of device tensors (wgt/mapping.hpp): the staging copy (map_read / map_write
// with write-back), spans and views, the typed errors of every misuse, mapped tensors
// against ops, eviction, pinning, sessions and threads.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

#include "../expect_error.hpp"
#include "../on_threads.hpp"
#include "webgpu_test.hpp"
#include "wgt/mapping.hpp"
#include "wgt/session.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

using testing::expect_error;

const Device kGpu = Device::webgpu(0);

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-3.f, 3.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

class MappingTest : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    use_gpu();
  }
};

TEST_F(MappingTest, MapReadOfADeviceTensorIsAStagingCopyOfItsSpan) {
  const auto h = random_floats(97, 1);
  Tensor t = mul(Tensor::from_vector(h, {97}, kGpu), 2.0);  // recorded: the map waits for it
  Mapping m = map_read(t, {5 * sizeof(float), 40 * sizeof(float)});
  EXPECT_FALSE(m.zero_copy());
  EXPECT_EQ(m.mode(), MapMode::Read);
  ASSERT_EQ(m.size(), 40 * sizeof(float));
  std::span<const float> v = m.as<const float>();
  ASSERT_EQ(v.size(), 40u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], 2.f * h[5 + i]) << i;
  m.unmap();
  EXPECT_FALSE(m.mapped());
}

TEST_F(MappingTest, MapWriteWritesBackAtUnmapAndKeepsUnwrittenBytes) {
  const auto h = random_floats(64, 2);
  Tensor t = Tensor::from_vector(h, {64}, kGpu);
  const uint64_t up0 = Runtime::get().stats().bytes_uploaded;
  {
    Mapping m = map_write(t, {8 * sizeof(float), 16 * sizeof(float)});
    EXPECT_FALSE(m.zero_copy());
    std::span<float> v = m.as<float>();
    for (size_t i = 0; i < v.size(); i += 2) v[i] = -1.f;  // every other element only
  }  // written back here
  EXPECT_EQ(Runtime::get().stats().bytes_uploaded - up0, 16 * sizeof(float));
  const std::vector<float> got = t.to_vector<float>();
  for (size_t i = 0; i < 64; ++i) {
    const bool written = i >= 8 && i < 24 && (i - 8) % 2 == 0;
    EXPECT_EQ(got[i], written ? -1.f : h[i]) << i;
  }
}

TEST_F(MappingTest, AWriteBackIsOrderedAfterEarlierOpsAndBeforeLaterOnes) {
  const auto h = random_floats(50, 3);
  Tensor t = Tensor::from_vector(h, {50}, kGpu);
  Tensor before = add(t, 1.0);  // issued before the mapping: sees the old bytes
  {
    Mapping m = map_write(t);
    for (float& x : m.as<float>()) x = 10.f;
  }
  Tensor after = add(t, 1.0);
  const auto b = before.to_vector<float>(), a = after.to_vector<float>();
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(b[i], h[i] + 1.f) << i;
    EXPECT_EQ(a[i], 11.f) << i;
  }
}

TEST_F(MappingTest, MappingAContiguousViewMapsItsOwnBytes) {
  const auto h = random_floats(6 * 7, 4);
  Tensor t = Tensor::from_vector(h, {6, 7}, kGpu);
  Tensor rows = t.slice(0, 2, 5);  // rows 2..4: contiguous, offset 14 elements
  {
    Mapping m = map_write(rows, {7 * sizeof(float), 7 * sizeof(float)});  // row 3 of t
    for (float& x : m.as<float>()) x = 0.5f;
  }
  const auto got = t.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i / 7 == 3 ? 0.5f : h[i]) << i;
  Mapping r = map_read(rows);
  ASSERT_EQ(r.size(), 21 * sizeof(float));
  EXPECT_EQ(r.as<const float>()[0], h[14]);
  EXPECT_EQ(r.as<const float>()[7], 0.5f);
}

TEST_F(MappingTest, EmptySpanMovesNoByte) {
  Tensor t = Tensor::from_vector(random_floats(10, 5), {10}, kGpu);
  const RuntimeStats s0 = Runtime::get().stats();
  {
    Mapping m = map_read(t, {4 * sizeof(float), 0});
    EXPECT_EQ(m.size(), 0u);
    EXPECT_TRUE(m.as<const float>().empty());
    Mapping w = map_read(t, {10 * sizeof(float), MapSpan::kToEnd});  // at the end: empty too
    EXPECT_EQ(w.size(), 0u);
  }
  {
    Mapping w = map_write(t, {0, 0});
    EXPECT_EQ(w.size(), 0u);
  }
  const RuntimeStats s1 = Runtime::get().stats();
  EXPECT_EQ(s1.bytes_downloaded, s0.bytes_downloaded);
  EXPECT_EQ(s1.bytes_uploaded, s0.bytes_uploaded);
}

TEST_F(MappingTest, BadSpansAndDtypesAreTypedErrors) {
  Tensor t = Tensor::from_vector(random_floats(16, 6), {4, 4}, kGpu);
  constexpr uint64_t kMax = UINT64_MAX;
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {0, 17 * 4}); }, "past the end");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {68, MapSpan::kToEnd}); }, "offset past the end");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {4, kMax - 3}); }, "offset + size overflows");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_write(t, {kMax - 3, 8}); }, "huge offset");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t, {2, 4}); }, "misaligned offset");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_write(t, {0, 6}); }, "misaligned size");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t.t()); }, "strided view");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(Tensor()); }, "undefined tensor");
  Mapping m = map_read(t);
  expect_error(ErrorKind::DTypeMismatch, [&] { (void)m.as<const int32_t>(); }, "wrong element type");
  expect_error(ErrorKind::RuntimeState, [&] { (void)m.as<float>(); }, "mutable view of a read mapping");
  expect_error(ErrorKind::RuntimeState, [&] { (void)m.mutable_data(); }, "mutable bytes of a read mapping");
  EXPECT_EQ(m.as<const std::byte>().size(), 64u);  // raw bytes of any dtype
  m.unmap();
  expect_error(ErrorKind::RuntimeState, [&] { m.unmap(); }, "second unmap");
  expect_error(ErrorKind::RuntimeState, [&] { (void)m.data(); }, "data after unmap");
}

TEST_F(MappingTest, MappedTensorsAgainstOpsAndOtherMappings) {
  Tensor t = Tensor::from_vector(random_floats(32, 7), {32}, kGpu);
  {
    Mapping r1 = map_read(t);
    Mapping r2 = map_read(t);  // several readers
    EXPECT_NO_THROW((void)add(t, 1.0).to_vector<float>()) << "an op may read a read-mapped tensor";
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_write(t); }, "write mapping next to readers");
  }
  {
    Mapping w = map_write(t, {0, 16});
    expect_error(ErrorKind::RuntimeState, [&] { (void)add(t, 1.0); }, "an op reading a write-mapped tensor");
    expect_error(ErrorKind::RuntimeState, [&] { (void)add(t.slice(0, 8, 16), 1.0); }, "a view of it");
    expect_error(ErrorKind::RuntimeState, [&] { (void)t.to_vector<float>(); }, "a read of it");
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_read(t); }, "a read mapping next to a writer");
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_write(t.slice(0, 20, 30)); }, "a second writer");
  }
  EXPECT_NO_THROW((void)add(t, 1.0).to_vector<float>()) << "the tensor is usable again after unmap";
}

TEST_F(MappingTest, AnInPlaceOpOnAMappedTensorIsRefused) {
  // rope_ writes its input in place: refused while any mapping of the tensor is open.
  Tensor x = Tensor::from_vector(random_floats(2 * 8, 8), {1, 2, 8}, kGpu);
  Mapping r = map_read(x);
  expect_error(ErrorKind::RuntimeState, [&] { rope_(x, 0); }, "rope_ on a read-mapped tensor");
}

TEST_F(MappingTest, AMappedTensorIsNotEvicted) {
  const Policy saved = Runtime::get().policy();
  const auto h = random_floats(1024, 9);
  Tensor t = Tensor::from_vector(h, {1024}, kGpu);  // 4 KiB
  Mapping m = map_write(t);
  m.as<float>()[0] = 42.f;
  Policy p = Runtime::get().policy();
  p.memory_budget = Runtime::get().memory_stats().allocated + 8 * 1024;  // little room beyond what is held
  Runtime::get().set_policy(p);
  // Allocations that need t's bytes to be evicted, were it evictable: they fail instead.
  uint64_t evictions0 = Runtime::get().stats().evictions;
  try {
    std::vector<Tensor> keep;
    for (int i = 0; i < 8; ++i) keep.push_back(Tensor::empty({1024}, DType::F32, kGpu));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
  }
  EXPECT_TRUE(Runtime::get().is_resident(t)) << "a mapped tensor was evicted";
  EXPECT_EQ(Runtime::get().stats().evictions, evictions0);
  Runtime::get().set_policy(saved);
  m.unmap();
  const auto got = t.to_vector<float>();
  EXPECT_EQ(got[0], 42.f);
  EXPECT_EQ(got[1], h[1]);
}

TEST_F(MappingTest, PinningIsIndependentOfMapping) {
  Tensor t = Tensor::from_vector(random_floats(8, 10), {8}, kGpu);
  pin(t);
  {
    Mapping m = map_write(t);
    unpin(t);  // allowed while mapped; the mapping still keeps it resident
    m.as<float>()[3] = 7.f;
    pin(t);
  }
  EXPECT_EQ(t.to_vector<float>()[3], 7.f);
  unpin(t);
  expect_error(ErrorKind::InvalidArgument, [&] { unpin(t); }, "the mapping took no pin");
}

TEST_F(MappingTest, AMappedEvictedTensorReadsAndWritesItsHostCopy) {
  const Policy saved = Runtime::get().policy();
  const auto h = random_floats(256, 11);
  Tensor t = Tensor::from_vector(h, {256}, kGpu);
  // A budget with no room left: every new tensor evicts the least recently used ones, and t
  // goes once the older ones have gone (the new ones are younger).
  Policy p = Runtime::get().policy();
  p.memory_budget = Runtime::get().memory_stats().allocated;
  Runtime::get().set_policy(p);
  std::vector<Tensor> keep;
  for (int i = 0; i < 256 && Runtime::get().is_resident(t); ++i) keep.push_back(Tensor::empty({256}, DType::F32, kGpu));
  Runtime::get().set_policy(saved);
  ASSERT_FALSE(Runtime::get().is_resident(t)) << "the budget did not evict the tensor";
  keep.clear();
  {
    Mapping m = map_write(t, {0, 4 * sizeof(float)});
    EXPECT_EQ(m.as<float>()[1], h[1]);
    m.as<float>()[1] = -5.f;
  }
  EXPECT_FALSE(Runtime::get().is_resident(t)) << "the write-back went to the device instead of the host copy";
  const auto got = t.to_vector<float>();
  EXPECT_EQ(got[1], -5.f);
  EXPECT_EQ(got[200], h[200]);
}

TEST_F(MappingTest, MapReadInsideASessionSubmitsItsWork) {
  const auto h = random_floats(40, 12);
  Tensor x = Tensor::from_vector(h, {40}, kGpu);
  synchronize();
  Session s(kGpu);
  Tensor y = mul(add(x, 1.0), 3.0);
  Mapping m = map_read(y);
  EXPECT_EQ(s.stats().submissions, 1u);
  for (size_t i = 0; i < 40; ++i) EXPECT_NEAR(m.as<const float>()[i], (h[i] + 1.f) * 3.f, 1e-5f) << i;
}

TEST_F(MappingTest, MapWriteInsideASessionDoesNotSplitIt) {
  const auto h = random_floats(40, 13);
  Tensor x = Tensor::from_vector(h, {40}, kGpu);
  Tensor w = Tensor::from_vector(std::vector<float>(40, 0.f), {40}, kGpu);
  synchronize();
  Tensor y, z;
  SessionStats st;
  {
    Mapping m = map_write(w);  // before the session: its read needs no submission inside
    for (float& v : m.as<float>()) v = 2.f;
    Session s(kGpu);
    y = add(x, 1.0);
    m.unmap();  // an upload after recorded work: recorded into the session's submission
    z = mul(y, w);
    st = s.stats();
  }
  EXPECT_EQ(st.submissions, 0u);
  const auto got = z.to_vector<float>();
  for (size_t i = 0; i < 40; ++i) EXPECT_NEAR(got[i], (h[i] + 1.f) * 2.f, 1e-5f) << i;
}

TEST_F(MappingTest, AMappingMayEndOnAnotherThread) {
  Tensor t = Tensor::from_vector(random_floats(16, 14), {16}, kGpu);
  Mapping m = map_write(t);
  m.as<float>()[0] = 3.f;
  wgt::testing::on_threads(1, [&](int) { m.unmap(); });
  EXPECT_EQ(t.to_vector<float>()[0], 3.f);
}

TEST_F(MappingTest, AWriteBackRefusedByAnotherThreadsSessionStaysMapped) {
  Tensor t = Tensor::from_vector(random_floats(16, 15), {16}, kGpu);
  Mapping m = map_write(t);
  m.as<float>()[2] = 9.f;
  // An op first, so that the session has recorded work and the write-back needs the device.
  Session s(kGpu);
  Tensor y = add(Tensor::from_vector(random_floats(16, 16), {16}, kGpu), 1.0);
  wgt::testing::on_threads(1, [&](int) {
    expect_error(ErrorKind::RuntimeState, [&] { m.unmap(); }, "a write-back inside another thread's session");
  });
  EXPECT_TRUE(m.mapped()) << "the refused write-back dropped the mapping";
  m.unmap();  // the session's own thread: recorded into its submission
  s.synchronize();
  EXPECT_EQ(t.to_vector<float>()[2], 9.f);
}

}  // namespace
}  // namespace wgt
