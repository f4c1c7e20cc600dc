#include "controlplane/api/state_transfer.hpp"

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/workspace_backup.hpp"
#include "crypto/envelope.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr int kMaxVersions = 100000;

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kBackupInvalid, "the state transfer " + std::move(message));
}

// The envelope at `path` with its data key sealed to `to` instead: the sealed key is the only
// part that changes (fixed length, not covered by the chunks' authentication).
Result<std::string> resealed_envelope(const Stores& stores, const std::filesystem::path& path,
                                      const crypto::BoxPublicKey& to) {
  auto prefix = crypto::read_envelope_prefix(path);
  if (!prefix) return std::unexpected(prefix.error());
  auto sealed = stores.keys.reseal_dek(path, to);
  if (!sealed) return std::unexpected(sealed.error());
  auto fresh = base64_decode(*sealed);
  if (!fresh || fresh->size() != prefix->sealed_dek.size())
    return fail(errc::kInternal, "re-sealed data key of " + path.string() + " has another size");
  auto bytes = read_file(path, kMaxBackupBytes);
  if (!bytes) return std::unexpected(bytes.error());
  const std::size_t at = prefix->payload_offset - prefix->sealed_dek.size();
  bytes->replace(at, fresh->size(), reinterpret_cast<const char*>(fresh->data()), fresh->size());
  return bytes;
}

Result<StateVersion> version_from_json(const json::object& o) {
  StateVersion sv;
  auto id = get_string(o, "id", 128);
  auto capsule = get_string(o, "capsuleId", 128);
  auto generation = get_int(o, "generation");
  auto run = get_string(o, "createdByRunId", 128);
  auto commit = get_string(o, "sourceCommit", 128);
  auto serial = get_int(o, "serial");
  auto lineage = get_string(o, "lineage", 128);
  auto plain = get_string(o, "plaintextSha256", 64);
  auto created = get_int(o, "createdAt");
  auto restored_from = get_optional_string(o, "restoredFrom", 128);
  auto partial = get_bool_or(o, "partial", false);
  if (const Error* e = first_error(id, capsule, generation, run, commit, serial, lineage, plain,
                                   created, restored_from, partial))
    return invalid("lists a StateVersion that does not read: " + e->message);
  sv = StateVersion{.id = *id, .capsule_id = *capsule, .generation = *generation,
                    .created_by_run_id = *run, .source_commit = *commit, .serial = *serial,
                    .lineage = *lineage, .plaintext_sha256 = *plain, .created_at = *created,
                    .restored_from = *restored_from, .partial = *partial};
  return sv;
}

}  // namespace

Result<std::string> state_transfer_payload(const Stores& stores, const Workspace& ws,
                                           const crypto::BoxPublicKey& to, std::int64_t now) {
  auto capsules = stores.catalog.list_capsules(ws.id);
  if (!capsules) return std::unexpected(capsules.error());
  json::array out;
  std::size_t total = 0;
  for (const auto& c : *capsules) {
    auto versions = stores.states.list(c.id, kMaxVersions, std::nullopt);
    if (!versions) return std::unexpected(versions.error());
    if (versions->empty()) continue;
    json::array entries, runs;
    // Oldest first: the destination appends them in order.
    for (auto it = versions->rbegin(); it != versions->rend(); ++it) {
      auto path = stores.blobs.path_for(it->ciphertext_sha256);
      if (!path) return std::unexpected(path.error());
      auto envelope = resealed_envelope(stores, *path, to);
      if (!envelope) return std::unexpected(envelope.error().with_context("state version " + it->id));
      total += envelope->size();
      if (total > kMaxBackupBytes / 2)
        return fail(errc::kPayloadTooLarge,
                    "the state of workspace " + ws.id + " takes more than " +
                        std::to_string(kMaxBackupBytes / 2) + " bytes; a transfer carries at most that");
      json::object entry = to_json(*it);
      entry["envelope"] = base64_encode(*envelope);
      entries.push_back(std::move(entry));
      auto run = stores.runs.get_run(it->created_by_run_id);
      if (!run) return std::unexpected(run.error());
      runs.push_back(json::object{{"id", run->id},
                                  {"type", protocol::to_string(run->type)},
                                  {"status", run->status},
                                  {"sourceCommit", run->source_commit},
                                  {"createdAt", run->created_at},
                                  {"finishedAt", run->finished_at ? json::value(*run->finished_at)
                                                                  : json::value(nullptr)}});
    }
    auto outputs = stores.states.outputs(c.id);
    if (!outputs) return std::unexpected(outputs.error());
    out.push_back(json::object{{"capsuleId", c.id},
                               {"runs", std::move(runs)},
                               {"stateVersions", std::move(entries)},
                               {"outputs", outputs->outputs}});
  }
  return takosumi::serialize(json::object{{"workspaceId", ws.id},
                                          {"createdAt", now},
                                          {"destinationStoragePublicKey", to.to_base64()},
                                          {"capsules", std::move(out)}});
}

Result<ImportOutcome> import_state_transfer(const Stores& stores, const std::string& workspace_id,
                                            const json::object& payload) {
  auto ws = get_string(payload, "workspaceId", 128);
  auto key = get_string(payload, "destinationStoragePublicKey", 64);
  if (const Error* e = first_error(ws, key)) return invalid("does not read: " + e->message);
  if (*ws != workspace_id)
    return invalid("is of workspace " + *ws + ", not " + workspace_id);
  if (*key != stores.keys.storage_public_key().to_base64())
    return invalid("was sealed to another storage key (" + *key +
                   "); ask the source for one sealed to this control plane's keys/storage.pub");
  const auto* capsules = payload.if_contains("capsules");
  if (!capsules || !capsules->is_array()) return invalid("has no capsules");
  ImportOutcome out;
  for (const auto& cv : capsules->get_array()) {
    const auto* c = cv.if_object();
    auto capsule_id = c ? get_string(*c, "capsuleId", 128) : fail(errc::kBackupInvalid, "");
    if (!capsule_id) return invalid("lists a Capsule that does not read");
    auto capsule = stores.catalog.get_capsule(*capsule_id);
    if (!capsule || capsule->workspace_id != workspace_id)
      return invalid("names capsule " + *capsule_id +
                     ", which this Workspace does not have: restore the backup first");
    const auto* runs = c->if_contains("runs");
    const auto* versions = c->if_contains("stateVersions");
    const auto* outputs = c->if_contains("outputs");
    if (!runs || !runs->is_array() || !versions || !versions->is_array() || !outputs ||
        !outputs->is_object())
      return invalid("entry of capsule " + *capsule_id + " does not read");
    for (const auto& rv : runs->get_array()) {
      const auto* r = rv.if_object();
      auto id = r ? get_string(*r, "id", 128) : fail(errc::kBackupInvalid, "");
      auto type = r ? get_string(*r, "type", 32) : fail(errc::kBackupInvalid, "");
      auto status = r ? get_string(*r, "status", 32) : fail(errc::kBackupInvalid, "");
      auto commit = r ? get_string(*r, "sourceCommit", 128) : fail(errc::kBackupInvalid, "");
      auto created = r ? get_int(*r, "createdAt") : fail(errc::kBackupInvalid, "");
      if (const Error* e = first_error(id, type, status, commit, created))
        return invalid("lists a Run that does not read: " + e->message);
      auto run_type = protocol::run_type_from_string(*type);
      if (!run_type || (*status != run_status::kSucceeded && *status != run_status::kFailed &&
                        *status != run_status::kCancelled))
        return invalid("lists Run " + *id + " with a type or status a finished Run cannot have");
      Run run{.id = *id, .capsule_id = *capsule_id, .type = *run_type, .status = *status,
              .source_commit = *commit};
      run.created_at = *created;
      if (const auto* f = r->if_contains("finishedAt"); f && f->is_int64())
        run.finished_at = f->as_int64();
      TAKOSUMI_TRY(stores.runs.import_finished(run));
    }
    std::optional<StateVersion> last;
    for (const auto& vv : versions->get_array()) {
      const auto* v = vv.if_object();
      if (!v) return invalid("lists a StateVersion that is not an object");
      auto sv = version_from_json(*v);
      if (!sv) return std::unexpected(sv.error());
      if (sv->capsule_id != *capsule_id)
        return invalid("lists state version " + sv->id + " under another capsule");
      if (auto present = stores.states.get(sv->id); present) {
        ++out.already_present;  // imported before: the same bundle again changes nothing
        last = std::move(*present);
        continue;
      }
      auto envelope_text = get_string(*v, "envelope", kMaxBackupBytes);
      if (!envelope_text) return invalid("state version " + sv->id + " has no envelope");
      auto envelope = base64_decode(*envelope_text);
      if (!envelope) return invalid("state version " + sv->id + ": the envelope is not base64");
      auto sha256 = stores.blobs.put(std::string_view(
          reinterpret_cast<const char*>(envelope->data()), envelope->size()));
      if (!sha256) return std::unexpected(sha256.error());
      auto path = stores.blobs.path_for(*sha256);
      if (!path) return std::unexpected(path.error());
      auto prefix = crypto::read_envelope_prefix(*path);
      if (!prefix) return std::unexpected(prefix.error().with_context("state version " + sv->id));
      if (prefix->header.kind != "state" || prefix->header.capsule_id != *capsule_id ||
          prefix->header.generation != sv->generation ||
          prefix->header.plaintext_sha256 != sv->plaintext_sha256)
        return fail(errc::kEnvelopeHeaderMismatch,
                    "state version " + sv->id + ": the envelope's header is not this StateVersion's");
      // The data key must open here; the state itself is never opened on a control plane.
      TAKOSUMI_TRY(with_context(stores.keys.check_dek(*prefix), "state version " + sv->id));
      sv->ciphertext_sha256 = *sha256;
      TAKOSUMI_TRY(stores.states.import(*sv));
      out.state_version_ids.push_back(sv->id);
      last = std::move(*sv);
    }
    if (last && !out.state_version_ids.empty())
      TAKOSUMI_TRY(stores.states.set_outputs(*capsule_id, last->created_by_run_id, last,
                                             outputs->get_object()));
  }
  return out;
}

}  // namespace takosumi::controlplane
