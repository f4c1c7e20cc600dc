#pragma once
// Owners of libgit2 objects, freed with the matching git_*_free.
#include <git2.h>

#include <memory>

namespace takosumi::git {

template <class T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const { Free(p); }
};
using Repository = std::unique_ptr<git_repository, GitDeleter<git_repository, git_repository_free>>;
using Remote = std::unique_ptr<git_remote, GitDeleter<git_remote, git_remote_free>>;
using Commit = std::unique_ptr<git_commit, GitDeleter<git_commit, git_commit_free>>;
using Tree = std::unique_ptr<git_tree, GitDeleter<git_tree, git_tree_free>>;
using Blob = std::unique_ptr<git_blob, GitDeleter<git_blob, git_blob_free>>;
using Odb = std::unique_ptr<git_odb, GitDeleter<git_odb, git_odb_free>>;
using PackBuilder = std::unique_ptr<git_packbuilder, GitDeleter<git_packbuilder, git_packbuilder_free>>;

}  // namespace takosumi::git
