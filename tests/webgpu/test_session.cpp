// Explicit sessions (wgt/session.hpp): exact submission counts, reads and uploads inside a
// session, nesting, flush/synchronize on demand, exceptions, other threads refused, misuse.
// Results are checked against the same ops on the host (CPU reference).
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "../on_threads.hpp"
#include "webgpu_test.hpp"
#include "wgt/session.hpp"
#include "wgt/wgt.hpp"

namespace wgt {
namespace {

const Device kGpu = Device::webgpu(0);

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

class SessionTest : public wgt::testing::WebGpuTest {
 protected:
  void SetUp() override {
    WebGpuTest::SetUp();
    saved_batch_ = webgpu_batch_stats().max_batch;
    // A small batch limit: without a session, the chains below take several submissions.
    // Early submission stays at its default: a session suspends it too.
    set_webgpu_max_batch(2);
    use_gpu();
    ha_ = random_floats(kN, 1), hb_ = random_floats(kN, 2), hc_ = random_floats(kN, 3);
    a_ = Tensor::from_vector(ha_, {kN}, kGpu);
    b_ = Tensor::from_vector(hb_, {kN}, kGpu);
    c_ = Tensor::from_vector(hc_, {kN}, kGpu);
    synchronize();
  }
  void TearDown() override {
    set_webgpu_max_batch(saved_batch_);
    WebGpuTest::TearDown();
  }
  // ((a*b + c) * a - b) ... : `steps` elementwise ops, one dispatch each.
  static Tensor chain(Tensor x, const Tensor& a, const Tensor& b, int steps) {
    for (int i = 0; i < steps; ++i) x = (i % 2) ? sub(mul(x, a), b) : add(x, b);
    return x;
  }
  // The same on host copies, on the CPU reference (policy cpu-only), as the oracle.
  std::vector<float> expected(int steps, const std::vector<float>& x0) {
    const Policy saved = Runtime::get().policy();
    use_cpu_reference();
    Tensor r = chain(Tensor::from_vector(x0, {kN}), Tensor::from_vector(ha_, {kN}), Tensor::from_vector(hb_, {kN}), steps);
    std::vector<float> out = r.to_vector<float>();
    Runtime::get().set_policy(saved);
    return out;
  }
  static void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << i;
  }
  static uint64_t submits() { return webgpu_batch_stats().submits; }

  static constexpr int64_t kN = 333;
  uint32_t saved_batch_ = 256;
  std::vector<float> ha_, hb_, hc_;
  Tensor a_, b_, c_;
};

// Without a session the same chain takes several submissions (the batch limit of 2): the
// session's single submission below is its doing.
TEST_F(SessionTest, WithoutSessionTheChainTakesSeveralSubmissions) {
  const uint64_t s0 = submits();
  Tensor y = chain(c_, a_, b_, 8);
  synchronize();
  EXPECT_GE(submits() - s0, 4u);
  expect_near(y.to_vector<float>(), expected(8, hc_));
}

TEST_F(SessionTest, NOpsAreOneSubmission) {
  const uint64_t s0 = submits();
  Tensor y;
  {
    Session s(kGpu);
    EXPECT_TRUE(s.outermost());
    y = chain(c_, a_, b_, 12);
    EXPECT_EQ(s.stats().submissions, 0u) << "ops inside a session were submitted before its end";
    EXPECT_EQ(s.stats().dispatches, 18u);  // 6 steps of one op, 6 of two
    EXPECT_EQ(s.stats().splits, 0u);
  }
  EXPECT_EQ(submits() - s0, 1u);
  const uint64_t s1 = submits();
  expect_near(y.to_vector<float>(), expected(12, hc_));
  EXPECT_EQ(submits() - s1, 1u) << "the read after the session: one copy, the session's work was already submitted";
}

TEST_F(SessionTest, LeavingWaitsForTheWork) {
  Session* probe = nullptr;
  uint64_t waits0 = webgpu_batch_stats().host_waits;
  {
    Session s(kGpu);
    probe = &s;
    (void)chain(c_, a_, b_, 3);
    EXPECT_EQ(probe->stats().host_waits, 0u);
  }
  EXPECT_EQ(webgpu_batch_stats().host_waits - waits0, 1u) << "the end of a session waits once";
  EXPECT_EQ(webgpu_batch_stats().in_flight_entries, 0u) << "work still in flight after the session ended";
}

TEST_F(SessionTest, WorkRecordedBeforeTheSessionIsNotItsSubmission) {
  Tensor before = chain(c_, a_, b_, 1);  // one dispatch, below the batch limit: still recorded
  const uint64_t s0 = submits();
  Tensor y;
  {
    Session s(kGpu);
    EXPECT_EQ(submits() - s0, 1u) << "opening a session submits the work recorded before it";
    y = chain(before, a_, b_, 5);
    EXPECT_EQ(s.stats().submissions, 0u);
  }
  EXPECT_EQ(submits() - s0, 2u);
  std::vector<float> x0 = expected(1, hc_);
  expect_near(y.to_vector<float>(), expected(5, x0));
}

TEST_F(SessionTest, ReadInsideSubmitsWhatItDependsOnThenContinues) {
  Tensor y, z;
  uint64_t s0 = submits();
  {
    Session s(kGpu);
    y = chain(c_, a_, b_, 4);
    std::vector<float> mid = y.to_vector<float>();  // a read: submits the recorded work, waits
    EXPECT_EQ(s.stats().submissions, 1u) << "the read's copy rides the session's submission";
    expect_near(mid, expected(4, hc_));
    z = chain(y, a_, b_, 4);
    EXPECT_EQ(s.stats().submissions, 1u);
  }
  EXPECT_EQ(submits() - s0, 2u);
  expect_near(z.to_vector<float>(), expected(4, expected(4, hc_)));
}

TEST_F(SessionTest, UploadInsideKeepsOneSubmissionAndItsOrder) {
  const std::vector<float> hv = random_floats(kN, 9);
  const uint64_t s0 = submits();
  const uint64_t up0 = Runtime::get().stats().bytes_uploaded;
  Tensor u, v, w;
  {
    Session s(kGpu);
    {
      // t dies while its dispatches are recorded: its buffer goes back to the pool and the
      // upload below may get it. The upload must land after the recorded work that writes
      // and reads t, not before it as a plain queue write would.
      Tensor t = add(a_, b_);
      u = mul(t, c_);
    }
    v = Tensor::from_vector(hv, {kN}, kGpu);
    w = add(v, a_);
    EXPECT_EQ(s.stats().submissions, 0u) << "the upload split the session";
  }
  EXPECT_EQ(submits() - s0, 1u);
  EXPECT_EQ(Runtime::get().stats().bytes_uploaded - up0, kN * sizeof(float));
  std::vector<float> want_u(kN), want_w(kN);
  for (int64_t i = 0; i < kN; ++i) want_u[i] = (ha_[i] + hb_[i]) * hc_[i], want_w[i] = hv[i] + ha_[i];
  expect_near(u.to_vector<float>(), want_u);
  expect_near(v.to_vector<float>(), hv);
  expect_near(w.to_vector<float>(), want_w);
}

TEST_F(SessionTest, NestedSessionsSubmitOnceAtTheOutermostEnd) {
  const uint64_t s0 = submits();
  Tensor y;
  {
    Session outer(kGpu);
    y = chain(c_, a_, b_, 3);
    {
      Session inner(kGpu);
      EXPECT_FALSE(inner.outermost());
      y = chain(y, a_, b_, 3);
    }
    EXPECT_EQ(outer.stats().submissions, 0u) << "the inner session's end submitted";
    y = chain(y, a_, b_, 2);
  }
  EXPECT_EQ(submits() - s0, 1u);
  expect_near(y.to_vector<float>(), expected(2, expected(3, expected(3, hc_))));
}

TEST_F(SessionTest, FlushAndSynchronizeOnDemand) {
  const uint64_t s0 = submits();
  Tensor y;
  {
    Session s(kGpu);
    y = chain(c_, a_, b_, 3);
    s.flush();
    EXPECT_EQ(s.stats().submissions, 1u);
    EXPECT_EQ(s.stats().host_waits, 0u) << "flush() waited";
    y = chain(y, a_, b_, 3);
    s.synchronize();
    EXPECT_EQ(s.stats().submissions, 2u);
    EXPECT_EQ(s.stats().host_waits, 1u);
    EXPECT_EQ(webgpu_batch_stats().in_flight_entries, 0u);
    s.flush();  // nothing recorded: no submission
    EXPECT_EQ(s.stats().submissions, 2u);
  }
  EXPECT_EQ(submits() - s0, 2u) << "the end submitted although nothing was recorded";
  expect_near(y.to_vector<float>(), expected(3, expected(3, hc_)));
}

TEST_F(SessionTest, AnExceptionInsideSubmitsTheRecordedWork) {
  const uint64_t s0 = submits();
  const uint64_t waits0 = webgpu_batch_stats().host_waits;
  Tensor escaped;
  try {
    Session s(kGpu);
    escaped = chain(c_, a_, b_, 5);
    throw std::runtime_error("leaving the scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(submits() - s0, 1u) << "the recorded work was not submitted when the scope was left by an exception";
  EXPECT_EQ(webgpu_batch_stats().host_waits, waits0) << "unwinding waited for the device";
  expect_near(escaped.to_vector<float>(), expected(5, hc_));
  // The session is closed: another thread may use the device again.
  wgt::testing::on_threads(1, [&](int) { EXPECT_NO_THROW(add(a_, b_).to_vector<float>()); });
}

TEST_F(SessionTest, AnErrorOfAnOpInsideLeavesTheSessionUsable) {
  Session s(kGpu);
  Tensor y = chain(c_, a_, b_, 2);
  Tensor bad = Tensor::from_vector(std::vector<float>(4, 1.f), {4}, kGpu);
  EXPECT_THROW(add(y, bad), Error);  // shape mismatch: nothing recorded
  y = chain(y, a_, b_, 2);
  s.synchronize();
  EXPECT_EQ(s.stats().submissions, 1u);
  expect_near(y.to_vector<float>(), expected(2, expected(2, hc_)));
}

TEST_F(SessionTest, OtherThreadsAreRefusedWithRuntimeState) {
  Tensor y;
  {
    Session s(kGpu);
    y = chain(c_, a_, b_, 3);
    wgt::testing::on_threads(1, [&](int) {
      auto expect_refused = [](auto f, const char* what) {
        try {
          f();
          ADD_FAILURE() << what << " ran inside another thread's session";
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::RuntimeState) << what << ": " << e.what();
        }
      };
      expect_refused([&] { (void)add(a_, b_); }, "an op");
      expect_refused([&] { (void)a_.to_vector<float>(); }, "a read");
      expect_refused([&] { (void)Tensor::from_vector(std::vector<float>(8, 1.f), {8}, kGpu); }, "an upload");
      expect_refused([&] { synchronize(); }, "synchronize");
      expect_refused([&] { Session other(kGpu); }, "a second session");
      // CPU work is not affected.
      Tensor h = add(Tensor::from_vector(std::vector<float>{1, 2}, {2}), Tensor::from_vector(std::vector<float>{3, 4}, {2}));
      EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{4, 6}));
    });
    EXPECT_EQ(s.stats().submissions, 0u) << "another thread's attempt submitted the session's work";
    y = chain(y, a_, b_, 1);
  }
  expect_near(y.to_vector<float>(), expected(1, expected(3, hc_)));
  // After the session ended, the other thread's work runs.
  wgt::testing::on_threads(2, [&](int) { EXPECT_NO_THROW((void)add(a_, b_).to_vector<float>()); });
}

TEST_F(SessionTest, EndedSessionAndBadDevice) {
  Session s(kGpu);
  (void)chain(c_, a_, b_, 2);
  s.end();
  EXPECT_EQ(s.stats().submissions, 1u);
  for (auto f : {+[](Session& x) { x.end(); }, +[](Session& x) { x.flush(); }, +[](Session& x) { x.synchronize(); }}) {
    try {
      f(s);
      ADD_FAILURE() << "a call on an ended session succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::RuntimeState);
    }
  }
  try {
    Session bad(Device::webgpu(63));
    ADD_FAILURE() << "a session on an absent device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
}

TEST_F(SessionTest, EndWithoutWaitSubmitsOnly) {
  const uint64_t waits0 = webgpu_batch_stats().host_waits;
  Session s(kGpu);
  Tensor y = chain(c_, a_, b_, 2);
  s.end(false);
  EXPECT_EQ(s.stats().submissions, 1u);
  EXPECT_EQ(webgpu_batch_stats().host_waits, waits0);
  expect_near(y.to_vector<float>(), expected(2, hc_));
}

// The params arena of one submission is the bound a session cannot pass: beyond it the
// session splits, and says so.
TEST_F(SessionTest, TheParamsArenaBoundSplitsAndIsCounted) {
  Tensor x = Tensor::from_vector(std::vector<float>{0.f}, {1}, kGpu);
  Tensor one = Tensor::from_vector(std::vector<float>{1.f}, {1}, kGpu);
  constexpr int kOps = 1100;
  SessionStats st;
  {
    Session s(kGpu);
    for (int i = 0; i < kOps; ++i) x = add(x, one);
    st = s.stats();
  }
  EXPECT_GE(st.splits, 1u);
  EXPECT_EQ(st.submissions, st.splits) << "a submission inside the session that no bound forced";
  EXPECT_EQ(x.to_vector<float>()[0], static_cast<float>(kOps));
}

TEST(SessionCpu, ACpuSessionIsAnEmptyScope) {
  Session s(Device::cpu());
  Tensor y = add(Tensor::from_vector(std::vector<float>{1, 2}, {2}), Tensor::from_vector(std::vector<float>{3, 4}, {2}));
  s.flush();
  s.synchronize();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(s.stats().submissions, 0u);
  EXPECT_EQ(s.device(), Device::cpu());
}

}  // namespace
}  // namespace wgt
