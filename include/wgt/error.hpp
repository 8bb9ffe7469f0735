// The one error type of wgtensor: a kind, the op that raised it, and an actionable message.
#pragma once
#include <stdexcept>
#include <string>

namespace wgt {

enum class ErrorKind {
  InvalidArgument,
  ShapeMismatch,
  DTypeMismatch,
  RankMismatch,
  OutOfRange,
  Unsupported,
  OutOfMemory,
  DeviceLost,
  RuntimeState,
  IO,           // file could not be read/written
  Format,       // file content is corrupt/truncated/not what it claims
  BackendInit,  // a backend could not be set up: no Dawn library, no such adapter, device creation failed
};
// Every kind, in declaration order: bindings map them one to one (e.g. to exception classes
// of the same name) by iterating this list with error_kind_name.
inline constexpr ErrorKind kAllErrorKinds[] = {
    ErrorKind::InvalidArgument, ErrorKind::ShapeMismatch, ErrorKind::DTypeMismatch, ErrorKind::RankMismatch,
    ErrorKind::OutOfRange,      ErrorKind::Unsupported,   ErrorKind::OutOfMemory,   ErrorKind::DeviceLost,
    ErrorKind::RuntimeState,    ErrorKind::IO,            ErrorKind::Format,        ErrorKind::BackendInit,
};

const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string op, std::string message);
  ErrorKind kind() const noexcept { return kind_; }
  const std::string& op() const noexcept { return op_; }
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorKind kind_;
  std::string op_;
  std::string message_;
};

// Throw helpers; `op` names the public operation ("matmul", "Tensor::reshape", ...).
[[noreturn]] void throw_error(ErrorKind kind, const std::string& op, const std::string& message);

#define WGT_CHECK(cond, kind, op, msg)                           \
  do {                                                            \
    if (!(cond)) ::wgt::throw_error(::wgt::ErrorKind::kind, (op), (msg)); \
  } while (0)

}  // namespace wgt
