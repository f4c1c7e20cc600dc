#include "controlplane/api/offline_api.hpp"
#include "controlplane/api/api_json.hpp"

#include <spdlog/spdlog.h>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/json_fields.hpp"
#include "common/offload.hpp"
#include "controlplane/api/agent_api.hpp"
#include "controlplane/runs/run_intake.hpp"
#include "controlplane/store/run_log_store.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "crypto/keys.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "protocol/offline_bundle.hpp"

namespace takosumi::controlplane {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace asio = boost::asio;

Error invalid(std::string message) {
  return Error{std::string(errc::kInvalidArgument), std::move(message)};
}

// {"name", "pool", "boxPublicKey", "signPublicKey", "agentId"?, "labels"?}: what
// `takosumi-agent keys export` prints, with the offline pool the agent belongs to.
Result<std::pair<AgentRegistration, std::string>> parse_offline_agent(const std::string& text) {
  auto body = parse_object(text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(
      *body, {"name", "pool", "boxPublicKey", "signPublicKey", "agentId", "labels"}));
  auto name = get_string(*body, "name", 128);
  auto pool = get_string(*body, "pool", 63);
  auto box = get_string(*body, "boxPublicKey", 64);
  auto sign = get_string(*body, "signPublicKey", 64);
  auto id = get_optional_string(*body, "agentId", 64);
  if (const Error* e = first_error(name, pool, box, sign, id)) return std::unexpected(*e);
  if (name->empty()) return std::unexpected(invalid("field \"name\" must not be empty"));
  auto box_key = crypto::BoxPublicKey::from_base64(*box);
  auto sign_key = crypto::SignPublicKey::from_base64(*sign);
  if (!box_key || !sign_key)
    return std::unexpected(invalid("boxPublicKey and signPublicKey must each be the base64 of 32 "
                                   "bytes, as `takosumi-agent keys export` prints them"));
  AgentRegistration reg;
  reg.name = std::move(*name);
  reg.version = "offline";
  reg.capacity = 1;
  reg.box_public_key = box_key->to_base64();
  reg.sign_public_key = sign_key->to_base64();
  if (*id && **id != protocol::offline_agent_id(reg.sign_public_key))
    return std::unexpected(invalid("agentId " + **id + " is not the id of this signing key (" +
                                   protocol::offline_agent_id(reg.sign_public_key) +
                                   "): the keys and the id come from different agents"));
  if (const auto* labels = body->if_contains("labels"); labels && !labels->is_null()) {
    auto parsed = agent_labels_from_json(*labels, "labels");
    if (!parsed) return std::unexpected(parsed.error());
    reg.labels = std::move(*parsed);
  }
  return std::pair{std::move(reg), std::move(*pool)};
}

struct ExportRequest {
  std::string agent_id;
  std::int64_t valid_for = kDefaultBundleSeconds;
};

Result<ExportRequest> parse_export(const std::string& text) {
  auto body = parse_object(text.empty() ? "{}" : text, kMaxJsonBody);
  if (!body) return std::unexpected(body.error());
  TAKOSUMI_TRY(check_known_fields(*body, {"agentId", "validForSeconds"}));
  auto agent = get_string(*body, "agentId", 64);
  auto valid = get_optional_int(*body, "validForSeconds");
  if (const Error* e = first_error(agent, valid)) return std::unexpected(*e);
  ExportRequest r{std::move(*agent), valid->value_or(kDefaultBundleSeconds)};
  if (r.valid_for < 600 || r.valid_for > kMaxBundleSeconds)
    return std::unexpected(invalid("validForSeconds must be between 600 and " +
                                   std::to_string(kMaxBundleSeconds) + " (90 days)"));
  return r;
}

json::object offline_agent_json(const Agent& a) {
  return {{"id", a.id},
          {"name", a.name},
          {"pool", a.pool},
          {"offline", true},
          {"boxPublicKey", a.box_public_key},
          {"signPublicKey", a.sign_public_key}};
}

// What the export writes into the bundle beside the index: the source pack, and the envelopes
// the Run would download.
Result<std::vector<std::pair<std::string, fs::path>>> bundle_files(const PublicApiDeps& d,
                                                                   const Job& job,
                                                                   const fs::path& pack) {
  std::vector<std::pair<std::string, fs::path>> files{{std::string(protocol::kSourceMember), pack}};
  const auto add_blob = [&](const std::string& kind, const std::string& sha) -> Status {
    auto path = d.blobs.path_for(sha);
    if (!path) return std::unexpected(path.error());
    files.emplace_back(protocol::envelope_member(kind), *path);
    return {};
  };
  if (job.claimed.prior_state) TAKOSUMI_TRY(add_blob("prior_state", job.claimed.prior_state->ciphertext_sha256));
  if (job.claimed.run.type == protocol::RunType::apply) {
    if (!job.claimed.run.plan_artifact_sha256)
      return fail(errc::kStateIntegrityFailed, "apply " + job.claimed.run.id + " has no saved plan");
    TAKOSUMI_TRY(add_blob("plan", *job.claimed.run.plan_artifact_sha256));
  }
  return files;
}

// A log as the chunks an agent would have sent: at most this size, cut after a newline when
// there is one and never inside a UTF-8 sequence (PostgreSQL refuses text that is not UTF-8).
constexpr std::size_t kImportChunkBytes = 32 * 1024;

// The log as valid UTF-8: every byte that does not begin a well-formed sequence becomes U+FFFD
// (a provider may print raw bytes; the store takes text, and PostgreSQL refuses what is not UTF-8).
std::string valid_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const auto b = static_cast<unsigned char>(in[i]);
    std::size_t len = b < 0x80 ? 1 : (b >= 0xC2 && b <= 0xDF) ? 2 : (b >= 0xE0 && b <= 0xEF) ? 3
                                   : (b >= 0xF0 && b <= 0xF4) ? 4 : 0;
    bool ok = len > 0 && i + len <= in.size();
    for (std::size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    if (ok && len >= 3) {
      const auto c1 = static_cast<unsigned char>(in[i + 1]);
      // No overlong forms, no surrogates, nothing past U+10FFFF.
      ok = !(b == 0xE0 && c1 < 0xA0) && !(b == 0xED && c1 >= 0xA0) && !(b == 0xF0 && c1 < 0x90) &&
           !(b == 0xF4 && c1 >= 0x90);
    }
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(in.substr(i, len));
    i += len;
  }
  return out;
}

// log must be valid UTF-8 (valid_utf8).
std::vector<std::string_view> log_chunks(std::string_view log) {
  std::vector<std::string_view> chunks;
  while (!log.empty()) {
    std::size_t cut = std::min(log.size(), kImportChunkBytes);
    if (cut < log.size()) {
      const auto newline = log.rfind('\n', cut - 1);
      if (newline != std::string_view::npos && newline > 0) {
        cut = newline + 1;
      } else {
        // Valid UTF-8: a sequence starts at most three bytes back.
        for (int back = 0; back < 3 && cut > 1 &&
                           (static_cast<unsigned char>(log[cut]) & 0xC0) == 0x80;
             ++back)
          --cut;
      }
    }
    chunks.push_back(log.substr(0, cut));
    log.remove_prefix(cut);
  }
  return chunks;
}

// The first max_bytes of a file, at most.
Result<std::string> read_log_head(const fs::path& file, std::size_t max_bytes) {
  auto opened = open_regular_file(file);
  if (!opened) return std::unexpected(opened.error());
  std::string text(std::min<std::size_t>(max_bytes, static_cast<std::size_t>(opened->st.st_size)), '\0');
  auto got = read_full(opened->fd.get(), std::as_writable_bytes(std::span(text)), file);
  if (!got) return std::unexpected(got.error());
  text.resize(*got);
  return text;
}

std::string member_digest(const std::vector<protocol::BundleMember>& members, std::string_view name) {
  for (const auto& m : members)
    if (m.name == name) return m.sha256;
  return {};
}

}  // namespace

void OfflineApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/agents/offline", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return register_offline_agent(req); });
  r.add_async("POST", "/api/v1/runs/{}/bundle", a.json_body({Role::operator_, Scope::run}),
              [this](const HttpRequest& req, const std::vector<std::string>& p) {
                return async_export(req, p[0]);
              });
  r.add_async("POST", "/api/v1/runs/{}/result", a.file_body({Role::operator_, Scope::run}),
              [this](const HttpRequest& req, const std::vector<std::string>& p) {
                return async_import(req, p[0]);
              });
}

HttpResponse OfflineApi::register_offline_agent(const HttpRequest& req) {
  auto parsed = parse_offline_agent(req.body);
  if (!parsed) return error_response(parsed.error());
  auto& [reg, pool_name] = *parsed;
  auto agent = in_transaction(d_.db, [&]() -> Result<Agent> {
    auto pool = d_.pools.get(pool_name);
    if (!pool) return std::unexpected(pool.error());
    if (!pool->offline)
      return std::unexpected(invalid("pool \"" + pool->name + "\" is not offline; an offline agent "
                                     "joins a pool made with {\"offline\": true}"));
    auto made = d_.agents.register_offline(reg, pool->name);
    if (!made) return made;
    AuditEvent e{.actor = actor(req), .action = "agent.registered"};
    e.detail = {{"agentId", made->id}, {"name", made->name}, {"pool", made->pool},
                {"offline", true}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return made;
  });
  if (!agent) return error_response(agent.error());
  return json_response(201, offline_agent_json(*agent));
}

asio::awaitable<HttpResponse> OfflineApi::async_export(const HttpRequest& req, std::string run_id) {
  auto request = parse_export(req.body);
  if (!request) co_return error_response(request.error());
  auto run = d_.runs.get_run(run_id);
  if (!run) co_return error_response(run.error());
  auto capsule = d_.catalog.get_capsule(run->capsule_id);
  if (!capsule) co_return error_response(capsule.error());
  auto pool = d_.pools.get(capsule->agent_pool);
  if (!pool) co_return error_response(pool.error());
  if (!pool->offline)
    co_return error_response(Error{std::string(errc::kConflict),
                                   "capsule " + capsule->id + " runs in pool \"" + pool->name +
                                       "\", which is not offline: its Runs are claimed by agents"});
  auto agent = d_.agents.offline_agent(request->agent_id);
  if (!agent) co_return error_response(agent.error());
  if (agent->pool != pool->name)
    co_return error_response(Error{std::string(errc::kConflict),
                                   "agent " + agent->id + " is in pool \"" + agent->pool +
                                       "\", the Capsule's Runs go to pool \"" + pool->name + "\""});
  // Exported to this agent already and still out: the same bundle again (lost media, a failed
  // download), not a second one.
  if (run->status == run_status::kRunning && run->agent_id == agent->id && run->lease_expires_at &&
      *run->lease_expires_at > d_.clock.now_unix()) {
    auto made = d_.runs.bundle_of(run->id, run->attempt, agent->id);
    if (!made) co_return error_response(made.error());
    if (*made) {
      auto path = d_.blobs.path_for(**made);
      if (!path) co_return error_response(path.error());
      auto recorded = in_transaction(d_.db, [&]() -> Status {
        return d_.audit.record(run_event(actor(req), "run.exported", *run,
                                         {{"agentId", agent->id},
                                          {"attempt", run->attempt},
                                          {"repeated", true},
                                          {"bundleSha256", **made}}));
      });
      if (!recorded) co_return error_response(recorded.error());
      co_return HttpResponse{200, "application/octet-stream", {}, *path};
    }
  }
  if (run->status != run_status::kQueued && !(run->status == run_status::kRunning))
    co_return error_response(Error{std::string(errc::kConflict),
                                   "run " + run->id + " is " + run->status + ": only a queued Run "
                                   "is exported"});
  // The source first (the network, on the blocking pool), so the claim below is short.
  const fs::path temp = d_.blobs.new_temp_path();
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { (void)remove_tree(dir); }
  } cleanup{temp};
  if (auto made = ensure_directory(temp); !made) co_return error_response(made.error());
  // On the Git threads with the Workspace's limit, never the blocking pool; the credential is the
  // Capsule's Connection of kind git.
  // From the repository of the Run's spec revision, which its manifest names, with its credential.
  auto revision = d_.catalog.get_revision(capsule->id, run->spec_revision);
  if (!revision) co_return error_response(revision.error());
  const Capsule as_run = capsule_as_of(*capsule, *revision);
  auto credential = source_credential(d_, as_run);
  if (!credential) co_return error_response(credential.error());
  const fs::path pack_file = temp / "source.pack";
  auto packed = co_await d_.git.async_pack(capsule->workspace_id, as_run.source.git_url,
                                           run->source_commit, std::move(*credential), pack_file);
  if (!packed) {
    // The full error names this host's paths: it goes to the log, the caller gets its code.
    spdlog::error("export run {}: {}", run_id, packed.error().to_string());
    co_return error_response(Error{packed.error().code,
                                   "run " + run_id + ": the source of commit " + run->source_commit +
                                       " could not be packed (" + packed.error().code +
                                       "; the control plane's log has the details)"});
  }
  const OfflineSource offline{packed->tree, packed->sha256,
                              d_.clock.now_unix() + request->valid_for};
  const Agent& addressee = *agent;
  auto job = d_.queue.claims().claim_for_export(run_id, addressee, request->valid_for,
                                       [&](const ClaimedRun& claimed) {
                                         return d_.manifests.build_signed(claimed, addressee,
                                                                          &offline);
                                       });
  if (!job) co_return error_response(job.error());
  // From here the Run is leased to the agent: a bundle that cannot be written gives it back.
  const auto undo = [&](const Error& why) {
    if (auto released = d_.queue.leases().release(run_id, addressee, job->claimed.lease_token, true);
        !released)
      spdlog::error("run {}: the failed export could not be undone: {}", run_id,
                    released.error().to_string());
    return error_response(why);
  };
  auto files = bundle_files(d_, *job, temp / "source.pack");
  if (!files) co_return undo(files.error());
  auto write = [files = *files, temp, job = *job]() -> Result<std::string> {
    auto members = protocol::describe_members(files);
    if (!members) return std::unexpected(members.error());
    protocol::RunBundleIndex index{job.claimed.run.id, job.claimed.lease_token,
                                   job.claimed.lease_expires_at, job.manifest,
                                   std::move(*members)};
    TAKOSUMI_TRY(protocol::write_bundle(temp / "run.bundle", protocol::to_text(index), files));
    return crypto::sha256_file_hex(temp / "run.bundle");
  };
  auto written = co_await async_offload(d_.pool, std::move(write));
  if (!written) co_return undo(written.error());
  // Kept as a blob (named in the audit record), so a download that fails is not a lost Run.
  auto adopt = [&blobs = d_.blobs, file = temp / "run.bundle", sha = *written] {
    return blobs.adopt(file, sha);
  };
  if (auto adopted = co_await async_offload(d_.pool, std::move(adopt)); !adopted)
    co_return undo(adopted.error());
  auto path = d_.blobs.path_for(*written);
  if (!path) co_return undo(path.error());
  auto recorded = in_transaction(d_.db, [&]() -> Status {
    TAKOSUMI_TRY(d_.runs.record_bundle(job->claimed.run, addressee.id, *written));
    return d_.audit.record(run_event(actor(req), "run.exported", job->claimed.run,
                                     {{"agentId", addressee.id},
                                      {"attempt", job->claimed.run.attempt},
                                      {"expiresAt", time_value(offline.expires_at)},
                                      {"bundleSha256", *written}}));
  });
  if (!recorded) co_return undo(recorded.error());
  co_return HttpResponse{200, "application/octet-stream", {}, *path};
}

asio::awaitable<HttpResponse> OfflineApi::async_import(const HttpRequest& req, std::string run_id) {
  if (req.body_file.empty()) co_return error_response(invalid("the result bundle is missing"));
  // The index, and the agent's signature over it, before any member costs a read.
  auto bundle = protocol::open_bundle(req.body_file);
  if (!bundle) co_return error_response(bundle.error());
  auto claim = protocol::peek_run_result(bundle->index);
  if (!claim) co_return error_response(claim.error());
  auto agent = d_.agents.offline_agent(claim->agent_id);
  if (!agent)
    co_return error_response(Error{std::string(errc::kBundleSignatureInvalid),
                                   "the result names agent " + claim->agent_id +
                                       ", which is not an offline agent of this control plane"});
  auto key = crypto::SignPublicKey::from_base64(agent->sign_public_key);
  if (!key) co_return error_response(key.error());
  auto index = protocol::open_run_result(bundle->index, *key);
  if (!index) co_return error_response(index.error());
  if (index->run_id != run_id || index->agent_id != agent->id)
    co_return error_response(invalid("this is the result of run " + index->run_id + ", not of " +
                                     run_id));
  auto run = d_.runs.get_run(run_id);
  if (!run) co_return error_response(run.error());
  const fs::path temp = d_.blobs.new_temp_path();
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { (void)remove_tree(dir); }
  } cleanup{temp};
  auto extract = [opened = *bundle, members = index->members, temp]() {
    return protocol::extract_members(opened, members, temp, 2 * kMaxArtifactBytes);
  };
  if (auto extracted = co_await async_offload(d_.pool, std::move(extract)); !extracted)
    co_return error_response(extracted.error());
  // A plan or drift check cancelled while it was out: its result is refused (it changed nothing).
  if (run->status == run_status::kCancelled && run->type != protocol::RunType::apply)
    co_return error_response(Error{std::string(errc::kLeaseLost),
                                   "run " + run_id + " was cancelled while it was out; its result "
                                   "is not recorded"});
  // A repeat: the attempt was recorded already (its members checked out all the same).
  if (run->completed_attempt > 0 && run->completed_attempt == index->attempt &&
      run->attempt == index->attempt)
    co_return json_response(200, json::object{{"imported", false},
                                              {"runId", run_id},
                                              {"status", run->status}});
  const auto has = [&](std::string_view name) {
    return std::ranges::any_of(index->members, [&](const auto& m) { return m.name == name; });
  };
  if (!has("report.json")) co_return error_response(invalid("the result has no report"));
  auto report_text = read_file(temp / "report.json", protocol::kMaxRunReportBytes);
  if (!report_text) co_return error_response(report_text.error());
  auto report_json = parse_object(*report_text, protocol::kMaxRunReportBytes);
  if (!report_json) co_return error_response(report_json.error());
  auto report = protocol::run_report_from_json(*report_json);
  if (!report) co_return error_response(report.error());
  if (report->lease_token != index->lease_token || report->attempt != index->attempt)
    co_return error_response(invalid("the result's report is not of its lease and attempt"));
  // The result of an apply as kept when fencing refuses it: a blob, named in the audit record
  // and in the Capsule's attention (the site's resources may have changed). A plan or drift check
  // changed nothing: its refusal is only the answer.
  const auto keep = [&](const Error& why) -> asio::awaitable<HttpResponse> {
    if (run->type != protocol::RunType::apply) co_return error_response(why);
    d_.queue.leases().record_fenced(run_id, *agent, index->attempt, "import");
    // The server hashed the body as it arrived.
    const std::string sha = req.body_sha256;
    auto adopt = [&blobs = d_.blobs, file = req.body_file, sha] { return blobs.adopt(file, sha); };
    auto adopted = co_await async_offload(d_.pool, std::move(adopt));
    if (!adopted) {
      spdlog::error("run {}: keeping the refused result: {}", run_id, adopted.error().to_string());
      co_return error_response(Error{why.code, why.message + "; the result could not be kept "
                                                             "here: keep the file and retry"});
    }
    auto kept = in_transaction(d_.db, [&]() -> Status {
      TAKOSUMI_TRY(d_.runs.keep_result(*run, agent->id, sha, why.code));
      return d_.audit.record(run_event(actor(req), "run.result_kept", *run,
                                       {{"agentId", agent->id},
                                        {"attempt", index->attempt},
                                        {"code", why.code},
                                        {"resultSha256", sha}}));
    });
    if (!kept) spdlog::error("run {}: recording the kept result: {}", run_id, kept.error().to_string());
    co_return error_response(Error{why.code, why.message + "; the result is kept (blob " + sha +
                                                 ") and the Capsule needs an operator"});
  };
  // Each uploaded artifact (the sealed ones and the plan view) as its upload would be checked and stored.
  for (const char* kind : {"state", "plan", "plan_view"}) {
    const std::string member = protocol::artifact_member(kind);
    if (!has(member)) continue;
    auto leased = d_.queue.leases().check_upload_lease(run_id, *agent, index->lease_token);
    if (!leased && leased.error().code == errc::kLeaseLost) co_return co_await keep(leased.error());
    if (!leased) co_return error_response(leased.error());
    // Its digest was checked against the signed index when it was extracted.
    const std::string sha = member_digest(index->members, member);
    const Keyring& keys = d_.keys;
    const BlobStore& blobs = d_.blobs;
    auto check = [&keys, &blobs, file = temp / member, sha, kind = std::string(kind),
                  capsule = run->capsule_id, run_id] {
      if (kind == "plan_view") return check_and_store_plan_view(file, sha, sha, run_id, blobs);
      return check_and_store_upload(file, sha, sha, kind, capsule, keys, blobs);
    };
    auto stored = co_await async_offload(d_.pool, std::move(check));
    // As online: a plan stands without its view (the report's planViewSha256 then names none).
    if (!stored && std::string_view(kind) == "plan_view") {
      spdlog::warn("run {}: the result's {} is not kept: {}", run_id, member, stored.error().to_string());
      continue;
    }
    if (!stored) co_return error_response(stored.error().with_context("the result's " + member));
    if (auto recorded = record_artifact(d_, *leased, *agent, kind, *stored); !recorded)
      co_return error_response(recorded.error());
  }
  // The log, in chunks as the agent would have streamed them.
  if (has("log.txt")) {
    auto leased = d_.queue.leases().check_report_lease(run_id, *agent, index->lease_token);
    if (!leased && leased.error().code == errc::kLeaseLost) co_return co_await keep(leased.error());
    if (!leased) co_return error_response(leased.error());
    // The store keeps kMaxRunLogBytes of a Run's log; what is past that is not even read.
    auto read = [file = temp / "log.txt"]() -> Result<std::string> {
      auto head = read_log_head(file, kMaxRunLogBytes + 1);
      if (!head) return head;
      return valid_utf8(*head);
    };
    auto log = co_await async_offload(d_.pool, std::move(read));
    if (!log) co_return error_response(log.error());
    std::int64_t seq = 0;
    for (const auto& chunk : log_chunks(*log))
      if (auto appended = d_.logs.append(run_id, index->attempt, seq++, chunk); !appended)
        co_return error_response(appended.error());
  }
  auto applied = apply_run_report(d_.queue, d_.planner, d_.waiters, run_id, *agent, *report);
  if (!applied && (applied.error().code == errc::kLeaseLost || applied.error().code == errc::kConflict))
    co_return co_await keep(applied.error());
  if (!applied) co_return error_response(applied.error());
  auto after = d_.runs.get_run(run_id);
  if (!after) co_return error_response(after.error());
  co_return json_response(200, json::object{{"imported", true},
                                            {"runId", run_id},
                                            {"status", after->status},
                                            {"stateVersionId", after->state_version_id
                                                                   ? json::value(*after->state_version_id)
                                                                   : json::value(nullptr)}});
}

}  // namespace takosumi::controlplane
