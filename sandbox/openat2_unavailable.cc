// Builds without the Linux kernel layers (macOS, --config=portable): openat2 does not exist here,
// and the workspace uses the portable walk.
#include <cerrno>
#include <string>

#include "sandbox/open_beneath.h"

namespace sandbox::internal {

bool Openat2Available() { return false; }

RawOpen Openat2Beneath(int dir_fd, const std::string& rel, int flags, mode_t mode) {
  return RawOpen{UniqueFd(), ENOSYS};
}

}  // namespace sandbox::internal
