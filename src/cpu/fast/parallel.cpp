// Persistent thread pool behind parallel_for (see parallel.hpp for the threading policy).
#include "cpu/fast/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if __has_include(<cblas.h>)
#include <cblas.h>
#endif

#include "runtime/settings.hpp"
#include "wgt/error.hpp"

namespace wgt::cpu_fast {
namespace {

thread_local bool t_in_pool_task = false;

int threads_from_env() {
  unsigned hw = std::thread::hardware_concurrency();
  int n = hw ? static_cast<int>(hw) : 1;
  if (const auto& set = *settings().num_threads) n = static_cast<int>(*set);
  return n;
}

class ThreadPool {
 public:
  explicit ThreadPool(int n) : n_(n) {
#ifdef OPENBLAS_VERSION
    // Keep BLAS to the same budget (see the header for why BLAS owns its threads for GEMM).
    if (settings().num_threads->has_value() || !foreign_env("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(n);
#endif
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this] { worker_loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return n_; }

  // Runs fn(chunk) for chunk in [0, nchunks); returns false (nothing run) when the pool is
  // busy or the caller is itself a pool task, so the caller runs serially instead.
  bool run(int64_t nchunks, const std::function<void(int64_t)>& fn) {
    if (t_in_pool_task || n_ <= 1) return false;
    std::unique_lock<std::mutex> owner(submit_m_, std::try_to_lock);
    if (!owner.owns_lock()) return false;
    Job job;
    job.fn = &fn;
    job.nchunks = nchunks;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      ++generation_;
    }
    cv_work_.notify_all();
    work_chunks(job);
    std::unique_lock<std::mutex> lk(m_);
    // The job lives on this stack frame: wait until no worker still holds a pointer to it.
    cv_done_.wait(lk, [&] { return job.done == job.nchunks && job.active == 0; });
    job_ = nullptr;
    if (job.error) std::rethrow_exception(job.error);
    return true;
  }

 private:
  struct Job {
    const std::function<void(int64_t)>* fn = nullptr;
    int64_t nchunks = 0;
    std::atomic<int64_t> next{0};
    int64_t done = 0;    // guarded by m_
    int active = 0;      // workers inside work_chunks, guarded by m_
    std::exception_ptr error;  // guarded by m_
  };

  void work_chunks(Job& job) {
    t_in_pool_task = true;
    int64_t finished = 0;
    for (;;) {
      int64_t c = job.next.fetch_add(1);
      if (c >= job.nchunks) break;
      try {
        (*job.fn)(c);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m_);
        if (!job.error) job.error = std::current_exception();
      }
      ++finished;
    }
    t_in_pool_task = false;
    std::lock_guard<std::mutex> lk(m_);
    job.done += finished;
    if (job.done == job.nchunks) cv_done_.notify_all();
  }
  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_work_.wait(lk, [&] { return stop_ || (job_ && generation_ != seen); });
        if (stop_) return;
        seen = generation_;
        job = job_;
        ++job->active;
      }
      work_chunks(*job);
      std::lock_guard<std::mutex> lk(m_);
      if (--job->active == 0 && job->done == job->nchunks) cv_done_.notify_all();
    }
  }

  int n_;
  std::vector<std::thread> workers_;
  std::mutex submit_m_;  // one job at a time
  std::mutex m_;
  std::condition_variable cv_work_, cv_done_;
  Job* job_ = nullptr;   // guarded by m_
  uint64_t generation_ = 0;
  bool stop_ = false;
};

ThreadPool& pool() {
  static ThreadPool p(threads_from_env());
  return p;
}

}  // namespace

int num_threads() { return pool().size(); }

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n = end - begin;
  const int nt = num_threads();
  if (n <= grain || nt <= 1 || t_in_pool_task) {
    fn(begin, end);
    return;
  }
  // A few chunks per thread so uneven rows or a slow core balance out dynamically.
  int64_t nchunks = std::min<int64_t>((n + grain - 1) / grain, static_cast<int64_t>(nt) * 4);
  const int64_t step = (n + nchunks - 1) / nchunks;
  nchunks = (n + step - 1) / step;
  std::function<void(int64_t)> chunk = [&](int64_t c) {
    int64_t b = begin + c * step;
    fn(b, std::min(end, b + step));
  };
  if (!pool().run(nchunks, chunk)) fn(begin, end);
}

}  // namespace wgt::cpu_fast
