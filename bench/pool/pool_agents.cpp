#include "bench/pool/pool_agents.hpp"

#include <boost/json.hpp>

#include <stdexcept>

#include "common/clock.hpp"
#include "crypto/keys.hpp"
#include "crypto/registration_proof.hpp"
#include "crypto/sha256.hpp"
#include "protocol/signed_manifest.hpp"
#include "tests/support/http_client.hpp"

namespace takosumi::bench {
namespace json = boost::json;

SimulatedAgents::SimulatedAgents(AgentsOptions options) : options_(std::move(options)) {
  auto control_key = crypto::load_sign_public_key(options_.signing_key_file);
  if (!control_key) throw std::runtime_error(control_key.error().to_string());
  for (int i = 0; i < options_.agents; ++i) {
    const unsigned short port = options_.ports[static_cast<std::size_t>(i) % options_.ports.size()];
    const testing::HttpClient pool(port, options_.pool_token);
    auto challenge = pool.post("/agent/v1/register/challenge", json::object{});
    if (challenge.status != 200u) throw std::runtime_error("challenge: " + challenge.body);
    const auto sign = crypto::SignKeyPair::generate();
    const auto box = crypto::BoxKeyPair::generate();
    const std::string name = "bench-" + std::to_string(i);
    const crypto::RegistrationClaim claim{
        json::value_to<std::string>(challenge.json.at("challenge")), name, sign.public_key,
        box.public_key, crypto::sha256_hex(options_.pool_token), *control_key};
    auto registered = pool.post(
        "/agent/v1/register",
        json::object{{"name", name}, {"version", "bench"}, {"labels", json::array{"bench"}},
                     {"capacity", options_.slots},
                     {"boxPublicKey", box.public_key.to_base64()},
                     {"signPublicKey", sign.public_key.to_base64()},
                     {"challenge", claim.challenge},
                     {"signature", crypto::sign_registration(claim, sign)}});
    if (registered.status != 200u) throw std::runtime_error("register: " + registered.body);
    agents_.push_back({json::value_to<std::string>(registered.json.at("agentId")),
                       json::value_to<std::string>(registered.json.at("agentToken")), port});
  }
}

SimulatedAgents::~SimulatedAgents() { stop(); }

void SimulatedAgents::start() {
  for (int a = 0; a < options_.agents; ++a)
    for (int s = 0; s < options_.slots; ++s) threads_.emplace_back([this, a] { slot(a); });
}

void SimulatedAgents::stop() {
  stopping_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

std::vector<Claimed> SimulatedAgents::claims() const {
  std::lock_guard lock(mutex_);
  return claims_;
}

// One slot: long-polls for one Run at a time, as an agent's free slot does.
void SimulatedAgents::slot(int index) {
  const Agent& agent = agents_[static_cast<std::size_t>(index)];
  const testing::HttpClient client(agent.port, agent.token);
  auto control_key = crypto::load_sign_public_key(options_.signing_key_file);
  SystemClock clock;
  protocol::ManifestVerifier verifier(*control_key, agent.id, clock);
  while (!stopping_) {
    auto r = client.post("/agent/v1/claim", json::object{{"freeSlots", 1}, {"waitSeconds", 2}});
    if (r.status != 200u || !r.json.is_object()) {
      ++failed_calls_;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    for (const auto& job : r.json.at("jobs").as_array()) {
      const SteadyTime at = std::chrono::steady_clock::now();
      const auto& signed_manifest = job.at("manifest").as_object();
      auto manifest = verifier.verify(
          {json::value_to<std::string>(signed_manifest.at("payload")),
           json::value_to<std::string>(signed_manifest.at("signature"))});
      if (!manifest) {
        ++failed_calls_;
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        claims_.push_back({manifest->run_id, manifest->attempt, index, at});
      }
      std::this_thread::sleep_for(options_.work);
      auto done = client.post(
          "/agent/v1/runs/" + manifest->run_id + "/complete",
          json::object{{"leaseToken", job.at("leaseToken")}, {"attempt", manifest->attempt},
                       {"status", "succeeded"}, {"hasChanges", false}});
      if (done.status == 200u)
        ++completed_;
      else
        ++failed_calls_;
    }
  }
}

}  // namespace takosumi::bench
