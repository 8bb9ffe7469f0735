// Host mapping of host tensors (wgt/mapping.hpp): zero-copy views of the storage's own bytes,
// the span checks, mapping a view, the mapping rules against ops, moves, and the CPU session.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "../expect_error.hpp"
#include "../on_threads.hpp"
#include "wgt/mapping.hpp"
#include "wgt/session.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

using testing::expect_error;

Tensor iota(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>(i * 3 - 7);
  return Tensor::from_vector(v, {n});
}

TEST(HostMapping, ReadIsZeroCopyOverTheStorage) {
  Tensor t = iota(20);
  Mapping m = map_read(t, {4 * sizeof(int32_t), 10 * sizeof(int32_t)});
  EXPECT_TRUE(m.zero_copy());
  EXPECT_EQ(m.dtype(), DType::I32);
  EXPECT_EQ(m.data(), reinterpret_cast<const uint8_t*>(t.data<int32_t>() + 4)) << "not the storage's own bytes";
  std::span<const int32_t> v = m.as<const int32_t>();
  ASSERT_EQ(v.size(), 10u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<int32_t>((i + 4) * 3) - 7);
}

TEST(HostMapping, WriteIsZeroCopyAndVisibleAtOnce) {
  Tensor t = iota(8);
  Mapping m = map_write(t);
  EXPECT_TRUE(m.zero_copy());
  m.as<int32_t>()[5] = 1000;
  EXPECT_EQ(t.data<int32_t>()[5], 1000);  // the same bytes, before unmap
  m.unmap();
  EXPECT_EQ(t.to_vector<int32_t>()[5], 1000);
  EXPECT_EQ(t.to_vector<int32_t>()[4], 5);
}

TEST(HostMapping, AViewMapsItsOwnElements) {
  Tensor t = Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor row = t.select(0, 1);  // offset 4, contiguous
  Mapping m = map_write(row, {sizeof(float), 2 * sizeof(float)});
  std::span<float> v = m.as<float>();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], 5.f);
  v[1] = -6.f;
  m.unmap();
  EXPECT_EQ(t.to_vector<float>()[6], -6.f);
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t.t()); }, "a transposed view");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t.slice(1, 0, 4, 2)); }, "a stepped view");
}

TEST(HostMapping, SpanChecks) {
  Tensor t = Tensor::from_vector(std::vector<double>(6, 1.0), {6});  // 48 bytes
  constexpr uint64_t kMax = UINT64_MAX;
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {0, 56}); }, "past the end");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {56, MapSpan::kToEnd}); }, "offset past the end");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_read(t, {8, kMax - 7}); }, "offset + size wraps");
  expect_error(ErrorKind::OutOfRange, [&] { (void)map_write(t, {kMax - 7, 8}); }, "offset near the top");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t, {4, 8}); }, "misaligned offset");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(t, {8, 12}); }, "misaligned size");
  expect_error(ErrorKind::InvalidArgument, [&] { (void)map_read(Tensor()); }, "undefined");
  EXPECT_EQ(map_read(t, {48, 0}).size(), 0u);   // empty at the end
  EXPECT_EQ(map_read(t, {8, MapSpan::kToEnd}).size(), 40u);
  Mapping m = map_read(t);
  expect_error(ErrorKind::DTypeMismatch, [&] { (void)m.as<const float>(); }, "wrong element type");
  EXPECT_EQ(m.as<const std::byte>().size(), 48u);
}

TEST(HostMapping, EmptyTensorAndEmptySpan) {
  Tensor e = Tensor::empty({0, 3}, DType::F32);
  Mapping m = map_read(e);
  EXPECT_EQ(m.size(), 0u);
  EXPECT_TRUE(m.as<const float>().empty());
  Mapping w = map_write(iota(4), {8, 0});
  EXPECT_EQ(w.size(), 0u);
  EXPECT_TRUE(w.as<int32_t>().empty());
}

TEST(HostMapping, RulesAgainstOpsAndMappings) {
  Tensor t = iota(16);
  {
    Mapping r = map_read(t);
    Mapping r2 = map_read(t.slice(0, 2, 6));
    EXPECT_EQ(add(t, 1).to_vector<int32_t>()[0], -6) << "an op reads a read-mapped tensor";
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_write(t); }, "writer next to readers");
  }
  Tensor x = Tensor::from_vector(std::vector<float>(2 * 8, 0.5f), {1, 2, 8});
  {
    Mapping w = map_write(t);
    expect_error(ErrorKind::RuntimeState, [&] { (void)add(t, 1); }, "op reading a write-mapped tensor");
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_read(t); }, "reader next to a writer");
    expect_error(ErrorKind::RuntimeState, [&] { (void)map_write(t); }, "two writers");
    Mapping rx = map_read(x);
    expect_error(ErrorKind::RuntimeState, [&] { rope_(x, 3); }, "in place on a read-mapped tensor");
  }
  rope_(x, 3);  // unmapped: runs
  EXPECT_EQ(add(t, 1).to_vector<int32_t>()[1], -3);
}

TEST(HostMapping, MovesUnmapAndMisuse) {
  Tensor t = iota(4);
  Mapping a = map_write(t);
  Mapping b = std::move(a);
  EXPECT_FALSE(a.mapped());
  EXPECT_TRUE(b.mapped());
  expect_error(ErrorKind::RuntimeState, [&] { (void)a.data(); }, "data of a moved-from mapping");
  expect_error(ErrorKind::RuntimeState, [&] { a.unmap(); }, "unmap of a moved-from mapping");
  Mapping c = map_read(iota(2));
  c = std::move(b);  // c's old read mapping ends; c now holds the write mapping
  expect_error(ErrorKind::RuntimeState, [&] { (void)map_read(t); }, "still write-mapped through c");
  c.unmap();
  expect_error(ErrorKind::RuntimeState, [&] { c.unmap(); }, "second unmap");
  EXPECT_NO_THROW((void)map_write(t));
  Mapping none;
  EXPECT_FALSE(none.mapped());
  expect_error(ErrorKind::RuntimeState, [&] { (void)none.mutable_data(); }, "default mapping");
}

TEST(HostMapping, ThreadsMapOneTensorForReading) {
  Tensor t = iota(1000);
  std::vector<int64_t> sums(4, 0);
  wgt::testing::on_threads(4, [&](int i) {
    for (int k = 0; k < 50; ++k) {
      Mapping m = map_read(t);
      int64_t s = 0;
      for (int32_t v : m.as<const int32_t>()) s += v;
      sums[static_cast<size_t>(i)] = s;
    }
  });
  int64_t want = 0;
  for (int64_t i = 0; i < 1000; ++i) want += i * 3 - 7;
  for (int64_t s : sums) EXPECT_EQ(s, want);
  EXPECT_NO_THROW((void)map_write(t)) << "a read mapping of a thread was left behind";
}

TEST(HostSession, ACpuSessionIsAnEmptyScope) {
  Session s(Device::cpu());
  Tensor y = add(iota(3), 1);
  s.flush();
  s.synchronize();
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{-6, -3, 0}));
  EXPECT_EQ(s.stats().submissions, 0u);
  s.end();
  expect_error(ErrorKind::RuntimeState, [&] { s.flush(); }, "flush after end");
}

}  // namespace
}  // namespace wgt
