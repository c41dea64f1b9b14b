// The scratch copy: the checkout's source files mirrored into a cache directory the runner owns.
// The checkout is only ever read. A mutant is written into the scratch copy under a dirty marker
// and restored after its tests; a marker left behind by a killed run names the file, and the next
// sync (which compares every file's bytes anyway) puts it right. Thread-compatible: one Scratch
// per copy.
#ifndef MUTATION_SCRATCH_H_
#define MUTATION_SCRATCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mutation {

// The files to mirror: `git ls-files --cached --others --exclude-standard` when `repo` is a git
// work tree (tracked and new-but-not-ignored files: what the user would commit), else every regular
// file below it except .git/ and bazel-*. Sorted, '/'-separated, relative.
absl::StatusOr<std::vector<std::string>> ListRepoFiles(const std::string& repo,
                                                       const std::string& tmp_dir);

struct SyncStats {
  int copied = 0;     // new or changed files written
  int removed = 0;    // files of an earlier sync that are gone from the list
  int unchanged = 0;
  std::string left_dirty;  // the file a killed run left mutated, if any
};

class Scratch {
 public:
  // `dir` holds the tree (dir/tree), its manifest and its dirty marker.
  explicit Scratch(std::string dir) : dir_(std::move(dir)) {}

  std::string tree() const { return dir_ + "/tree"; }

  // Mirrors `files` of `repo` into tree(): writes only what differs, removes what an earlier sync
  // wrote and the list no longer has, clears a dirty marker once the tree matches.
  absl::StatusOr<SyncStats> Sync(const std::string& repo, const std::vector<std::string>& files);

  // Writes `content` to tree()/path after recording `path` in the dirty marker.
  absl::Status WriteMutant(const std::string& path, const std::string& content);
  // Writes the original back and clears the marker.
  absl::Status Restore(const std::string& path, const std::string& original);

 private:
  std::string marker() const { return dir_ + "/dirty"; }
  std::string manifest() const { return dir_ + "/manifest"; }
  std::string dir_;
};

// mkdir -p.
absl::Status MakeDirs(const std::string& path);

}  // namespace mutation

#endif  // MUTATION_SCRATCH_H_
