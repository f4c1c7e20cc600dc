#include "protocol/run_policy.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::protocol {
namespace {

constexpr std::size_t kMaxProviders = 256;

Result<std::optional<std::vector<std::string>>> providers(const json::object& o,
                                                         std::string_view key) {
  std::vector<std::string> out;
  auto list = get_optional_array(o, key);
  if (!list) return std::unexpected(list.error());
  if (!*list) return std::nullopt;
  if ((*list)->size() > kMaxProviders)
    return fail(errc::kInvalidArgument, std::string(key) + ": at most 256 providers");
  for (const auto& v : **list) {
    if (!v.is_string() || !is_qualified_provider_address(v.get_string()))
      return fail(errc::kInvalidArgument,
                  std::string(key) + ": each entry must be a fully qualified provider source "
                                     "address such as registry.opentofu.org/hashicorp/aws");
    out.emplace_back(v.get_string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return std::optional(std::move(out));
}

json::array to_array(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

}  // namespace

std::string_view to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::full: return "default";
    case NetworkMode::none: return "none";
    case NetworkMode::unset: break;
  }
  return "";
}

std::optional<NetworkMode> network_mode_from_string(std::string_view text) {
  if (text.empty()) return NetworkMode::unset;
  if (text == "default") return NetworkMode::full;
  if (text == "none") return NetworkMode::none;
  return std::nullopt;
}

RunPolicy combine(const RunPolicy& pool, const RunPolicy& run) {
  RunPolicy out;
  if (!pool.allowed_providers) {
    out.allowed_providers = run.allowed_providers;
  } else if (!run.allowed_providers) {
    out.allowed_providers = pool.allowed_providers;
  } else {
    out.allowed_providers.emplace();
    std::set_intersection(pool.allowed_providers->begin(), pool.allowed_providers->end(),
                          run.allowed_providers->begin(), run.allowed_providers->end(),
                          std::back_inserter(*out.allowed_providers));
  }
  std::set_union(pool.denied_providers.begin(), pool.denied_providers.end(),
                 run.denied_providers.begin(), run.denied_providers.end(),
                 std::back_inserter(out.denied_providers));
  out.allow_provisioners = pool.allow_provisioners && run.allow_provisioners;
  out.allow_external_data = pool.allow_external_data && run.allow_external_data;
  out.network = (pool.network == NetworkMode::none || run.network == NetworkMode::none)
                    ? NetworkMode::none
                    : NetworkMode::full;
  return out;
}

json::object to_json(const RunPolicy& p) {
  json::object o{{"deniedProviders", to_array(p.denied_providers)},
                 {"allowProvisioners", p.allow_provisioners},
                 {"allowExternalData", p.allow_external_data}};
  if (p.allowed_providers) o["allowedProviders"] = to_array(*p.allowed_providers);
  if (p.network != NetworkMode::unset) o["network"] = to_string(p.network);
  return o;
}

Result<RunPolicy> run_policy_from_json(const json::object& o) {
  RunPolicy p;
  auto allowed = providers(o, "allowedProviders");
  if (!allowed) return std::unexpected(allowed.error());
  auto denied = providers(o, "deniedProviders");
  if (!denied) return std::unexpected(denied.error());
  auto provisioners = get_bool_or(o, "allowProvisioners", false);
  if (!provisioners) return std::unexpected(provisioners.error());
  auto external = get_bool_or(o, "allowExternalData", false);
  if (!external) return std::unexpected(external.error());
  auto network = get_optional_string(o, "network", 16);
  if (!network) return std::unexpected(network.error());
  auto mode = network_mode_from_string(network->value_or(""));
  if (!mode) return fail(errc::kInvalidArgument, "network must be \"default\" or \"none\"");
  p.allowed_providers = std::move(*allowed);
  p.denied_providers = std::move(denied)->value_or(std::vector<std::string>{});
  p.allow_provisioners = *provisioners;
  p.allow_external_data = *external;
  p.network = *mode;
  return p;
}

}  // namespace takosumi::protocol
