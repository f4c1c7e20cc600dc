// AgentApi: artifact download and upload (docs/protocol.md "Artifacts").
#include "common/error_codes.hpp"
#include "controlplane/api/agent_api.hpp"
#include "controlplane/runs/artifact_check.hpp"
#include "controlplane/runs/run_intake.hpp"
#include "common/offload.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

Error error(std::string_view code, std::string message) {
  return Error{std::string(code), std::move(message)};
}

// Plans (plan, destroy_plan) upload their saved plan and its plan view, applies the new state; a
// drift_check is read-only and uploads nothing.
Status check_upload_allowed(const Run& run, std::string_view kind) {
  using protocol::RunType;
  if (run.type == RunType::drift_check)
    return fail(errc::kForbidden, "run " + run.id + " is a drift_check: drift checks are read-only"
                                  " and never upload a state or a plan");
  const bool allowed = kind == "state" ? run.type == RunType::apply
                                       : run.type == RunType::plan || run.type == RunType::destroy_plan;
  if (allowed) return {};
  return fail(errc::kInvalidArgument, "a " + std::string(protocol::to_string(run.type)) +
                                          " run cannot upload a " + std::string(kind) + " artifact");
}

}  // namespace

HttpResponse AgentApi::download(const HttpRequest& req, const std::string& run_id,
                                const std::string& kind) {
  auto agent = authenticate(req);
  if (!agent) return error_response(agent.error());
  auto run = d_.queue.leases().check_lease(run_id, *agent, req.header("x-takosumi-lease").value_or(""));
  if (!run) return error_response(run.error());
  std::string sha;
  if (kind == "prior_state") {
    if (!run->prior_state_version_id)
      return error_response(error(errc::kNotFound, "run " + run_id + " starts without a prior state"));
    auto sv = d_.states.get(*run->prior_state_version_id);
    if (!sv) return error_response(sv.error());
    sha = sv->ciphertext_sha256;
  } else if (kind == "plan") {
    if (run->type != protocol::RunType::apply || !run->plan_artifact_sha256)
      return error_response(error(errc::kNotFound, "run " + run_id + " has no saved plan to apply"));
    sha = *run->plan_artifact_sha256;
  } else {
    return error_response(error(errc::kInvalidArgument,
                                "artifact kind \"" + kind + "\" must be prior_state or plan"));
  }
  auto stored = d_.blobs.contains(sha);
  if (!stored) return error_response(stored.error());
  if (!*stored)
    return error_response(error(errc::kNotFound, kind + " blob " + sha + " is missing"));
  auto path = d_.blobs.path_for(sha);
  if (!path) return error_response(path.error());
  return HttpResponse{200, "application/octet-stream", {}, *path};
}

Result<Run> AgentApi::check_upload(const HttpRequest& head, const std::string& run_id,
                                   const std::string& kind) {
  auto agent = authenticate(head);
  if (!agent) return std::unexpected(agent.error());
  if (kind != "state" && kind != "plan" && kind != "plan_view")
    return std::unexpected(error(errc::kInvalidArgument,
                                 "artifact kind \"" + kind + "\" must be state, plan or plan_view"));
  auto run = d_.queue.leases().check_upload_lease(run_id, *agent, head.header("x-takosumi-lease").value_or(""));
  if (!run && run.error().code == errc::kLeaseLost)
    d_.queue.leases().record_fenced(run_id, *agent, std::nullopt, "upload");  // an upload carries no attempt
  if (!run) return std::unexpected(run.error());
  TAKOSUMI_TRY(check_upload_allowed(*run, kind));
  return run;
}

boost::asio::awaitable<HttpResponse> AgentApi::async_upload(const HttpRequest& req,
                                                            const std::string& run_id,
                                                            const std::string& kind) {
  // Checked at admission too; again now, since the body took time (a lease may have moved on).
  auto agent = authenticate(req);
  if (!agent) co_return error_response(agent.error());
  auto run = check_upload(req, run_id, kind);
  if (!run) co_return error_response(run.error());
  if (req.body_file.empty())
    co_return error_response(error(errc::kInvalidArgument, "artifact body missing"));
  const auto claimed = req.header("x-takosumi-sha256").value_or("");
  const Keyring& keys = d_.keys;
  const BlobStore& blobs = d_.blobs;
  // A named lambda: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
  auto check = [&keys, &blobs, temp = req.body_file, received = req.body_sha256, claimed, kind,
                capsule = run->capsule_id, run_id] {
    if (kind == "plan_view") return check_and_store_plan_view(temp, received, claimed, run_id, blobs);
    return check_and_store_upload(temp, received, claimed, kind, capsule, keys, blobs);
  };
  auto stored = co_await async_offload(d_.pool, std::move(check));
  if (!stored) co_return error_response(stored.error().with_context("artifact upload"));
  // Hashing took time: an agent revoked meanwhile records nothing.
  if (auto still = authenticate(req); !still) co_return error_response(still.error());
  if (auto recorded = record_artifact(d_, *run, *agent, kind, *stored); !recorded)
    co_return error_response(recorded.error());
  co_return json_response(200, boost::json::object{{"sha256", stored->sha256}});
}

}  // namespace takosumi::controlplane
