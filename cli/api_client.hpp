#pragma once
// The public API as the CLI calls it: one blocking JSON exchange at a time over the product's own
// transport (net::BeastTransport, so TLS is verified exactly as the agent verifies it). A non-2xx
// answer becomes an ApiError with the control plane's stable code and message.
#include <boost/json/value.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "cli/cli_settings.hpp"
#include "common/error.hpp"

namespace takosumi::net {
class BeastTransport;
struct HttpRequest;
}

namespace takosumi::cli {

// How the CLI ends (docs/cli.md "Exit codes").
enum class Exit : int {
  ok = 0,
  failure = 1,         // the CLI's own problem: bad flags, an unreadable file
  changes = 2,         // plan or drift check: there are changes (tofu plan -detailed-exitcode)
  run_failed = 3,      // the Run ended failed
  run_cancelled = 4,   // the Run ended cancelled
  refused = 5,         // the control plane refused the request (4xx: invalid, forbidden, conflict…)
  unreachable = 6,     // no answer: network, TLS, or the control plane's 5xx
};

struct ApiError {
  Error error;
  unsigned status = 0;  // 0: no HTTP answer
  Exit exit() const;
};

class ApiClient {
 public:
  static Result<ApiClient> make(Settings settings);
  ~ApiClient();
  ApiClient(ApiClient&&) noexcept;

  std::expected<boost::json::value, ApiError> get(const std::string& target) const;
  std::expected<boost::json::value, ApiError> post(const std::string& target,
                                                   const boost::json::value& body) const;
  std::expected<boost::json::value, ApiError> put(const std::string& target,
                                                  const boost::json::value& body) const;
  std::expected<boost::json::value, ApiError> patch(const std::string& target,
                                                    const boost::json::value& body) const;
  // POST with a JSON body whose 2xx answer is a file (an offline Run bundle), written to `to`.
  std::expected<void, ApiError> post_for_file(const std::string& target,
                                              const boost::json::value& body,
                                              const std::filesystem::path& to) const;
  // POST with a file as the body (a result bundle); the answer is JSON.
  std::expected<boost::json::value, ApiError> post_file(const std::string& target,
                                                        const std::filesystem::path& from) const;

 private:
  ApiClient(Settings settings, std::unique_ptr<net::BeastTransport> transport);
  std::expected<boost::json::value, ApiError> call(const std::string& method,
                                                   const std::string& target,
                                                   const std::string& body) const;
  std::expected<boost::json::value, ApiError> exchange(net::HttpRequest req) const;
  Settings settings_;
  std::unique_ptr<net::BeastTransport> transport_;
};

}  // namespace takosumi::cli
