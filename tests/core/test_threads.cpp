// Threads on the CPU backends: ops from several threads on shared tensors give the
// single-threaded results, and the runtime's record (stats, trace log, last decision) stays
// exact while other threads run ops, read it and reset it. Also run under ThreadSanitizer
// (scripts/test.sh, build-tsan), which turns any data race here into a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "on_threads.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;

namespace {

using wgt::testing::on_threads;

// Small integers: every product and sum below is exact in f32, so results must match
// bit for bit whatever the kernels' chunking or summation order.
Tensor small_ints(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-3, 3);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(d(rng));
  return Tensor::from_vector(v, shape);
}

class Threads : public ::testing::TestWithParam<CpuMode> {
 protected:
  void SetUp() override {
    saved_ = Runtime::get().policy();
    Policy p = saved_;
    p.mode = PolicyMode::CpuOnly;
    p.cpu_mode = GetParam();
    Runtime::get().set_policy(p);
  }
  void TearDown() override {
    Runtime::get().set_record_log(false);
    Runtime::get().set_policy(saved_);
  }
  Policy saved_;
};

TEST_P(Threads, SharedTensorsGiveSingleThreadedResults) {
  // Odd sizes; b is a transposed (non-contiguous) view shared by every thread.
  const Tensor a = small_ints({37, 29}, 1);
  const Tensor b = small_ints({29, 29}, 2).t();
  const double want = sum(add(matmul(a, b), a)).item();
  const std::vector<float> want_rows = sum(mul(a, a), {1}).to_vector<float>();
  constexpr int kThreads = 4, kIters = 25;
  std::vector<int> wrong(kThreads, 0);
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < kIters; ++i) {
      if (sum(add(matmul(a, b), a)).item() != want) ++wrong[t];
      if (sum(mul(a, a), {1}).to_vector<float>() != want_rows) ++wrong[t];
    }
  });
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST_P(Threads, StatsAndTraceCountEveryOp) {
  const Tensor a = small_ints({8, 8}, 3);
  Runtime& rt = Runtime::get();
  rt.set_record_log(true);
  rt.reset_stats();
  constexpr int kThreads = 4, kIters = 200;
  on_threads(kThreads, [&](int) {
    for (int i = 0; i < kIters; ++i) (void)add(a, a);
  });
  const RuntimeStats st = rt.stats();
  const std::string backend = rt.cpu_backend().name();
  ASSERT_TRUE(st.per_op.count("add"));
  EXPECT_EQ(st.per_op.at("add").at(backend).calls, uint64_t{kThreads * kIters});
  const std::vector<OpDecision> log = rt.trace_log();
  EXPECT_EQ(log.size(), size_t{kThreads * kIters});
  for (const auto& d : log) EXPECT_EQ(d.op, "add");
}

TEST_P(Threads, ReadersAndResettersDuringOps) {
  // Snapshots, resets and log switches while other threads run ops: each snapshot is
  // self-consistent (the per-op counters never exceed the ops run), nothing crashes.
  const Tensor a = small_ints({16, 16}, 4);
  Runtime& rt = Runtime::get();
  // Earlier tests' ops must not count: the checker may take its first snapshot before the
  // resetter's first reset.
  rt.reset_stats();
  rt.set_record_log(true);
  constexpr int kWorkers = 3, kIters = 150;
  std::atomic<int> workers_done{0};
  std::atomic<int> bad{0};
  on_threads(kWorkers + 2, [&](int t) {
    if (t < kWorkers) {
      for (int i = 0; i < kIters; ++i) (void)sum(mul(a, a));
      workers_done.fetch_add(1);
      return;
    }
    while (workers_done.load() < kWorkers) {
      if (t == kWorkers) {
        const RuntimeStats st = rt.stats();
        uint64_t calls = 0;
        if (auto it = st.per_op.find("mul"); it != st.per_op.end())
          for (const auto& [b, c] : it->second) calls += c.calls;
        if (calls > uint64_t{kWorkers * kIters}) bad.fetch_add(1);
        size_t logged = 0;
        for (const auto& d : rt.trace_log()) logged += d.op == "mul";
        if (logged > size_t{kWorkers * kIters}) bad.fetch_add(1);
      } else {
        rt.reset_stats();
        rt.set_record_log(false);
        rt.set_record_log(true);
      }
    }
  });
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(Threads, LastDecisionIsPerThread) {
  // Each thread asks right after its own op: another thread's op in between must not show.
  const Tensor a = small_ints({4, 4}, 5);
  constexpr int kThreads = 4, kIters = 300;
  std::vector<int> wrong(kThreads, 0);
  on_threads(kThreads, [&](int t) {
    for (int i = 0; i < kIters; ++i) {
      const char* want = t % 2 ? "matmul" : "neg";
      (void)(t % 2 ? matmul(a, a) : neg(a));
      if (Runtime::get().last_decision().op != want) ++wrong[t];
    }
  });
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST_P(Threads, PolicyChangesWhileOpsRun) {
  // set_policy from one thread while others run ops: each op sees one whole policy.
  const Tensor a = small_ints({9, 7}, 6);
  const std::vector<float> want = add(a, a).to_vector<float>();
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::thread flipper([&] {
    Policy p = Runtime::get().policy();
    for (int i = 0; !stop.load(); ++i) {
      p.cpu_mode = i % 2 ? CpuMode::Fast : CpuMode::Reference;
      Runtime::get().set_policy(p);
    }
  });
  on_threads(3, [&](int) {
    for (int i = 0; i < 100; ++i)
      if (add(a, a).to_vector<float>() != want) wrong.fetch_add(1);
  });
  stop = true;
  flipper.join();
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(CpuModes, Threads, ::testing::Values(CpuMode::Fast, CpuMode::Reference),
                         [](const auto& info) { return info.param == CpuMode::Fast ? "Fast" : "Reference"; });

}  // namespace
