#include "mutation/scratch.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mutation/process.h"

namespace mutation {

absl::Status MakeDirs(const std::string& path) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    std::string cur = path.substr(0, i);
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, absl::StrCat("mkdir(", cur, ")"));
    }
  }
  return absl::OkStatus();
}

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

void Walk(const std::string& root, const std::string& rel, std::vector<std::string>* out) {
  DIR* d = opendir((rel.empty() ? root : root + "/" + rel).c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name == ".git" || absl::StartsWith(name, "bazel-")) continue;
    std::string child = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (lstat((root + "/" + child).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      Walk(root, child, out);
    } else if (S_ISREG(st.st_mode)) {
      out->push_back(child);
    }
  }
  closedir(d);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListRepoFiles(const std::string& repo,
                                                       const std::string& tmp_dir) {
  std::vector<std::string> files;
  if (Exists(repo + "/.git")) {
    ProcessSpec spec;
    spec.argv = {"git", "-C", repo, "ls-files", "-z", "--cached", "--others",
                 "--exclude-standard"};
    spec.stdout_path = tmp_dir + "/git-ls-files.out";
    spec.stderr_path = tmp_dir + "/git-ls-files.err";
    absl::StatusOr<ProcessResult> r = RunProcess(spec, nullptr);
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) {
      absl::StatusOr<std::string> err = ReadFile(spec.stderr_path);
      return absl::FailedPreconditionError(absl::StrCat(
          "git ls-files in ", repo, " exited ", r->exit_code, ": ", err.ok() ? *err : ""));
    }
    absl::StatusOr<std::string> out = ReadFile(spec.stdout_path);
    if (!out.ok()) return out.status();
    for (absl::string_view f : absl::StrSplit(*out, '\0', absl::SkipEmpty())) {
      std::string path(f);
      struct stat st;
      // Deleted-but-tracked files are listed too; only regular files exist to be copied.
      if (lstat((repo + "/" + path).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        files.push_back(path);
      }
    }
  } else {
    Walk(repo, "", &files);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

absl::StatusOr<SyncStats> Scratch::Sync(const std::string& repo,
                                        const std::vector<std::string>& files) {
  SyncStats stats;
  if (absl::StatusOr<std::string> dirty = ReadFile(marker()); dirty.ok()) {
    stats.left_dirty = *dirty;
  }
  if (absl::Status s = MakeDirs(tree()); !s.ok()) return s;
  std::set<std::string> wanted(files.begin(), files.end());
  if (absl::StatusOr<std::string> old = ReadFile(manifest()); old.ok()) {
    for (absl::string_view f : absl::StrSplit(*old, '\n', absl::SkipEmpty())) {
      std::string path(f);
      if (wanted.count(path) == 0 && unlink((tree() + "/" + path).c_str()) == 0) ++stats.removed;
    }
  }
  for (const std::string& f : files) {
    absl::StatusOr<std::string> src = ReadFile(repo + "/" + f);
    if (!src.ok()) return src.status();
    std::string dst = tree() + "/" + f;
    absl::StatusOr<std::string> have = ReadFile(dst);
    struct stat st;
    int mode = stat((repo + "/" + f).c_str(), &st) == 0 ? (st.st_mode & 0777) : 0644;
    struct stat dst_st;
    bool same_mode = stat(dst.c_str(), &dst_st) == 0 && static_cast<int>(dst_st.st_mode & 0777) == mode;
    if (have.ok() && *have == *src && same_mode) {
      ++stats.unchanged;
      continue;
    }
    std::size_t slash = dst.rfind('/');
    if (absl::Status s = MakeDirs(dst.substr(0, slash)); !s.ok()) return s;
    if (absl::Status s = WriteFileAtomic(dst, *src, mode); !s.ok()) return s;
    ++stats.copied;
  }
  if (absl::Status s = WriteFileAtomic(manifest(), absl::StrJoin(files, "\n")); !s.ok()) return s;
  unlink(marker().c_str());
  return stats;
}

absl::Status Scratch::WriteMutant(const std::string& path, const std::string& content) {
  // The marker goes first: if we die between the two writes, the next run still resyncs.
  if (absl::Status s = WriteFileAtomic(marker(), path); !s.ok()) return s;
  std::string dst = tree() + "/" + path;
  struct stat st;
  int mode = stat(dst.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0644;
  return WriteFileAtomic(dst, content, mode);
}

absl::Status Scratch::Restore(const std::string& path, const std::string& original) {
  std::string dst = tree() + "/" + path;
  struct stat st;
  int mode = stat(dst.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0644;
  if (absl::Status s = WriteFileAtomic(dst, original, mode); !s.ok()) return s;
  if (unlink(marker().c_str()) != 0 && errno != ENOENT) {
    return absl::ErrnoToStatus(errno, absl::StrCat("unlink(", marker(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace mutation
