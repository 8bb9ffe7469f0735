// Shared by the thread tests (tests/core/test_threads.cpp, tests/webgpu/test_threads.cpp).
#pragma once
#include <atomic>
#include <thread>
#include <vector>

namespace wgt::testing {

// Runs fn(thread_index) on n threads at once (released together, so their calls overlap) and
// joins them.
template <class F>
void on_threads(int n, F fn) {
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      fn(i);
    });
  for (auto& t : ts) t.join();
}

}  // namespace wgt::testing
