#pragma once
// A blocking HTTP/1.1 client for tests, talking JSON to takosumi-control on loopback.
#include <boost/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace takosumi::testing {

struct JsonResponse {
  unsigned status = 0;
  std::string body;
  boost::json::value json;  // null when the body is not JSON
};

class HttpClient {
 public:
  HttpClient(unsigned short port, std::string bearer) : port_(port), bearer_(std::move(bearer)) {}
  using Headers = std::vector<std::pair<std::string, std::string>>;
  JsonResponse request(const std::string& method, const std::string& target,
                       const std::string& body = "", const Headers& headers = {}) const;
  JsonResponse get(const std::string& target) const { return request("GET", target); }
  JsonResponse post(const std::string& target, const boost::json::value& body) const {
    return request("POST", target, boost::json::serialize(body));
  }
  JsonResponse put(const std::string& target, const boost::json::value& body) const {
    return request("PUT", target, boost::json::serialize(body));
  }

 private:
  unsigned short port_;
  std::string bearer_;
};

}  // namespace takosumi::testing
