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
// What StateStore reads back of a Capsule's Outputs is bounded (16 MiB); stay well inside it.
constexpr std::size_t kMaxImportedOutputsBytes = 4 << 20;

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

json::object run_record(const Run& r) {
  return json::object{{"id", r.id},
                      {"type", protocol::to_string(r.type)},
                      {"status", r.status},
                      {"sourceCommit", r.source_commit},
                      {"plannedBy", optional_value(r.planned_by)},
                      {"createdAt", time_value(r.created_at)},
                      {"finishedAt", time_value(r.finished_at)}};
}

Result<Run> run_from_record(const json::value& v, const std::string& capsule_id) {
  const auto* r = v.if_object();
  if (!r) return invalid("lists a Run that is not an object");
  auto id = get_string(*r, "id", 128);
  auto type = get_string(*r, "type", 32);
  auto status = get_string(*r, "status", 32);
  auto commit = get_string(*r, "sourceCommit", 128);
  auto planned_by = get_optional_string(*r, "plannedBy", 128);
  auto created = get_time(*r, "createdAt");
  auto finished = get_optional_time(*r, "finishedAt");
  if (const Error* e = first_error(id, type, status, commit, planned_by, created, finished))
    return invalid("lists a Run that does not read: " + e->message);
  auto run_type = protocol::run_type_from_string(*type);
  if (!run_type || (*status != run_status::kSucceeded && *status != run_status::kFailed &&
                    *status != run_status::kCancelled))
    return invalid("lists Run " + *id + " with a type or status a finished Run cannot have");
  Run run{.id = *id, .capsule_id = capsule_id, .type = *run_type, .status = *status,
          .source_commit = *commit, .planned_by = *planned_by};
  run.created_at = *created;
  run.finished_at = *finished;
  return run;
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
  auto created = get_time(o, "createdAt");
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
    if (versions->size() >= static_cast<std::size_t>(kMaxVersions))
      return fail(errc::kPayloadTooLarge, "capsule " + c.id + " has more StateVersions than a "
                                          "transfer carries (" + std::to_string(kMaxVersions) + ")");
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
      // The plan an apply came from, first: whether a StateVersion is a destroy's result is
      // read from it (rollbacks to it are destroys).
      if (run->planned_by) {
        auto plan = stores.runs.get_run(*run->planned_by);
        if (!plan) return std::unexpected(plan.error());
        runs.push_back(run_record(*plan));
      }
      runs.push_back(run_record(*run));
    }
    auto outputs = stores.states.outputs(c.id);
    if (!outputs) return std::unexpected(outputs.error());
    out.push_back(json::object{{"capsuleId", c.id},
                               {"runs", std::move(runs)},
                               {"stateVersions", std::move(entries)},
                               {"outputs", outputs->outputs}});
  }
  return takosumi::serialize(json::object{{"workspaceId", ws.id},
                                          {"createdAt", time_value(now)},
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
    if (!c) return invalid("lists a Capsule that is not an object");
    auto capsule_id = get_string(*c, "capsuleId", 128);
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
    if (takosumi::serialize(*outputs).size() > kMaxImportedOutputsBytes)
      return invalid("carries more Outputs for capsule " + *capsule_id + " than a Capsule keeps");
    // State arriving under a Run would be overwritten by (or overwrite) what that Run reports.
    auto running = stores.runs.list_running(*capsule_id);
    if (!running) return std::unexpected(running.error());
    if (!running->empty())
      return fail(errc::kConflict, "capsule " + *capsule_id + " has a Run in progress (" +
                                       running->front().id + "); import when it has finished");
    for (const auto& rv : runs->get_array()) {
      auto run = run_from_record(rv, *capsule_id);
      if (!run) return std::unexpected(run.error());
      TAKOSUMI_TRY(stores.runs.import_finished(*run));
      // A Run of that id already here must be this one, not another Capsule's.
      auto here = stores.runs.get_run(run->id);
      if (!here) return std::unexpected(here.error());
      if (here->capsule_id != *capsule_id || here->type != run->type || here->status != run->status)
        return invalid("names Run " + run->id + ", which is another Run here");
    }
    std::optional<StateVersion> last;
    bool imported = false;
    for (const auto& vv : versions->get_array()) {
      const auto* v = vv.if_object();
      if (!v) return invalid("lists a StateVersion that is not an object");
      auto sv = version_from_json(*v);
      if (!sv) return std::unexpected(sv.error());
      if (sv->capsule_id != *capsule_id)
        return invalid("lists state version " + sv->id + " under another capsule");
      if (sv->restored_from) {
        auto from = stores.states.get(*sv->restored_from);
        if (!from || from->capsule_id != *capsule_id)
          return invalid("state version " + sv->id + " restores a version of another capsule");
      }
      if (auto present = stores.states.get(sv->id); present) {
        // The same bundle again changes nothing; any other StateVersion of that id is refused.
        if (present->capsule_id != sv->capsule_id || present->generation != sv->generation ||
            present->plaintext_sha256 != sv->plaintext_sha256)
          return invalid("names state version " + sv->id + ", which is another one here");
        ++out.already_present;
        last = std::move(*present);
        continue;
      }
      auto envelope_text = get_string(*v, "envelope", kMaxBackupBytes);
      if (!envelope_text) return invalid("state version " + sv->id + " has no envelope");
      auto decoded = base64_decode(*envelope_text);
      if (!decoded) return invalid("state version " + sv->id + ": the envelope is not base64");
      const std::string_view envelope(reinterpret_cast<const char*>(decoded->data()),
                                      decoded->size());
      // Everything is checked before a byte is stored.
      auto prefix = crypto::parse_envelope_prefix(envelope);
      if (!prefix) return std::unexpected(prefix.error().with_context("state version " + sv->id));
      const auto& h = prefix->header;
      if (h.kind != "state" || h.capsule_id != *capsule_id || h.generation != sv->generation ||
          h.plaintext_sha256 != sv->plaintext_sha256 || h.lineage != sv->lineage ||
          h.serial != sv->serial || h.run_id != sv->created_by_run_id ||
          crypto::expected_envelope_size(*prefix) != envelope.size())
        return fail(errc::kEnvelopeHeaderMismatch,
                    "state version " + sv->id + ": the envelope is not this StateVersion's");
      // The data key must open here; the state itself is never opened on a control plane.
      TAKOSUMI_TRY(with_context(stores.keys.check_dek(*prefix), "state version " + sv->id));
      auto sha256 = stores.blobs.put(envelope);
      if (!sha256) return std::unexpected(sha256.error());
      sv->ciphertext_sha256 = *sha256;
      TAKOSUMI_TRY(stores.states.import(*sv));
      out.state_version_ids.push_back(sv->id);
      imported = true;
      last = std::move(*sv);
    }
    if (imported) {
      TAKOSUMI_TRY(stores.states.set_outputs(*capsule_id, last->created_by_run_id, last,
                                             outputs->get_object()));
      TAKOSUMI_TRY(stores.catalog.set_state_pending(*capsule_id, false));
    }
  }
  return out;
}

}  // namespace takosumi::controlplane
