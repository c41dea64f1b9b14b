// SHA-256 (FIPS 180-4), for the content hashes in tool result refs and the no-progress fingerprint.
//
// A small self-contained implementation so the agent needs no crypto library: the hashes identify
// content, they protect no secret, so constant-time behaviour is not a goal.
//
// Thread-safety: a Sha256 object is not shared between threads; the free functions are pure.
#ifndef AGENT_SHA256_H_
#define AGENT_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace agent {

class Sha256 {
 public:
  Sha256();

  // Feeds more bytes; may be called any number of times before Finish().
  void Update(absl::string_view data);

  // The 32-byte digest of everything fed. The object must not be used afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex of the SHA-256 digest of `data` (64 characters).
std::string Sha256Hex(absl::string_view data);

}  // namespace agent

#endif  // AGENT_SHA256_H_
