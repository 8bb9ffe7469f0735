// wgt::Session (wgt/session.hpp): one level of a per-thread, per-device scope whose device
// work the backend records into one submission. The rules are in the header; the backend
// side (suspended batch limits, other threads refused) in webgpu/webgpu_session.cpp.
#include "wgt/session.hpp"

#include <cstdio>
#include <exception>

#include "wgt/runtime.hpp"

namespace wgt {

namespace {
SessionStats diff(const SubmissionCounters& now, const SessionStats& base) {
  return {now.dispatches - base.dispatches, now.submissions - base.submissions, now.host_waits - base.host_waits,
          now.session_splits - base.splits};
}
}  // namespace

Session::Session(Device device) : device_(device), thread_(std::this_thread::get_id()), uncaught_(std::uncaught_exceptions()) {
  if (device.is_cpu()) return;  // CPU ops run synchronously: an empty scope
  auto lk = Runtime::get().lock();
  backend_ = &Runtime::get().device_backend(device, "Session");
  outermost_ = backend_->open_session();
  const SubmissionCounters c = backend_->counters();
  base_ = {c.dispatches, c.submissions, c.host_waits, c.session_splits};
}

Session::~Session() noexcept(false) {
  if (!backend_ || ended_) return;
  if (std::this_thread::get_id() != thread_)
    std::fprintf(stderr, "wgtensor: a Session of %s was destroyed on another thread than its own\n",
                 device_.str().c_str());
  // Left by an exception: the recorded work is submitted, not discarded (tensors made inside
  // may have escaped the scope), and not waited for; nothing may be thrown while unwinding.
  const bool unwinding = std::uncaught_exceptions() > uncaught_ || std::this_thread::get_id() != thread_;
  close(!unwinding);
}

void Session::end(bool wait) {
  if (ended_) throw_error(ErrorKind::RuntimeState, "Session::end", "the session has already ended");
  if (!backend_) {
    ended_ = true;
    return;
  }
  if (std::this_thread::get_id() != thread_)
    throw_error(ErrorKind::RuntimeState, "Session::end", "a session belongs to the thread that opened it");
  close(wait);
}

void Session::close(bool wait) {
  ended_ = true;
  auto lk = Runtime::get().lock();
  if (!outermost_) {
    backend_->close_session();
    return;
  }
  {
    // Closed even when the submission throws, so that the device never stays refusing
    // other threads after its session is gone.
    struct Close {
      DeviceBackend* b;
      ~Close() { b->close_session(); }
    } closer{backend_};
    if (!wait) {
      try {
        backend_->submit();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wgtensor: submitting the work of a Session of %s left by an exception failed: %s\n",
                     device_.str().c_str(), e.what());
      }
      return;
    }
    backend_->submit();
  }
  backend_->synchronize();
}

void Session::flush() {
  if (ended_) throw_error(ErrorKind::RuntimeState, "Session::flush", "the session has ended");
  if (!backend_) return;
  auto lk = Runtime::get().lock();
  backend_->submit();
}

void Session::synchronize() {
  if (ended_) throw_error(ErrorKind::RuntimeState, "Session::synchronize", "the session has ended");
  if (!backend_) return;
  auto lk = Runtime::get().lock();
  backend_->synchronize();
}

SessionStats Session::stats() const {
  if (!backend_) return {};
  auto lk = Runtime::get().lock();
  return diff(backend_->counters(), base_);
}

}  // namespace wgt
