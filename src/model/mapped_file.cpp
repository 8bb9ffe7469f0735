// mmap of a whole file (POSIX).
#include "model/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wgt/error.hpp"

namespace wgt {

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const char* op = "gguf open";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_error(ErrorKind::IO, op, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw_error(ErrorKind::IO, op, path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_error(ErrorKind::IO, op, path + ": not a regular file");
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ > 0) {
    // Private + writable: tensors handed out over the mapping may be written by in-place ops;
    // such writes are copy-on-write and never reach the file.
    void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      m->size_ = 0;
      throw_error(ErrorKind::IO, op, path + ": cannot map " + std::to_string(st.st_size) + " bytes: " + std::strerror(e));
    }
    m->data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file's pages reachable
  return m;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace wgt
